package objects

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/geostat-engine/geostat/worker/objects/evoschemas"
)

// SchemaBaseURL is the synthetic base under which every schema file is
// registered: its root-relative $id is appended (docs/objects.md 1.1).
const SchemaBaseURL = "https://schemas.local"

// SchemasDirEnv names the environment variable that overrides the embedded
// schemas with a directory (the evo-schemas directory or its schema
// subdirectory).
const SchemasDirEnv = "GEOSTAT_SCHEMAS_DIR"

// EmbeddedSchemasSource is what Schemas.Source reports for the schemas
// embedded in the binary (package evoschemas).
const EmbeddedSchemasSource = "embedded"

// EmbeddedSchemas loads the schemas embedded in the binary (package
// evoschemas).
func EmbeddedSchemas() (*Schemas, error) {
	return LoadSchemasFS(evoschemas.FS(), EmbeddedSchemasSource)
}

// OpenSchemas loads the schemas the worker validates with: those in dir when
// it is not empty, else those in $GEOSTAT_SCHEMAS_DIR when getenv (nil means
// os.Getenv) gives it, else the embedded set. A directory may be the
// evo-schemas directory or its schema subdirectory. There is no way to get
// no schemas: a directory that holds none is an error.
func OpenSchemas(dir string, getenv func(string) string) (*Schemas, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir == "" {
		dir = getenv(SchemasDirEnv)
	}
	if dir == "" {
		return EmbeddedSchemas()
	}
	sub, err := schemaSubdir(dir)
	if err != nil {
		return nil, err
	}
	return LoadSchemas(sub)
}

// schemaSubdir accepts either the evo-schemas directory or its schema/
// subdirectory and returns the latter.
func schemaSubdir(d string) (string, error) {
	for _, c := range []string{filepath.Join(d, "schema"), d} {
		if st, err := os.Stat(filepath.Join(c, "objects")); err == nil && st.IsDir() {
			abs, err := filepath.Abs(c)
			if err != nil {
				return "", err
			}
			return abs, nil
		}
	}
	return "", fmt.Errorf("schemas: %s holds no schema tree (objects/, components/, elements/); name the evo-schemas directory or its schema subdirectory (-schemas or %s), or set neither to use the embedded schemas", d, SchemasDirEnv)
}

// Schemas validates object documents against the geoscience object JSON
// schemas (draft 2020-12, format assertions on). Object schemas are compiled
// on first use; a Schemas is safe for concurrent use.
type Schemas struct {
	source   string
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	ids      map[string]bool
	compiled map[string]*jsonschema.Schema
}

// LoadSchemas registers every *.json file under dir as SchemaBaseURL + its
// $id.
func LoadSchemas(dir string) (*Schemas, error) {
	return LoadSchemasFS(os.DirFS(dir), dir)
}

// LoadSchemasFS registers every *.json file of fsys as SchemaBaseURL + its
// $id; source names the set in errors and in Source.
func LoadSchemasFS(fsys fs.FS, source string) (*Schemas, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	s := &Schemas{source: source, compiler: c, ids: map[string]bool{}, compiled: map[string]*jsonschema.Schema{}}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not a schema object", path)
		}
		id, _ := m["$id"].(string)
		if !strings.HasPrefix(id, "/") {
			return fmt.Errorf("%s: $id %q is not root-relative", path, id)
		}
		if err := c.AddResource(SchemaBaseURL+id, doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		s.ids[id] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading schemas from %s: %w", source, err)
	}
	if len(s.ids) == 0 {
		return nil, fmt.Errorf("loading schemas from %s: no schema files", source)
	}
	return s, nil
}

// Source returns where the schemas were loaded from: a directory, or
// EmbeddedSchemasSource.
func (s *Schemas) Source() string { return s.source }

// Has reports whether a schema with this $id is registered.
func (s *Schemas) Has(id string) bool { return s.ids[id] }

// SchemaError reports a document that fails validation. JSONPath is a JSON
// pointer into the document, SchemaPath the keyword path of the failing
// keyword. NotFound is set when the document names a schema that is not
// registered.
type SchemaError struct {
	Schema     string
	JSONPath   string
	SchemaPath []string
	Detail     string
	NotFound   bool
}

// Error implements error.
func (e *SchemaError) Error() string {
	if e.NotFound {
		return fmt.Sprintf("schema %q not found", e.Schema)
	}
	if e.JSONPath == "" {
		return fmt.Sprintf("invalid against %s: %s", e.Schema, e.Detail)
	}
	return fmt.Sprintf("invalid against %s at %s: %s", e.Schema, e.JSONPath, e.Detail)
}

// Validate validates a document (as decoded by DecodeJSON) against the schema
// its "schema" member names. Failures are *SchemaError.
func (s *Schemas) Validate(doc map[string]any) error {
	id, _ := doc["schema"].(string)
	if id == "" {
		return &SchemaError{JSONPath: "/schema", Detail: "missing or not a string"}
	}
	sch, err := s.compile(id)
	if err != nil {
		return err
	}
	err = sch.Validate(any(doc))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("validating against %s: %w", id, err)
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	se := &SchemaError{Schema: id, JSONPath: pointer(leaf.InstanceLocation), Detail: leaf.Error(),
		SchemaPath: schemaPath(leaf)}
	// The top-level message summarises every failure; keep it when the
	// first leaf alone would hide the rest.
	if len(ve.Causes) > 1 {
		se.Detail = ve.Error()
	}
	return se
}

func (s *Schemas) compile(id string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[id]; ok {
		return sch, nil
	}
	if !s.ids[id] {
		return nil, &SchemaError{Schema: id, NotFound: true}
	}
	sch, err := s.compiler.Compile(SchemaBaseURL + id)
	if err != nil {
		return nil, fmt.Errorf("compiling schema %s: %w", id, err)
	}
	s.compiled[id] = sch
	return sch, nil
}

// schemaPath renders the failing keyword's location as the schema file's $id
// followed by the keyword path tokens, e.g.
// ["/objects/pointset/1.3.0/pointset.schema.json", "unevaluatedProperties"].
func schemaPath(e *jsonschema.ValidationError) []string {
	loc := strings.TrimPrefix(e.SchemaURL, SchemaBaseURL)
	file, frag, _ := strings.Cut(loc, "#")
	out := []string{file}
	for _, tok := range strings.Split(frag, "/") {
		if tok != "" {
			out = append(out, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
		}
	}
	if e.ErrorKind != nil {
		out = append(out, e.ErrorKind.KeywordPath()...)
	}
	return out
}

func pointer(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(escapePointer(p))
	}
	return b.String()
}
