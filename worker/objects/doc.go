// Package objects is the worker's model of geoscience objects and their
// Parquet blobs (docs/objects.md).
//
// # Documents
//
// Decode reads an object document and dispatches on its "schema" member to a
// kind-specific view: Pointset, DownholeIntervals, Grid (regular and masked),
// Variogram or Distribution, for every schema version the issue names. The
// decoded JSON itself (numbers kept verbatim as json.Number) stays the source
// of truth, so members the worker does not model survive a round trip:
// WriteContinuous patches the one attribute it writes and nothing else.
// Numbers must be finite (NaN and Infinity tokens and overflowing literals are
// rejected with a NonFiniteError).
//
// # Attributes
//
// Attributes are addressed by expressions (locations.attributes[?name=='x'],
// cell_attributes[?key=='…'], cell_attributes[0], a bare name) or legacy
// element paths (/locations/attributes/@name=x); see ParseAttributeRef and
// Object.ResolveAttribute. Locations gives the world position of each row of
// the primary attribute list: points, interval mid points, grid cell centres
// or the active cells of a masked grid. Attribute lengths that do not match
// the geometry are errors naming the attribute.
//
// # Parquet blobs
//
// One Parquet file holds one array element: width top-level columns, length
// rows, keyed by the lowercase hex SHA-256 of the file bytes. TableWriter
// streams rows (row groups of 64k-128k rows, zstd or snappy) so large
// ensembles can be written tile by tile; ReadTable reads any conforming file
// (OPTIONAL or REQUIRED columns, plain, dictionary or byte-stream-split
// encodings, gzip, snappy or zstd) with parquet-go, and checks it against the
// JSON element, naming the element in errors. Arrow Go v15 is deliberately not
// used for reading: it returns zero rows for byte-stream-split columns.
//
// # Schemas
//
// Schemas registers every schema file under SchemaBaseURL + $id and validates
// documents with a draft 2020-12 validator (format assertions on).
// The schemas are embedded in the binary (package evoschemas, EmbeddedSchemas);
// OpenSchemas loads a directory instead when one is named (-schemas or
// $GEOSTAT_SCHEMAS_DIR).
package objects
