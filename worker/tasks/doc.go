// Package tasks runs the worker's geostatistics compute tasks: it decodes
// the request shapes (the seed's /geostat routes with legacy object
// references and element paths, and the current client's /geostatistics
// routes with object URLs and attribute expressions), validates every field
// before a job exists (invalid fields are reported together, each named),
// loads the source objects, calls the library (neighbor, kriging, tbsim,
// geostat/ties, geostat/report, geostat/declus, geostat/ensemble,
// geostat/variogram, geostat.BuildDistribution) and writes the result as a
// new version of the target object (writers of one object take turns; see
// commit in write.go) or, for continuous-distribution and variogram-model,
// as new objects.
//
// The request members of every task are declared once, in rule tables
// (name, JSON type, required, bounds, default, allowed values, nested
// members): the decoder reads its rules from them and RequestSchema renders
// them as the JSON Schemas of the worker's OpenAPI document, so the
// document describes exactly what the decoder accepts.
//
// Block models (the block-model geoscience object, which holds no data)
// are sources of knn, idw, kriging and continuous-distribution and targets
// of knn, idw and kriging: the object leads to its model in the embedded
// block model area (Env.BlockModels), whose columns are read as values and
// filters and into which a job writes one column as one new model version
// and one new object version (blockmodel.go; docs/api.md 6.1).
//
// Errors are classified where they arise (see package problem): invalid
// fields are 422 validation errors; an object whose document or data cannot
// be used (an attribute length that differs from the geometry, a grid whose
// cell count overflows, corrupt Parquet, a row count that differs from the
// declared length, no finite value to estimate from) is 422 invalid-data
// naming the field, the object and the member, at submit when the documents
// suffice and otherwise as the job's error. Each submit is estimated (memory
// while running, disk for the output) and refused with 422 when it could
// never run; the job manager admits the rest beside the running jobs.
package tasks
