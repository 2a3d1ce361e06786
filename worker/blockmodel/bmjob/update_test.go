package bmjob

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// TestRowsEqualBlocks: Rows of a stored version equals the Blocks built
// directly from the geometry and the sub-block columns, for every kind.
func TestRowsEqualBlocks(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			s, err := bmstore.Open(t.TempDir())
			require.NoError(t, err)
			g := geometry(t, kind)
			want := splitBlocks(t, g)
			v := createModel(t, s, "m", want)
			got, err := Rows(context.Background(), s, "m", v, g)
			require.NoError(t, err)
			require.True(t, got.SameRows(want))
			require.Equal(t, want.NumRows(), got.NumRows())
			for r := range want.NumRows() {
				require.Equal(t, want.Centroid(r), got.Centroid(r))
				require.Equal(t, want.Extent(r), got.Extent(r))
			}
			if kind.SubBlocked() {
				// version 1 of a created model: every parent whole.
				v0 := createModel(t, s, "whole", g.WholeBlocks())
				got, err := Rows(context.Background(), s, "whole", v0, g)
				require.NoError(t, err)
				require.True(t, got.Whole())
				require.Equal(t, g.NumParents(), got.NumRows())
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if kind.SubBlocked() {
				_, err = Rows(ctx, s, "m", v, g)
				require.ErrorIs(t, err, context.Canceled)
			}
		})
	}
}

// TestApplyUpdateAgainstBruteForce runs a sequence of updates on a model
// of every kind, in both identity forms and both file formats, and
// compares every column, the per-row version_id, the bbox and the changes
// with a brute-force model after each.
func TestApplyUpdateAgainstBruteForce(t *testing.T) {
	for _, kind := range kinds {
		for _, index := range []bool{true, false} {
			for _, csv := range []bool{false, true} {
				name := fmt.Sprintf("%s/index=%v/csv=%v", kind, index, csv)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(len(name)), 7))
					s, err := bmstore.Open(t.TempDir())
					require.NoError(t, err)
					g := geometry(t, kind)
					b := splitBlocks(t, g)
					createModel(t, s, "m", b)
					m := newBF(b)
					input := `{"file_format": "parquet"}`
					if csv {
						input = `{"file_format": "csv"}`
					}
					step := func(body string, rows []fileRow, vals []fileCol, replace bool, ver int64, mut func()) *bmstore.Version {
						t.Helper()
						u := decodeUpdate(t, s, "m", g, body)
						var file []byte
						if u.NeedsFile() {
							// Parquet files in row order (one column: streamed),
							// CSV files scrambled (written through memory).
							order := rng
							if !csv {
								order = nil
							}
							file = updateFile(t, b, rows, vals, index, csv, order)
						}
						v, err := apply(t, s, "m", g, u, file)
						require.NoError(t, err)
						require.Equal(t, int(ver), v.VersionID)
						var titles []string
						var types []blockmodel.DataType
						for _, c := range vals {
							titles, types = append(titles, c.name), append(types, c.typ)
						}
						if len(vals) > 0 {
							m.apply(ver, rows, titles, types, replace)
							require.Equal(t, int64(len(rows)), *v.Changes.BlocksUploaded)
							require.Equal(t, wantBBox(b, rows), v.BBox)
						} else {
							require.Nil(t, v.BBox)
						}
						if mut != nil {
							mut()
						}
						m.check(t, s, "m", v)
						return v
					}
					// 1. three new columns, replace, about two thirds of the rows.
					vals := []fileCol{{"cu", blockmodel.Float64}, {"dom", blockmodel.Utf8}, {"n", blockmodel.Int32}}
					v := step(`{"columns": {"new": [{"title": "cu", "data_type": "Float64", "unit_id": "%[mass]"},
						{"title": "dom", "data_type": "Utf8"}, {"title": "n", "data_type": "Int32"}]},
						"update_type": "replace", "input_options": `+input+`}`, pickRows(b, 0.66, vals, rng), vals, true, 2, nil)
					require.Equal(t, []string{"cu", "dom", "n"}, v.Changes.New)
					require.Equal(t, "%[mass]", *mustColumn(t, v, "cu").UnitID)
					// 2. update cu, merge, another subset.
					vals = []fileCol{{"cu", blockmodel.Float64}}
					v = step(`{"columns": {"update": ["cu"]}, "update_type": "merge", "input_options": `+input+`}`,
						pickRows(b, 0.4, vals, rng), vals, false, 3, nil)
					require.Equal(t, []string{"cu"}, v.Changes.Updated)
					// 2b. update n, merge, every row (the store need not read n).
					vals = []fileCol{{"n", blockmodel.Int32}}
					step(`{"columns": {"update": ["n"]}, "update_type": "merge", "input_options": `+input+`}`,
						pickRows(b, 1, vals, rng), vals, false, 4, nil)
					// 3. update dom (replace) and a new Boolean and UInt16 column.
					vals = []fileCol{{"flag", blockmodel.Boolean}, {"w", blockmodel.UInt16}, {"dom", blockmodel.Utf8}}
					step(`{"columns": {"new": [{"title": "flag", "data_type": "Boolean"}, {"title": "w", "data_type": "UInt16"}],
						"update": ["dom"]}, "update_type": "replace", "input_options": `+input+`}`,
						pickRows(b, 0.5, vals, rng), vals, true, 5, nil)
					// 4. rename dom → domain.
					v = step(`{"columns": {"rename": [{"title": "dom", "new_title": "domain"}]}}`, nil, nil, false, 6, func() {
						m.vals["domain"], m.types["domain"] = m.vals["dom"], m.types["dom"]
						delete(m.vals, "dom")
						delete(m.types, "dom")
					})
					require.Equal(t, []bmstore.Renamed{{OldTitle: "dom", NewTitle: "domain"}}, v.Changes.Renamed)
					// 5. metadata: clear cu's unit, set w's unit and tags; delete n.
					v = step(`{"columns": {"delete": ["n"], "update_metadata": [{"title": "cu", "values": {"unit_id": null}},
						{"title": "w", "values": {"unit_id": "t", "tags": {"k": "v"}}}]}}`, nil, nil, false, 7, func() {
						delete(m.vals, "n")
						delete(m.types, "n")
					})
					require.Nil(t, mustColumn(t, v, "cu").UnitID)
					require.Equal(t, "t", *mustColumn(t, v, "w").UnitID)
					require.JSONEq(t, `{"k": "v"}`, string(mustColumn(t, v, "w").Tags))
					require.Equal(t, []string{"n"}, v.Changes.Deleted)
					require.Equal(t, []string{"cu", "domain", "flag", "w"}, sortedTitles(v))
				})
			}
		}
	}
}

func mustColumn(t *testing.T, v *bmstore.Version, title string) bmstore.ColumnMeta {
	t.Helper()
	c, ok := v.Column(title)
	require.True(t, ok, "column %s", title)
	return c
}

// wantBBox is the parent-index box of the rows of a file.
func wantBBox(b *blockmodel.Blocks, rows []fileRow) *bmstore.BBox {
	if len(rows) == 0 {
		return nil
	}
	box := &bmstore.BBox{I: bmstore.MinMax{Min: 1 << 30, Max: -1}, J: bmstore.MinMax{Min: 1 << 30, Max: -1}, K: bmstore.MinMax{Min: 1 << 30, Max: -1}}
	for _, fr := range rows {
		i, j, k, _ := b.Identity(fr.row)
		for a, x := range []int{int(i), int(j), int(k)} {
			mm := [3]*bmstore.MinMax{&box.I, &box.J, &box.K}[a]
			mm.Min, mm.Max = min(mm.Min, x), max(mm.Max, x)
		}
	}
	return box
}

// TestApplyUpdateReservedUUIDAndFilePath: the new version takes the uuid
// reserved when the job was started, and the file may be given by path; a
// missing file is ErrNoFile.
func TestApplyUpdateReservedUUIDAndFilePath(t *testing.T) {
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	g := geometry(t, blockmodel.Regular)
	b := g.WholeBlocks()
	createModel(t, s, "m", b)
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []fileCol{{"cu", blockmodel.Float64}}
	file := updateFile(t, b, pickRows(b, 1, vals, rng), vals, true, false, rng)
	path := t.TempDir() + "/upload.parquet"
	require.NoError(t, writeFile(path, file))
	u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}}`)
	reserved := bmstore.NewUUID()
	_, err = ApplyUpdate(context.Background(), s, UpdateInput{ModelID: "m", Geometry: g, Update: u, FilePath: path + ".missing"})
	require.ErrorIs(t, err, ErrNoFile)
	_, err = ApplyUpdate(context.Background(), s, UpdateInput{ModelID: "m", Geometry: g, Update: u})
	require.ErrorIs(t, err, ErrNoFile)
	v, err := ApplyUpdate(context.Background(), s, UpdateInput{ModelID: "m", Geometry: g, Update: u, FilePath: path, VersionUUID: reserved})
	require.NoError(t, err)
	require.Equal(t, reserved, v.VersionUUID)
	require.Equal(t, 2, v.VersionID)
	// Every row written: version_id is the new version everywhere.
	for _, x := range readAll(t, s, "m", v, bmstore.VersionIDColumn) {
		require.Equal(t, int64(2), x)
	}
}

// TestApplyUpdateFailuresLeaveLatest: a duplicate row, an unmatched row, a
// value of the wrong type, a missing value column, a title deleted by
// another job and a cancelled context each fail, with a *bmwire.FileError
// for file problems, and leave the latest version as it was.
func TestApplyUpdateFailuresLeaveLatest(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			root := t.TempDir()
			s, err := bmstore.Open(root)
			require.NoError(t, err)
			g := geometry(t, kind)
			b := splitBlocks(t, g)
			createModel(t, s, "m", b)
			rng := rand.New(rand.NewPCG(3, 4))
			vals := []fileCol{{"cu", blockmodel.Float64}}
			good := pickRows(b, 1, vals, rng)
			u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}}`)
			v2, err := apply(t, s, "m", g, u, updateFile(t, b, good, vals, true, false, rng))
			require.NoError(t, err)
			before := readAll(t, s, "m", v2, "cu")
			files := modelFiles(t, root)
			upd := decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}, "update_type": "replace"}`)
			updCSV := decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}, "input_options": {"file_format": "csv"}}`)
			fileErr := func(u *bmwire.Update, file []byte, want string) {
				t.Helper()
				_, err := apply(t, s, "m", g, u, file)
				var fe *bmwire.FileError
				require.ErrorAs(t, err, &fe)
				require.Contains(t, fe.Detail(), want)
				n, err := s.Latest("m")
				require.NoError(t, err)
				require.Equal(t, 2, n)
				require.Equal(t, before, readAll(t, s, "m", v2, "cu"))
				require.Equal(t, files, modelFiles(t, root), "files of the model after a failed update")
			}
			// duplicate row
			dup := append([]fileRow{good[1]}, good...)
			fileErr(upd, updateFile(t, b, dup, vals, true, false, rng), "duplicate")
			// unmatched row: a coordinate outside the model
			cells := []map[string]any{{"x": 0.0, "y": 0.0, "z": 0.0, "dx": 1.0, "dy": 1.0, "dz": 1.0, "cu": 1.0}}
			fileErr(upd, writeParquetFile(t, append(identityCols(kind, false), vals...), cells), "matches no block")
			// wrong type: text in a Float64 column (CSV) and a string column (Parquet)
			bad := writeCSVFile(append(identityCols(kind, true), fileCol{"cu", blockmodel.Utf8}),
				[]map[string]any{mergeCells(identity(b, 0, true), map[string]any{"cu": "abc"})})
			fileErr(updCSV, bad, "cu")
			fileErr(upd, writeParquetFile(t, append(identityCols(kind, true), fileCol{"cu", blockmodel.Utf8}),
				[]map[string]any{mergeCells(identity(b, 0, true), map[string]any{"cu": "abc"})}), "cu")
			// two columns of wrong types in a file in row order: both
			// reported (the columns are streamed one at a time, the report
			// is the whole file's)
			two := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "a", "data_type": "Float64"}, {"title": "n", "data_type": "Int32"}]}}`)
			var cells2 []map[string]any
			for r := range b.NumRows() {
				cells2 = append(cells2, mergeCells(identity(b, r, true), map[string]any{"a": "x", "n": "y"}))
			}
			_, err = apply(t, s, "m", g, two, writeParquetFile(t, append(identityCols(kind, true), fileCol{"a", blockmodel.Utf8}, fileCol{"n", blockmodel.Utf8}), cells2))
			var fe2 *bmwire.FileError
			require.ErrorAs(t, err, &fe2)
			require.Contains(t, fe2.Detail(), `"a"`)
			require.Contains(t, fe2.Detail(), `"n"`)
			// missing column
			fileErr(upd, writeParquetFile(t, identityCols(kind, true), []map[string]any{identity(b, 0, true)}), "cu")
			// a column deleted by another job after this one was accepted
			del := decodeUpdate(t, s, "m", g, `{"columns": {"delete": ["cu"]}}`)
			late := decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}}`)
			v3, err := apply(t, s, "m", g, del, nil)
			require.NoError(t, err)
			_, err = apply(t, s, "m", g, late, updateFile(t, b, good, vals, true, false, rng))
			var ve *blockmodel.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "columns.update[0]", ve.Params[0].Name)
			n, err := s.Latest("m")
			require.NoError(t, err)
			require.Equal(t, v3.VersionID, n)
			// a new title another job created meanwhile
			again := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}}`)
			_, err = apply(t, s, "m", g, u, updateFile(t, b, good, vals, true, false, rng))
			require.NoError(t, err)
			_, err = apply(t, s, "m", g, again, updateFile(t, b, good, vals, true, false, rng))
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "columns.new[0].title", ve.Params[0].Name)
			// cancelled
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			file := updateFile(t, b, good, vals, true, false, rng)
			_, err = ApplyUpdate(ctx, s, UpdateInput{ModelID: "m", Geometry: g, Update: upd, File: bytesReader(file), FileSize: int64(len(file))})
			require.True(t, errors.Is(err, context.Canceled))
		})
	}
}

func mergeCells(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}
