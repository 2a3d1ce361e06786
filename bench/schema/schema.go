// Package schema holds the JSON Schema (draft 2020-12) of the bench
// command's JSON output, bench-result.schema.json, and validates documents
// against it.
package schema

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// JSON is the schema document.
//
//go:embed bench-result.schema.json
var JSON []byte

// URL is the schema's $id.
const URL = "https://github.com/geostat-engine/geostat/bench/schema/bench-result.schema.json"

// Compile compiles the schema, with format assertions (date-time) on.
func Compile() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSON))
	if err != nil {
		return nil, fmt.Errorf("schema: parsing the embedded schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(URL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(URL)
	if err != nil {
		return nil, fmt.Errorf("schema: compiling: %w", err)
	}
	return s, nil
}

// Validate checks a bench result document against the schema.
func Validate(doc []byte) error {
	s, err := Compile()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("schema: the document is not JSON: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("schema: the document does not validate: %w", err)
	}
	return nil
}
