package bmwire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var model = ModelInfo{Kind: blockmodel.Regular, N: [3]int{4, 3, 2}, Columns: []blockmodel.Column{
	{ColID: "c1", Title: "cu", DataType: blockmodel.Float64}, {ColID: "c2", Title: "au", DataType: blockmodel.Float64},
	{ColID: "c3", Title: "domain", DataType: blockmodel.Utf8}}}

// params returns the invalid-params names of err.
func params(t *testing.T, err error) []string {
	t.Helper()
	var ve *blockmodel.ValidationError
	require.ErrorAs(t, err, &ve)
	var names []string
	for _, p := range ve.Params {
		names = append(names, p.Name)
	}
	return names
}

// The client's create body: nulls for every member left out, fill_subblocks
// false, integers for floats.
func TestCreateClientBody(t *testing.T) {
	body := `{"name": " Pit A ", "description": null, "object_path": null, "coordinate_reference_system": null,
	 "size_unit_id": null, "comment": null, "fill_subblocks": false, "lineage": null,
	 "model_origin": {"x": 1000, "y": 2000.5, "z": 300},
	 "block_rotation": [{"axis": "z", "angle": 45}, {"axis": "x", "angle": 30.0}],
	 "size_options": {"model_type": "regular", "n_blocks": {"nx": 4, "ny": 3, "nz": 2}, "block_size": {"x": 10, "y": 20, "z": 5}}}`
	c, err := DecodeCreate([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, "Pit A", c.Name)
	assert.Nil(t, c.Description)
	assert.Nil(t, c.CRS)
	assert.False(t, c.FillSubblocks)
	assert.Equal(t, blockmodel.XYZ{X: 1000, Y: 2000.5, Z: 300}, c.ModelOrigin)
	assert.Equal(t, []blockmodel.RotationItem{{Axis: "z", Angle: 45}, {Axis: "x", Angle: 30}}, c.BlockRotation)
	assert.Equal(t, blockmodel.Regular, c.SizeOptions.ModelType)
}

// A size_options without model_type is a regular one (A.15b item 6).
func TestCreateMissingModelType(t *testing.T) {
	body := `{"name": "abc", "model_origin": {"x": 0, "y": 0, "z": 0}, "block_rotation": [],
	 "size_options": {"n_blocks": {"nx": 1, "ny": 1, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}}}`
	c, err := DecodeCreate([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, blockmodel.RegularSize(blockmodel.Size3D{NX: 1, NY: 1, NZ: 1}, blockmodel.XYZ{X: 1, Y: 1, Z: 1}), c.SizeOptions)
}

func TestCreateListsEveryFailure(t *testing.T) {
	body := `{"name": "a/", "description": "` + strings.Repeat("d", 501) + `", "comment": 3,
	 "coordinate_reference_system": "EPSG:99", "size_unit_id": "g/t", "object_path": "a/../b",
	 "model_origin": {"x": 0, "y": "1"},
	 "block_rotation": [{"axis": "z", "angle": 360}, {"axis": "z", "angle": 1}, {"axis": "w", "angle": 0}, {"axis": "x", "angle": 0}],
	 "size_options": {"model_type": "hexagonal"}}`
	_, err := DecodeCreate([]byte(body))
	assert.ElementsMatch(t, []string{"name", "name", "description", "comment", "coordinate_reference_system",
		"size_unit_id", "object_path", "model_origin.y", "model_origin.z", "block_rotation",
		"block_rotation[0].angle", "block_rotation[1].axis", "block_rotation[2].axis", "size_options.model_type"}, params(t, err))
	var ve *blockmodel.ValidationError
	require.ErrorAs(t, err, &ve)
	p := ve.Problem()
	assert.Equal(t, 422, p.Status)
	assert.Equal(t, blockmodel.TypeValidation, p.Type)
	assert.Len(t, p.Extra["invalid-params"], len(ve.Params))
	_, err = DecodeCreate([]byte(`{}`))
	assert.ElementsMatch(t, []string{"name", "model_origin", "size_options"}, params(t, err))
	_, err = DecodeCreate([]byte(`[1]`))
	assert.Equal(t, []string{"body"}, params(t, err))
}

func TestCreateCRS(t *testing.T) {
	for crs, ok := range map[string]bool{"EPSG:32755": true, "EPSG:1023": false, `PROJCS["x",GEOGCS["y"]]`: true, "metres": false} {
		body := fmt.Sprintf(`{"name": "abc", "model_origin": {"x": 0, "y": 0, "z": 0}, "size_options": {"n_blocks": {"nx": 1, "ny": 1, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}}, "coordinate_reference_system": %q}`, crs)
		_, err := DecodeCreate([]byte(body))
		assert.Equal(t, ok, err == nil, crs)
	}
}

// An empty metadata update has no body (A.15b item 5); nulls leave members
// unchanged.
func TestMetadataUpdateEmptyBodyAndNulls(t *testing.T) {
	u, err := DecodeMetadataUpdate(nil)
	require.NoError(t, err)
	assert.Equal(t, &MetadataUpdate{}, u)
	u, err = DecodeMetadataUpdate([]byte(`{"name": null, "description": null, "fill_subblocks": true, "size_unit_id": "ft"}`))
	require.NoError(t, err)
	assert.Nil(t, u.Name)
	assert.Nil(t, u.Description)
	assert.True(t, *u.FillSubblocks)
	assert.Equal(t, "ft", *u.SizeUnitID)
	_, err = DecodeMetadataUpdate([]byte(`{"name": "x", "size_unit_id": "g/t", "fill_subblocks": "yes"}`))
	assert.ElementsMatch(t, []string{"name", "size_unit_id", "fill_subblocks"}, params(t, err))
}

// Query booleans spelled True/False (A.15b item 1).
func TestParseBool(t *testing.T) {
	for _, s := range []string{"False", "false", "FALSE", "0"} {
		b, err := ParseBool("deleted", s)
		require.NoError(t, err)
		assert.False(t, b)
	}
	b, err := ParseBool("run_now", "True")
	require.NoError(t, err)
	assert.True(t, b)
	_, err = ParseBool("deleted", "maybe")
	var qe *QueryError
	require.ErrorAs(t, err, &qe)
	assert.Equal(t, "deleted", qe.Params[0].Name)
	assert.Equal(t, 400, qe.Problem().Status)
	assert.Equal(t, TypeInvalidQuery, qe.Problem().Type)
}

// The client's data update: replace, geometry_change/fill_subblocks/comment
// and a new column's unit_id null, to a regular model (A.15b items 2, 3, 8).
func TestUpdateClientBody(t *testing.T) {
	body := `{"columns": {"new": [{"title": "cu_pct", "data_type": "Float64", "unit_id": null, "tags": null, "group": null}],
	 "update": ["cu"], "delete": [], "rename": [], "update_metadata": null},
	 "update_type": "replace", "geometry_change": null, "fill_subblocks": null, "comment": null,
	 "input_options": null, "lineage": null}`
	u, err := DecodeUpdate([]byte(body), model)
	require.NoError(t, err)
	assert.Equal(t, Replace, u.UpdateType)
	assert.Nil(t, u.GeometryChange)
	assert.Equal(t, FormatParquet, u.Input.Format)
	assert.True(t, u.NeedsFile())
	assert.Equal(t, []ValueColumn{{"cu_pct", blockmodel.Float64}, {"cu", blockmodel.Float64}}, u.ValueColumns(model))
	ch, err := json.Marshal(u.Changes())
	require.NoError(t, err)
	assert.JSONEq(t, `{"columns": {"new": [{"title": "cu_pct", "data_type": "Float64", "unit_id": null}],
	 "update": ["cu"], "delete": [], "rename": []}, "update_type": "replace", "geometry_change": null,
	 "fill_subblocks": null, "comment": ""}`, string(ch))
	// Defaults: merge; rename alone.
	u, err = DecodeUpdate([]byte(`{"columns": {"new": [], "update": [], "delete": [], "rename": [{"title": "cu", "new_title": "cu_old"}]}}`), model)
	require.NoError(t, err)
	assert.Equal(t, Merge, u.UpdateType)
	assert.False(t, u.NeedsFile())
}

// A non-null geometry_change on a regular model is refused; null is not.
func TestUpdateGeometryChangeRegular(t *testing.T) {
	_, err := DecodeUpdate([]byte(`{"columns": {"update": ["cu"]}, "geometry_change": false}`), model)
	assert.Equal(t, []string{"geometry_change"}, params(t, err))
	sub := model
	sub.Kind = blockmodel.FullySubBlocked
	_, err = DecodeUpdate([]byte(`{"columns": {"update": ["cu"]}, "geometry_change": true, "fill_subblocks": true, "update_type": "replace"}`), sub)
	assert.Equal(t, []string{"fill_subblocks"}, params(t, err), "fill_subblocks needs merge")
	_, err = DecodeUpdate([]byte(`{"columns": {"update": ["cu"]}, "geometry_change": true, "fill_subblocks": true, "update_type": "merge"}`), sub)
	require.NoError(t, err)
}

// Metadata updates: unit_id null clears, tags null leaves, tags {} clears
// (A.15b item 4).
func TestUpdateMetadataNulls(t *testing.T) {
	body := `{"columns": {"new": [], "update": [], "delete": [], "rename": [], "update_metadata": [
	 {"title": "cu", "values": {"unit_id": null, "tags": null, "group": null, "title": null}},
	 {"title": "au", "values": {"tags": {}}}]}}`
	u, err := DecodeUpdate([]byte(body), model)
	require.NoError(t, err)
	m := u.Columns.UpdateMetadata
	require.Len(t, m, 2)
	assert.True(t, m[0].UnitSet)
	assert.Nil(t, m[0].UnitID)
	assert.Nil(t, m[0].Tags)
	assert.Nil(t, m[0].NewTitle)
	assert.False(t, m[1].UnitSet)
	assert.Equal(t, "{}", string(m[1].Tags))
}

func TestUpdateCombinationRules(t *testing.T) {
	sub := model
	sub.Kind = blockmodel.Flexible
	cases := []struct {
		name, body string
		m          ModelInfo
		want       []string
	}{
		{"unknown titles", `{"columns": {"update": ["zn"], "delete": ["pb"], "rename": [{"title": "ag", "new_title": "x1"}]}}`, model,
			[]string{"columns.update[0]", "columns.delete[0]", "columns.rename[0].title", "columns.rename"}},
		{"new exists", `{"columns": {"new": [{"title": "CU", "data_type": "Float64"}]}}`, model, []string{"columns.new[0].title"}},
		{"system columns", `{"columns": {"new": [{"title": "x", "data_type": "Float64"}], "update": ["i"], "delete": ["version_id"]}}`, model,
			[]string{"columns.new[0].title", "columns.update[0]", "columns.delete[0]"}},
		{"bad type, unit, title", `{"columns": {"new": [{"title": "a/b", "data_type": "Decimal", "unit_id": "furlong", "group": "g"}]}}`, model,
			[]string{"columns.new[0].title", "columns.new[0].data_type", "columns.new[0].unit_id", "columns.new[0].group"}},
		{"duplicates", `{"columns": {"update": ["cu", "cu"], "new": [{"title": "n", "data_type": "Int8"}, {"title": "N", "data_type": "Int8"}]}}`, model,
			[]string{"columns.update[1]", "columns.new[1].title"}},
		{"two lists", `{"columns": {"update": ["cu"], "delete": ["cu"]}}`, model, []string{"columns.delete[0]"}},
		{"rename not alone", `{"columns": {"delete": ["au"], "rename": [{"title": "cu", "new_title": "cu2"}]}}`, model, []string{"columns.rename"}},
		{"rename clash", `{"columns": {"rename": [{"title": "cu", "new_title": "AU"}]}}`, model, []string{"columns.rename[0].new_title"}},
		{"rename swap", `{"columns": {"rename": [{"title": "cu", "new_title": "au"}, {"title": "au", "new_title": "cu"}]}}`, model, nil},
		{"metadata with update", `{"columns": {"update": ["cu"], "update_metadata": [{"title": "cu", "values": {"unit_id": "g/t"}}]}}`, model, nil},
		{"metadata geometry change", `{"columns": {"update": ["cu"], "update_metadata": [{"title": "au", "values": {}}]}, "geometry_change": true}`, sub,
			[]string{"columns.update_metadata[0].title"}},
		{"nothing", `{"columns": {"new": [], "update": [], "delete": [], "rename": []}}`, model, []string{"columns"}},
		{"no columns", `{"update_type": "upsert"}`, model, []string{"update_type", "columns"}},
		{"groups", `{"columns": {"update": ["cu"]}, "groups": {"new": [{"title": "g"}]}}`, model, []string{"groups"}},
		{"empty groups", `{"columns": {"update": ["cu"]}, "groups": {"new": [], "delete": [], "update_metadata": []}}`, model, nil},
		{"datamine", `{"columns": {"update": ["cu"]}, "input_options": {"file_format": "datamine"}}`, model, []string{"input_options.file_format"}},
		{"comment", `{"columns": {"update": ["cu"]}, "comment": "` + strings.Repeat("c", 251) + `"}`, model, []string{"comment"}},
		{"csv options", `{"columns": {"update": ["cu"]}, "input_options": {"file_format": "csv", "delimiter": ";;", "skip_rows": -1, "quote_char": "'", "decimal_char": "'"}}`, model,
			[]string{"input_options.delimiter", "input_options.skip_rows"}},
		{"mapping", `{"columns": {"update": ["cu"]}, "input_options": {"column_name_mapping": [{"file_column_name": "CU", "column_title": "zn"}]}}`, model,
			[]string{"input_options.column_name_mapping[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeUpdate([]byte(c.body), c.m)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			assert.ElementsMatch(t, c.want, params(t, err))
		})
	}
}

// Both CSV mapping shapes, a missing file_format and counts written as
// floats (A.15b items 6, 7, 9).
func TestUpdateInputOptionsForms(t *testing.T) {
	body := `{"columns": {"new": [{"title": "cu_pct", "data_type": "Float64"}], "update": ["au"]},
	 "input_options": {"file_format": "csv", "delimiter": ";", "decimal_char": ",", "quote_char": "'",
	  "skip_rows": 2.0, "skip_rows_after_headers": 1,
	  "column_name_mapping": [{"csv_name": "CU", "new_title": "cu_pct"}, {"file_column_name": "AU", "column_title": "au"}]}}`
	u, err := DecodeUpdate([]byte(body), model)
	require.NoError(t, err)
	assert.Equal(t, InputOptions{Format: FormatCSV, Delimiter: ';', DecimalChar: ',', QuoteChar: '\'', SkipRows: 2,
		SkipRowsAfterHeaders: 1, Mapping: []Mapping{{"CU", "cu_pct"}, {"AU", "au"}}}, u.Input)
	u, err = DecodeUpdate([]byte(`{"columns": {"update": ["au"]}, "input_options": {"column_name_mapping": [{"file_column_name": "AU", "column_title": "au"}]}}`), model)
	require.NoError(t, err)
	assert.Equal(t, FormatParquet, u.Input.Format)
	_, err = DecodeUpdate([]byte(`{"columns": {"update": ["au"]}, "input_options": {"file_format": "csv", "skip_rows": 2.5}}`), model)
	assert.Equal(t, []string{"input_options.skip_rows"}, params(t, err))
}

// The client's query: bbox and version_uuid null; the SDK's coordinates
// and id headers; A.15b item 10 for geometry columns named in columns.
func TestQuery(t *testing.T) {
	q, err := DecodeQuery([]byte(`{"columns": ["*", "version_id", "x"], "bbox": null, "version_uuid": null,
	 "geometry_columns": "coordinates", "output_options": {"file_format": "parquet", "column_headers": "id", "exclude_null_rows": false}}`), model)
	require.NoError(t, err)
	assert.Equal(t, BBox{}, q.BBox)
	assert.Nil(t, q.VersionUUID)
	assert.Equal(t, OutputOptions{Format: FormatParquet, Delimiter: ',', ColumnHeaders: "id"}, q.Output)
	cols, err := q.ResolveColumns(model)
	require.NoError(t, err)
	assert.Equal(t, []string{"au", "cu", "domain", "version_id"}, cols)
	assert.Equal(t, []string{"x", "y", "z"}, q.GeometrySet(blockmodel.Regular))

	q, err = DecodeQuery([]byte(`{"columns": ["c3", "x", "i"], "output_options": {"delimiter": ";", "file_format": "csv"},
	 "bbox": {"i_minmax": {"min": 0, "max": 3.0}, "j_minmax": {"min": 0, "max": 2}, "k_minmax": {"min": 1, "max": 1}},
	 "version_uuid": "7d1e0000-0000-4000-8000-000000000001"}`), model)
	require.NoError(t, err)
	assert.Equal(t, GeometryIndices, q.GeometryColumns)
	box := blockmodel.NewIJKBox([3]int64{0, 0, 1}, [3]int64{3, 2, 1})
	assert.Equal(t, &box, q.BBox.IJK)
	assert.Equal(t, byte(';'), q.Output.Delimiter)
	assert.True(t, q.Output.ExcludeNullRows)
	cols, err = q.ResolveColumns(model)
	require.NoError(t, err)
	assert.Equal(t, []string{"domain", "x"}, cols, "x is returned with index geometry, i is dropped")
	b, _ := json.Marshal(q.BBox)
	assert.JSONEq(t, `{"i_minmax": {"min": 0, "max": 3}, "j_minmax": {"min": 0, "max": 2}, "k_minmax": {"min": 1, "max": 1}}`, string(b))

	q, err = DecodeQuery([]byte(`{"columns": ["nope"]}`), model)
	require.NoError(t, err)
	_, err = q.ResolveColumns(model)
	assert.Equal(t, []string{"columns[0]"}, params(t, err))

	_, err = DecodeQuery([]byte(`{"geometry_columns": "corners", "version_uuid": "v2",
	 "bbox": {"i_minmax": {"min": 0, "max": 4}, "j_minmax": {"min": 2, "max": 1}, "k_minmax": {"min": -1, "max": 0}},
	 "output_options": {"file_format": "xlsx"}}`), model)
	assert.ElementsMatch(t, []string{"columns", "geometry_columns", "version_uuid", "bbox.i_minmax.max", "bbox.j_minmax",
		"bbox.k_minmax.min", "output_options.file_format"}, params(t, err))
	q, err = DecodeQuery([]byte(`{"columns": [], "bbox": {"x_minmax": {"min": -1e9, "max": 5}, "y_minmax": {"min": 0, "max": 1}, "z_minmax": {"min": 0, "max": 0}}}`), model)
	require.NoError(t, err)
	assert.Equal(t, &blockmodel.BBox{XMinMax: blockmodel.MinMax{Min: -1e9, Max: 5}, YMinMax: blockmodel.MinMax{Max: 1}}, q.BBox.XYZ)
}

func TestDelta(t *testing.T) {
	d, err := DecodeDelta([]byte(`{"bbox": {"i_minmax": {"min": 0, "max": 9}, "j_minmax": {"min": 0, "max": 9}, "k_minmax": {"min": 0, "max": 9}},
	 "columns": ["*"], "end_version_uuid": null}`))
	require.NoError(t, err)
	assert.True(t, d.All)
	assert.False(t, d.Verbose)
	assert.Nil(t, d.EndVersionUUID)
	d, err = DecodeDelta([]byte(`{"bbox": {"x_minmax": {"min": 0, "max": 9}, "y_minmax": {"min": 0, "max": 9}, "z_minmax": {"min": 0, "max": 9}},
	 "columns": ["c1"], "verbose": true, "end_version_uuid": "7d1e0000-0000-4000-8000-000000000001"}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, d.Columns)
	assert.True(t, d.Verbose)
	require.NotNil(t, d.BBox.XYZ)
	_, err = DecodeDelta([]byte(`{"bbox": {"i_minmax": {"min": 0, "max": 1}, "x_minmax": {"min": 0, "max": 1}}, "columns": ["*", "c1"], "verbose": "False"}`))
	assert.ElementsMatch(t, []string{"bbox", "columns[0]", "verbose"}, params(t, err))
	_, err = DecodeDelta([]byte(`{}`))
	assert.ElementsMatch(t, []string{"bbox", "columns"}, params(t, err))
}
