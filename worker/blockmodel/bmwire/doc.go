// Package bmwire is the wire layer of the block model area: the request
// bodies of its routes as Go types with their decoders and validation, and
// the reader of update files (Parquet and CSV) with the processing checks of
// an update job.
//
// # Request bodies
//
// DecodeCreate, DecodeMetadataUpdate, DecodeUpdate, DecodeQuery and
// DecodeDelta read a body as the public Python client sends it: a null member
// means the member is absent (its default), numbers may be written 25 or
// 25.0, an empty body of a metadata update is {}, a missing type tag takes
// the client's default (size_options "regular"; file options "parquet"), a
// CSV column mapping may use either {file_column_name, column_title} or the
// older {csv_name, new_title}. Unknown members are ignored. Every failure of
// a body is listed in one *blockmodel.ValidationError, whose Problem is the
// 422 block-model-service/validation document carrying invalid-params.
//
// The vocabulary and the rules of the model are package blockmodel's, used
// here as they are: model kinds, data types, system columns, size options,
// rotation, coordinate reference system, column titles and units. What a
// check needs to know about a model (its kind, its columns) comes in
// through ModelInfo.
//
// # Update files
//
// Read streams an update file in batches of rows: each row is identified by
// its index columns (i, j, k and the kind's sub-block columns) or by its
// coordinates (x, y, z and, sub-blocked, dx, dy, dz), the index form winning
// when both are complete, matched to a row of the model through a
// blockmodel.Locator (the model's *blockmodel.Blocks),
// and its values are converted to the declared data types of the update's
// new and update columns. Every problem of the file (a row matching no
// block, a block matched twice, a value of the wrong type, a missing column)
// is collected; Read then returns a *FileError holding the first 10,000 of
// them, which renders the FAILED job's detail (quoting the first 20) and its
// error file (CSV row, i, j, k, message).
//
// A bad file never yields a partial result: the batches Read hands to its
// Sink are only usable when Read returns nil. The Collector sink chosen here
// buffers the matched rows and their values in memory during the one
// validating pass (for 10,000,000 Float64 rows: 80 MB of row numbers and
// 80 MB of values), and the caller writes the version only after Read
// succeeded. A Sink that spools to disk can be used instead.
package bmwire
