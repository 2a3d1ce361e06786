// Package store keeps geoscience objects, their versions and their Parquet
// blobs behind one interface, Store, with two implementations:
//
//   - Embedded, the default: everything under one data directory, every write
//     atomic (temporary file, fsync, rename, directory fsync), versions never
//     overwritten, version ids nanosecond timestamps strictly increasing per
//     object, paths case-insensitive and case-preserving, soft delete and
//     restore (a taken path gets " (1)", " (2)", ...), blobs keyed by SHA-256
//     and checked against their bytes;
//   - Remote, a client of a real Geoscience Object API (the same paths the
//     worker serves) with a bearer token.
//
// Errors are *Error values carrying the HTTP status, the seed 7.3 problem type
// suffix, the title and the extra members (json_path, missing, existing_id,
// ...), so the HTTP layer renders them directly and the remote client turns
// problem responses back into the same values.
package store
