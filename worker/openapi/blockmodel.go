package openapi

// blockModelRoutes describes the routes of the block model area
// (worker/blockmodel/bmapi).
func blockModelRoutes() map[string]route {
	const (
		org = "/blockmodel/orgs/{org_id}"
		ws  = org + "/workspaces/{workspace_id}/block-models"
		bm  = ws + "/{bm_id}"
		rs  = bm + "/report-specifications"
		js  = "application/json"
	)
	out := map[string]route{
		"POST " + ws: {summary: "Create a block model (regular, fully-sub-blocked, flexible or variable-octree): version 1 and its block-model geoscience object are written in the call; editor", body: js,
			bodySchema: "BlockModelCreate", json: map[string]string{"201": "BlockModel"}},
		"GET " + ws:                    {summary: "List the workspace's block models (deleted, order_by, offset, limit)", json: map[string]string{"200": "BlockModelPage"}},
		"GET " + org + "/block-models": {summary: "List the block models of every workspace of the organisation where the caller has a role", json: map[string]string{"200": "BlockModelPage"}},
		"GET " + bm:                    {summary: "A block model (deleted=true reads a deleted one)", json: map[string]string{"200": "BlockModel"}},
		"PATCH " + bm:                  {summary: "Update a block model's metadata (name, description, CRS, size unit, fill_subblocks; an empty body is {}); editor", body: js, bodySchema: "BlockModelMetadataUpdate", json: map[string]string{"200": "BlockModel"}},
		"DELETE " + bm:                 {summary: "Soft-delete a block model and its geoscience object; its pending and queued jobs fail; editor"},
		"POST " + bm:                   {summary: "Restore a deleted block model (?deleted=false, True/False accepted), renamed <name> (n) on a clash; editor", json: map[string]string{"202": "BlockModel"}},
		"PATCH " + bm + "/blocks": {summary: "Start an update job (new, update, delete, rename, update_metadata columns; Parquet or CSV file): PUT the file to upload_url, then POST …/uploaded; editor", body: js,
			bodySchema: "BlockModelUpdate", json: map[string]string{"202": "BlockModelUpdateWithUrl"}},
		"POST " + bm + "/jobs/{job_id}/uploaded": {summary: "Confirm an update job's upload: PENDING_UPLOAD → QUEUED; editor", json: map[string]string{"201": "BlockModelJobURL"}},
		"GET " + bm + "/jobs/{job_id}": {summary: "A block model job: PENDING_UPLOAD (fresh upload_url), QUEUED, PROCESSING, COMPLETE (the version, or a fresh download_url of a query), FAILED (the problem and an error-file download_url)",
			json: map[string]string{"200": "BlockModelJob"}},
		"POST " + bm + "/blocks":                      {summary: "Query the blocks of a version into a Parquet or CSV file; the job's payload has its download_url", body: js, bodySchema: "BlockModelQuery", json: map[string]string{"200": "BlockModelQueryResult"}},
		"GET " + bm + "/versions":                     {summary: "A block model's versions, newest first (filter=latest, offset, limit)", json: map[string]string{"200": "BlockModelVersionPage"}},
		"GET " + bm + "/versions/{version_id}":        {summary: "A version by its uuid (include_changes=true adds changes)", json: map[string]string{"200": "BlockModelVersion"}},
		"POST " + bm + "/versions/{version_id}/delta": {summary: "Whether versions after this one changed columns in a box: 200 with the versions, 304 when none did", body: js, bodySchema: "BlockModelDeltaRequest", json: map[string]string{"200": "BlockModelDelta"}},
		"GET " + org + "/units":                       {summary: "The units table (unit_id, symbol, description, unit_type, conversion_factor)", json: map[string]string{"200": "BlockModelUnits"}},
	}
	for _, p := range []string{"POST " + rs, "GET " + rs, "GET " + rs + "/{report_specification_id}", "PATCH " + rs + "/{report_specification_id}",
		"DELETE " + rs + "/{report_specification_id}", "POST " + rs + "/{report_specification_id}/results",
		"GET " + rs + "/{report_specification_id}/results", "GET " + rs + "/{report_specification_id}/results/{report_result_id}"} {
		out[p] = route{summary: "Block model reports: not implemented (501)"}
	}
	for p, rt := range out {
		rt.tag = "block models"
		out[p] = rt
	}
	return out
}

// blockModelSchemas are the response schemas of the block model area.
func blockModelSchemas(ref func(string) map[string]any) map[string]any {
	obj := func(doc string, props map[string]any, required ...string) map[string]any {
		s := map[string]any{"type": "object", "description": doc, "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	t := func(typ, doc string) map[string]any { return map[string]any{"type": typ, "description": doc} }
	nullable := func(typ, doc string) map[string]any {
		return map[string]any{"type": []string{typ, "null"}, "description": doc}
	}
	uuid := map[string]any{"type": "string", "format": "uuid"}
	minmax := obj("a closed interval", map[string]any{"min": t("number", ""), "max": t("number", "")}, "min", "max")
	user := obj("a full user (id required)", map[string]any{"id": t("string", ""), "email": t("string", ""), "name": t("string", ""),
		"first_name": t("string", ""), "last_name": t("string", ""), "org_id": t("string", "")}, "id")
	column := obj("a column of a version: user columns have a UUID col_id, system columns their title", map[string]any{
		"col_id": t("string", ""), "title": t("string", ""), "data_type": t("string", "Boolean, Int8…Int64, UInt8…UInt64, Float16/32/64, Utf8, Date32, Timestamp"),
		"unit_id": nullable("string", ""), "group_uuid": nullable("string", ""), "tags": t("object", "free JSON, stored verbatim")}, "col_id", "title", "data_type")
	page := func(item, doc string) map[string]any {
		return obj(doc, map[string]any{"count": t("integer", ""), "limit": t("integer", ""), "offset": t("integer", ""), "total": t("integer", ""),
			"results": map[string]any{"type": "array", "items": ref(item)}}, "count", "limit", "offset", "total", "results")
	}
	unit := obj("a unit", map[string]any{"unit_id": t("string", ""), "symbol": t("string", ""), "description": t("string", ""),
		"unit_type":         map[string]any{"enum": []string{"LENGTH", "MASS", "VOLUME", "VALUE", "MASS_PER_VOLUME", "MASS_PER_MASS", "VOLUME_PER_VOLUME", "VALUE_PER_MASS"}},
		"conversion_factor": t("number", "")}, "unit_id", "symbol", "unit_type", "conversion_factor")
	versionPage := page("BlockModelVersion", "a page of versions")
	versionPage["properties"].(map[string]any)["referenced_units"] = map[string]any{"type": "array", "items": unit}
	return map[string]any{
		"BlockModel": obj("a block model record", map[string]any{
			"bm_uuid": uuid, "name": t("string", "3–100 characters, no / or \\"), "description": nullable("string", "≤ 500 characters"),
			"org_uuid": uuid, "workspace_id": uuid,
			"model_origin":                obj("the model's minimum corner", map[string]any{"x": t("number", ""), "y": t("number", ""), "z": t("number", "")}),
			"block_rotation":              map[string]any{"type": "array", "items": obj("a clockwise rotation", map[string]any{"axis": map[string]any{"enum": []string{"x", "y", "z"}}, "angle": t("number", "")})},
			"normalized_rotation":         map[string]any{"type": "array", "items": t("number", ""), "minItems": 3, "maxItems": 3, "description": "[dip_azimuth, dip, pitch]"},
			"size_options":                t("object", "model_type regular (n_blocks, block_size) or fully-sub-blocked, flexible, variable-octree (n_parent_blocks, n_subblocks_per_parent, parent_block_size)"),
			"bbox":                        obj("world bounding box", map[string]any{"x_minmax": minmax, "y_minmax": minmax, "z_minmax": minmax}),
			"coordinate_reference_system": nullable("string", "EPSG:<code> or WKT"), "size_unit_id": nullable("string", "a LENGTH unit"),
			"fill_subblocks": t("boolean", ""), "geoscience_object_id": uuid,
			"created_at": map[string]any{"type": "string", "format": "date-time"}, "created_by": user,
			"last_updated_at": map[string]any{"type": "string", "format": "date-time"}, "last_updated_by": user,
			"job_url": t("string", "create only: the create job (COMPLETE)"),
		}, "bm_uuid", "name", "org_uuid", "workspace_id", "model_origin", "size_options", "geoscience_object_id"),
		"BlockModelPage": page("BlockModel", "a page of block models"),
		"BlockModelVersion": obj("a version of a block model", map[string]any{
			"version_id": t("integer", "1, 2, 3…"), "version_uuid": uuid, "parent_version_id": t("integer", "0 for the first"),
			"base_version_id": nullable("integer", ""), "bm_uuid": uuid, "comment": t("string", ""),
			"created_at": map[string]any{"type": "string", "format": "date-time"}, "created_by": user,
			"bbox":                  nullable("object", "the parent-index box the version wrote {i_minmax, j_minmax, k_minmax}"),
			"geoscience_version_id": nullable("string", "the linked object's version written for this version"),
			"mapping":               obj("every column", map[string]any{"columns": map[string]any{"type": "array", "items": column}, "groups": t("array", "always empty")}),
			"changes":               t("object", "include_changes=true: blocks_uploaded, total_blocks, update_type, columns {new, deleted, updated, renamed, metadata_updated}"),
		}, "version_id", "version_uuid", "bm_uuid", "mapping"),
		"BlockModelVersionPage": versionPage,
		"BlockModelJob": obj("a block model job", map[string]any{
			"job_status": map[string]any{"enum": []string{"PENDING_UPLOAD", "QUEUED", "PROCESSING", "COMPLETE", "FAILED"}},
			"payload":    t("object", "PENDING_UPLOAD {upload_url}; COMPLETE a version, or {download_url} of a query; FAILED {type, title, status, detail, download_url}; null otherwise"),
		}, "job_status", "payload"),
		"BlockModelJobURL": obj("the job's URL", map[string]any{"job_url": t("string", "")}, "job_url"),
		"BlockModelUpdateWithUrl": obj("an update job started", map[string]any{
			"job_url": t("string", ""), "job_uuid": uuid, "upload_url": nullable("string", "signed, valid 30 minutes; null when the update reads no file"),
			"version_uuid": uuid, "changes": t("object", "the request with its defaults"),
		}, "job_url", "job_uuid", "upload_url", "version_uuid", "changes"),
		"BlockModelQueryResult": obj("a query queued", map[string]any{
			"bm_uuid": uuid, "version_id": t("integer", ""), "version_uuid": uuid, "bbox": t("object", "the box queried"),
			"columns": map[string]any{"type": "array", "items": t("string", "")}, "mapping": t("object", "the version's columns"),
			"job_url": t("string", "the query job: its payload has the download_url once COMPLETE"),
		}, "bm_uuid", "version_id", "version_uuid", "columns", "job_url"),
		"BlockModelDelta": obj("the versions that changed", map[string]any{
			"new_deltas": map[string]any{"type": "array", "items": uuid}, "update_deltas": map[string]any{"type": "array", "items": uuid},
			"delete_deltas": map[string]any{"type": "array", "items": uuid}, "version_data": map[string]any{"type": "array", "items": ref("BlockModelVersion")},
		}, "new_deltas", "update_deltas", "delete_deltas"),
		"BlockModelUnits": map[string]any{"type": "array", "items": unit},
		"BlockModelCreate": obj("a new block model; null members are absent", map[string]any{
			"name":                        nullable("string", "3–100 characters after trimming, no / or \\, unique in the workspace (case-insensitively)"),
			"description":                 nullable("string", "≤ 500 characters"),
			"comment":                     nullable("string", "the comment of version 1, ≤ 250 characters"),
			"coordinate_reference_system": nullable("string", "EPSG:<1024…32767> or WKT, ≤ 10,000 characters"),
			"size_unit_id":                nullable("string", "a LENGTH unit of GET …/units"),
			"fill_subblocks":              nullable("boolean", "default of an update's fill_subblocks"),
			"object_path":                 nullable("string", "folder of the linked object (<object_path>/<name>.json)"),
			"model_origin":                obj("the model's minimum corner", map[string]any{"x": t("number", ""), "y": t("number", ""), "z": t("number", "")}, "x", "y", "z"),
			"block_rotation":              map[string]any{"type": []string{"array", "null"}, "maxItems": 3, "items": obj("a clockwise rotation", map[string]any{"axis": map[string]any{"enum": []string{"x", "y", "z"}}, "angle": t("number", "in (−360, 360)")}, "axis", "angle")},
			"size_options":                t("object", "model_type (default regular): regular {n_blocks {nx, ny, nz}, block_size {x, y, z}}; fully-sub-blocked, flexible, variable-octree {n_parent_blocks, n_subblocks_per_parent, parent_block_size}"),
		}, "name", "model_origin", "size_options"),
		"BlockModelMetadataUpdate": obj("metadata to change; an empty body is {}, null members are unchanged", map[string]any{
			"name": nullable("string", ""), "description": nullable("string", ""), "coordinate_reference_system": nullable("string", ""),
			"size_unit_id": nullable("string", ""), "fill_subblocks": nullable("boolean", ""),
		}),
		"BlockModelUpdate": obj("an update job's request", map[string]any{
			"columns": obj("column operations by title", map[string]any{
				"new":             map[string]any{"type": "array", "items": obj("a new column", map[string]any{"title": t("string", ""), "data_type": t("string", ""), "unit_id": nullable("string", ""), "tags": nullable("object", "")}, "title", "data_type")},
				"update":          map[string]any{"type": "array", "items": t("string", "a title")},
				"delete":          map[string]any{"type": "array", "items": t("string", "a title")},
				"rename":          map[string]any{"type": "array", "items": obj("a rename", map[string]any{"title": t("string", ""), "new_title": t("string", "")}, "title", "new_title")},
				"update_metadata": map[string]any{"type": "array", "items": obj("a column's metadata", map[string]any{"title": t("string", ""), "values": t("object", "title, unit_id (null clears), tags")}, "title", "values")},
			}),
			"update_type":     map[string]any{"enum": []any{"merge", "replace", nil}},
			"geometry_change": nullable("boolean", "sub-blocked kinds only"),
			"fill_subblocks":  nullable("boolean", ""),
			"input_options":   t("object", "{file_format: parquet} (default) or {file_format: csv, delimiter, decimal_char, quote_char, skip_rows, skip_rows_after_headers}, with column_name_mapping [{file_column_name, column_title}] or [{csv_name, new_title}]"),
			"comment":         nullable("string", "≤ 250 characters"),
		}),
		"BlockModelQuery": obj("a query", map[string]any{
			"columns":          map[string]any{"type": "array", "items": t("string", "a title, a col_id, or * for every user column")},
			"geometry_columns": map[string]any{"enum": []any{"indices", "coordinates", nil}},
			"bbox":             nullable("object", "{i_minmax, j_minmax, k_minmax} (inclusive indices) or {x_minmax, y_minmax, z_minmax} (world coordinates, by centroid)"),
			"version_uuid":     map[string]any{"type": []string{"string", "null"}, "format": "uuid"},
			"output_options":   nullable("object", "{file_format: parquet|csv, delimiter, column_headers: name|id, exclude_null_rows}"),
		}, "columns"),
		"BlockModelDeltaRequest": obj("a delta check", map[string]any{
			"bbox":             t("object", "an IJK or XYZ box"),
			"columns":          map[string]any{"type": "array", "items": t("string", "a col_id, or *")},
			"end_version_uuid": map[string]any{"type": []string{"string", "null"}, "format": "uuid"},
			"verbose":          nullable("boolean", "adds version_data"),
		}, "bbox", "columns"),
	}
}
