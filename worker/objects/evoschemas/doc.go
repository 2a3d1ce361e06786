// Package evoschemas embeds the geoscience-object JSON schemas (a subset of
// Seequent's evo-schemas, Apache-2.0; see README.md, LICENSE.md and NOTICE in
// this directory) so that the worker validates every object it stores with
// nothing beside the repository.
package evoschemas

import (
	"embed"
	"io/fs"
)

//go:embed schema
var files embed.FS

// FS returns the schema tree: objects/, components/ and elements/ at its
// root, each schema file under the path its $id names.
func FS() fs.FS {
	sub, err := fs.Sub(files, "schema")
	if err != nil {
		// fs.Sub fails only for an invalid path; "schema" is valid.
		panic("evoschemas: " + err.Error())
	}
	return sub
}
