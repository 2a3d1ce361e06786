// Package bmjob is the processing engine of the block model area: it turns
// the requests package bmwire decodes into reads and writes of the column
// store of package bmstore, over the geometry of package blockmodel. It does
// no HTTP: the route layer (its job runner) and the compute tasks call it.
//
//   - Rows returns the rows of a version as *blockmodel.Blocks: the whole
//     parents of a regular model (or of a sub-blocked model never split),
//     else the sub-block identity the version stores in its internal columns
//     (InternalColumns).
//   - ApplyUpdate runs an update job (A.7.3, A.7.4) on the model's latest
//     version: new, update, delete, rename and update_metadata columns,
//     merge or replace, Parquet or CSV files with rows given by indices or
//     coordinates, and geometry changes of sub-blocked models. A bad file
//     fails with a *bmwire.FileError and writes nothing.
//   - Query streams a query (A.8) of one version to Parquet or CSV, batch by
//     batch, reading only the columns asked for.
//   - ReadFloat64, ReadCategories and WriteColumn are what compute tasks
//     need (A.14.3–A.14.5): a column as numbers or as categories, and one
//     result column written as a new version through the code of an update.
//
// # Memory
//
// Everything streams in batches except what a step needs whole: the rows of
// a sub-blocked version (about 13 bytes a row), an update file's values
// when they cannot be streamed, and during a geometry change one old column
// at a time. An update of one column whose file lists its rows in row order
// (as the public client and a query write them) is written while it is
// read, the reading and the writing in two goroutines; another file is read
// into one row-ordered buffer per column first (8 bytes a row for Float64).
// A query holds one batch of each output column.
//
// Every function honours its context between batches. Errors that are the
// caller's input are typed: *blockmodel.ValidationError (a 422 naming the
// members), *bmwire.FileError (a failed update job with its error file) and
// the sentinel errors of this package, which callers test with errors.Is.
package bmjob
