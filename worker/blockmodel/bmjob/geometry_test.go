package bmjob

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

func unitCells(n [3]int) []cuboid {
	var out []cuboid
	for z := uint8(0); z < uint8(n[2]); z++ {
		for y := uint8(0); y < uint8(n[1]); y++ {
			for x := uint8(0); x < uint8(n[0]); x++ {
				out = append(out, cuboid{[3]uint8{x, y, z}, [3]uint8{x + 1, y + 1, z + 1}})
			}
		}
	}
	return out
}

// resplit is the new sub-blocks a geometry-change file gives, per parent.
func resplit(kind blockmodel.ModelType, n [3]int) map[int64][]cuboid {
	whole := []cuboid{{e: [3]uint8{uint8(n[0]), uint8(n[1]), uint8(n[2])}}}
	switch kind {
	case blockmodel.FullySubBlocked:
		return map[int64][]cuboid{1: unitCells(n), 3: whole}
	case blockmodel.Flexible:
		return map[int64][]cuboid{
			1: {{[3]uint8{0, 0, 0}, [3]uint8{1, 2, 2}}, {[3]uint8{1, 0, 0}, [3]uint8{2, 2, 2}}, {[3]uint8{2, 0, 0}, [3]uint8{3, 2, 2}}, {[3]uint8{3, 0, 0}, [3]uint8{4, 2, 2}}},
			2: {{[3]uint8{0, 0, 0}, [3]uint8{4, 2, 1}}, {[3]uint8{0, 0, 1}, [3]uint8{4, 2, 2}}},
			3: whole}
	}
	return map[int64][]cuboid{
		1: {{[3]uint8{0, 0, 0}, [3]uint8{2, 2, 2}}, {[3]uint8{2, 0, 0}, [3]uint8{4, 2, 2}}, {[3]uint8{0, 2, 0}, [3]uint8{2, 4, 2}}, {[3]uint8{2, 2, 0}, [3]uint8{4, 4, 2}}},
		3: whole}
}

// blocksOf builds canonical Blocks from per-parent cuboids.
func blocksOf(t *testing.T, g *blockmodel.Geometry, per func(p int64) []cuboid) *blockmodel.Blocks {
	t.Helper()
	var parent []uint32
	var start, end []uint8
	for p := range g.NumParents() {
		cs := append([]cuboid(nil), per(p)...)
		sort.Slice(cs, func(a, b int) bool { return g.Sidx(cs[a].s) < g.Sidx(cs[b].s) })
		for _, c := range cs {
			parent = append(parent, uint32(p))
			start, end = append(start, c.s[:]...), append(end, c.e[:]...)
		}
	}
	b, err := blockmodel.NewBlocks(g, parent, start, end)
	require.NoError(t, err)
	return b
}

// rowsOf returns the Blocks rows of parent p as cuboids keyed by identity.
func identityKey(b *blockmodel.Blocks, r int64) string {
	s, e := b.Corners(r)
	return fmt.Sprint(b.Parent(r), s, e)
}

// TestGeometryChange: geometry-change updates of the three sub-blocked
// kinds, replace and merge, coordinate form (and the flexible corner form),
// give the sub-block set and values a brute-force construction gives: file
// sub-blocks in the parents the file touches, the other parents whole
// (replace) or as they were (merge); values of unchanged sub-blocks kept,
// new ones null, or with fill_subblocks (fully sub-blocked) the value of the
// old block covering them.
func TestGeometryChange(t *testing.T) {
	type tc struct {
		kind    blockmodel.ModelType
		replace bool
		index   bool
		csv     bool
		fill    bool
	}
	var cases []tc
	for _, kind := range kinds[1:] {
		for _, replace := range []bool{true, false} {
			cases = append(cases, tc{kind: kind, replace: replace, csv: replace})
		}
	}
	cases = append(cases, tc{kind: blockmodel.Flexible, index: true}, tc{kind: blockmodel.Flexible, index: true, csv: true, replace: true},
		tc{kind: blockmodel.FullySubBlocked, fill: true})
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/replace=%v/index=%v/csv=%v/fill=%v", c.kind, c.replace, c.index, c.csv, c.fill), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(21, 22))
			s, err := bmstore.Open(t.TempDir())
			require.NoError(t, err)
			g := geometry(t, c.kind)
			old := splitBlocks(t, g)
			createModel(t, s, "m", old)
			// v2: cu and dom on every old row.
			vals := []fileCol{{"cu", blockmodel.Float64}, {"dom", blockmodel.Utf8}, {"flag", blockmodel.Boolean}, {"w", blockmodel.UInt16}, {"n", blockmodel.Int32}}
			others := []string{"dom", "flag", "w", "n"} // columns the geometry-change file does not give
			oldRows := pickRows(old, 1, vals, rng)
			u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}, {"title": "dom", "data_type": "Utf8"},
				{"title": "flag", "data_type": "Boolean"}, {"title": "w", "data_type": "UInt16"}, {"title": "n", "data_type": "Int32"}]}}`)
			_, err = apply(t, s, "m", g, u, updateFile(t, old, oldRows, vals, false, false, rng))
			require.NoError(t, err)
			oldVal := map[string]map[string]any{"cu": {}, "dom": {}, "flag": {}, "w": {}, "n": {}}
			for _, fr := range oldRows {
				k := identityKey(old, fr.row)
				for _, c := range vals {
					oldVal[c.name][k] = fr.vals[c.name]
				}
			}
			// The new split.
			n := g.Subblocks()
			touched := resplit(c.kind, n)
			if c.fill {
				touched = map[int64][]cuboid{4: unitCells(n)[:3]}
			}
			whole := []cuboid{{e: [3]uint8{uint8(n[0]), uint8(n[1]), uint8(n[2])}}}
			want := blocksOf(t, g, func(p int64) []cuboid {
				switch {
				case touched[p] != nil && c.fill:
					return unitCells(n)
				case touched[p] != nil:
					return touched[p]
				case c.replace:
					return whole
				}
				return split(c.kind, p, n)
			})
			// The file: rows of the touched parents with a new cu.
			fileBlocks := blocksOf(t, g, func(p int64) []cuboid {
				switch {
				case touched[p] != nil && c.fill:
					return unitCells(n)
				case touched[p] != nil:
					return touched[p]
				}
				return whole
			})
			var rows []fileRow
			newCu := map[string]any{}
			for r := range fileBlocks.NumRows() {
				s, e := fileBlocks.Corners(r)
				given := false
				for _, cb := range touched[fileBlocks.Parent(r)] {
					given = given || cb == cuboid{s, e}
				}
				if !given {
					continue
				}
				x := float64(rng.IntN(1000))
				rows = append(rows, fileRow{row: r, vals: map[string]any{"cu": x}})
				newCu[identityKey(fileBlocks, r)] = x
			}
			input := `{"file_format": "parquet"}`
			if c.csv {
				input = `{"file_format": "csv"}`
			}
			ut := "merge"
			if c.replace {
				ut = "replace"
			}
			fill := ""
			if c.fill {
				fill = `, "fill_subblocks": true`
			}
			u = decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}, "geometry_change": true, "update_type": "`+ut+`"`+fill+`, "input_options": `+input+`}`)
			file := updateFile(t, fileBlocks, rows, []fileCol{{"cu", blockmodel.Float64}}, c.index, c.csv, rng)
			v, err := apply(t, s, "m", g, u, file)
			require.NoError(t, err)
			got, err := Rows(ctx, s, "m", v, g)
			require.NoError(t, err)
			require.True(t, got.SameRows(want), "rows after the geometry change")
			require.Equal(t, int64(len(rows)), *v.Changes.BlocksUploaded)
			require.Empty(t, v.Changes.New)
			// Brute-force values.
			covering := func(r int64) string {
				s, e := want.Corners(r)
				p := want.Parent(r)
				for o := range old.NumRows() {
					if old.Parent(o) != p {
						continue
					}
					os, oe := old.Corners(o)
					in := true
					for a := range 3 {
						c2 := int(s[a]) + int(e[a])
						in = in && 2*int(os[a]) <= c2 && c2 < 2*int(oe[a])
					}
					if in {
						return identityKey(old, o)
					}
				}
				return ""
			}
			cu := readAll(t, s, "m", v, "cu")
			other := map[string][]any{}
			for _, title := range others {
				other[title] = readAll(t, s, "m", v, title)
			}
			for r := range want.NumRows() {
				k := identityKey(want, r)
				_, existed := oldVal["dom"][k]
				var wantCu any
				switch x, inFile := newCu[k]; {
				case inFile:
					wantCu = x
				case c.replace:
				case existed:
					wantCu = oldVal["cu"][k]
				case c.fill:
					wantCu = oldVal["cu"][covering(r)]
				}
				require.Equal(t, wantCu, cu[r], "cu of row %d %s", r, k)
				for _, title := range others {
					var wantOther any
					switch {
					case existed:
						wantOther = oldVal[title][k]
					case c.fill:
						wantOther = oldVal[title][covering(r)]
					}
					require.Equal(t, wantOther, other[title][r], "%s of row %d %s", title, r, k)
				}
			}
			for _, x := range readAll(t, s, "m", v, bmstore.VersionIDColumn) {
				require.Equal(t, int64(v.VersionID), x)
			}
			// sub_block_derivation: filled rows derived from their parent,
			// file rows completed from it partly derived, others given.
			wantDeriv := make([]any, want.NumRows())
			for r := range want.NumRows() {
				k := identityKey(want, r)
				_, existed := oldVal["dom"][k]
				_, inFile := newCu[k]
				switch {
				case c.fill && !existed && !inFile:
					wantDeriv[r] = "derived from parent"
				case c.fill && !existed:
					wantDeriv[r] = "some columns derived"
				default:
					wantDeriv[r] = "user specified"
				}
			}
			require.Equal(t, wantDeriv, derivations(t, s, g, v))
			// A plain update after the change matches the new rows.
			vals = []fileCol{{"cu", blockmodel.Float64}}
			after := pickRows(want, 0.5, vals, rng)
			u = decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}}`)
			v2, err := apply(t, s, "m", g, u, updateFile(t, want, after, vals, false, false, rng))
			require.NoError(t, err)
			cu2 := readAll(t, s, "m", v2, "cu")
			for _, fr := range after {
				require.Equal(t, fr.vals["cu"], cu2[fr.row])
				if wantDeriv[fr.row] == "derived from parent" {
					wantDeriv[fr.row] = "some columns derived"
				}
			}
			require.Equal(t, wantDeriv, derivations(t, s, g, v2))
			if !c.fill {
				return
			}
			// Another geometry change (parent 7 split, given whole in the
			// file, its other columns filled) keeps the other rows' states.
			byKey := map[string]any{}
			for r := range want.NumRows() {
				byKey[identityKey(want, r)] = wantDeriv[r]
			}
			split7 := blocksOf(t, g, func(p int64) []cuboid {
				if p == 7 || p == 4 {
					return unitCells(n)
				}
				return split(c.kind, p, n)
			})
			var rows7 []fileRow
			for r := range split7.NumRows() {
				if split7.Parent(r) == 7 {
					rows7 = append(rows7, fileRow{row: r, vals: map[string]any{"cu": 1.0}})
				}
			}
			u = decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}, "geometry_change": true, "update_type": "merge", "fill_subblocks": true}`)
			v3, err := apply(t, s, "m", g, u, updateFile(t, split7, rows7, []fileCol{{"cu", blockmodel.Float64}}, false, false, nil))
			require.NoError(t, err)
			got3, err := Rows(ctx, s, "m", v3, g)
			require.NoError(t, err)
			require.True(t, got3.SameRows(split7))
			want3 := make([]any, split7.NumRows())
			for r := range split7.NumRows() {
				if split7.Parent(r) == 7 {
					want3[r] = "some columns derived"
				} else {
					want3[r] = byKey[identityKey(split7, r)]
				}
			}
			require.Equal(t, want3, derivations(t, s, g, v3))
			require.Contains(t, want3, "derived from parent")
		})
	}
}

// TestGeometryChangeRefusals: a touched parent whose sub-blocks do not tile
// it, the sidx form, and a geometry change without a file fail and leave
// the latest version.
func TestGeometryChangeRefusals(t *testing.T) {
	for _, kind := range kinds[1:] {
		t.Run(string(kind), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 1))
			s, err := bmstore.Open(t.TempDir())
			require.NoError(t, err)
			g := geometry(t, kind)
			old := splitBlocks(t, g)
			createModel(t, s, "m", old)
			n := g.Subblocks()
			u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}, "geometry_change": true}`)
			// parent 1 given only some of a valid split: no tiling.
			part := resplit(kind, n)[1][:2]
			fb := blocksOf(t, g, func(p int64) []cuboid {
				if p == 1 {
					return resplit(kind, n)[1]
				}
				return []cuboid{{e: [3]uint8{uint8(n[0]), uint8(n[1]), uint8(n[2])}}}
			})
			var rows []fileRow
			for r := range fb.NumRows() {
				s, e := fb.Corners(r)
				if fb.Parent(r) == 1 && (cuboid{s, e} == part[0] || cuboid{s, e} == part[1]) {
					rows = append(rows, fileRow{row: r, vals: map[string]any{"cu": 1.0}})
				}
			}
			require.Len(t, rows, 2)
			_, err = apply(t, s, "m", g, u, updateFile(t, fb, rows, []fileCol{{"cu", blockmodel.Float64}}, false, false, rng))
			var fe *bmwire.FileError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, fe.Detail(), "not valid")
			require.Equal(t, [3]uint32{1, 0, 0}, *fe.Errors[0].IJK)
			if kind != blockmodel.Flexible {
				_, err = apply(t, s, "m", g, u, updateFile(t, old, []fileRow{{row: 0, vals: map[string]any{"cu": 1.0}}}, []fileCol{{"cu", blockmodel.Float64}}, true, false, rng))
				require.ErrorAs(t, err, &fe)
				require.Contains(t, fe.Detail(), "coordinates")
			}
			yes := true
			_, err = apply(t, s, "m", g, &bmwire.Update{GeometryChange: &yes, UpdateType: bmwire.Merge}, nil)
			var ve *blockmodel.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "geometry_change", ve.Params[0].Name)
			l, err := s.Latest("m")
			require.NoError(t, err)
			require.Equal(t, 1, l)
		})
	}
}

// derivations queries the sub_block_derivation of every row of a version.
func derivations(t *testing.T, s *bmstore.Store, g *blockmodel.Geometry, v *bmstore.Version) []any {
	t.Helper()
	q, err := bmwire.DecodeQuery([]byte(`{"columns": ["sub_block_derivation"], "output_options": {"exclude_null_rows": false}}`), ModelInfo(g, v))
	require.NoError(t, err)
	var buf bytes.Buffer
	res, err := Query(context.Background(), s, "m", g, v, q, &buf)
	require.NoError(t, err)
	_, rows := readParquetOutput(t, buf.Bytes(), outTypes(t, v, q, res))
	var out []any
	for _, r := range rows {
		out = append(out, r[len(r)-1])
	}
	return out
}

// firstSubCells is a fully sub-blocked model "m" of parents whole parents
// in a row along x, each of sub × sub × sub unit sub-cells, and a merge
// geometry change with fill_subblocks whose CSV file gives the first
// sub-cell of each parent a new column cu.
func firstSubCells(t *testing.T, parents, sub int) (*bmstore.Store, *blockmodel.Geometry, *bmstore.Version, *bmwire.Update, []byte) {
	t.Helper()
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	f := float64(sub)
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.SubBlockedSize(blockmodel.FullySubBlocked,
		blockmodel.Size3D{NX: parents, NY: 1, NZ: 1}, blockmodel.Size3D{NX: sub, NY: sub, NZ: sub}, blockmodel.XYZ{X: f, Y: f, Z: f}))
	require.NoError(t, err)
	v1 := createModel(t, s, "m", g.WholeBlocks())
	u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}, "geometry_change": true,
		"update_type": "merge", "fill_subblocks": true, "input_options": {"file_format": "csv"}}`)
	var file strings.Builder
	file.WriteString("x,y,z,dx,dy,dz,cu\n")
	for p := range parents {
		fmt.Fprintf(&file, "%g,0.5,0.5,1,1,1,%d\n", f*float64(p)+0.5, p)
	}
	return s, g, v1, u, []byte(file.String())
}

// A geometry change whose fill would make more rows than a version may
// hold (one unit sub-block in each of 501 parents of 100 × 100 × 100
// sub-cells: 501,000,000 rows) is refused before any row is made, and the
// model keeps its version.
func TestGeometryChangeRowBound(t *testing.T) {
	s, g, v1, u, file := firstSubCells(t, 501, 100)
	_, err := apply(t, s, "m", g, u, file)
	var ve *blockmodel.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "more than 500000000")
	n, err := s.Latest("m")
	require.NoError(t, err)
	assert.Equal(t, v1.VersionID, n)
}

// A geometry change is held to UpdateInput.MaxMemory: before anything is
// loaded with its new rows counted as the old ones and the file's, and once
// the file is read with the sub-blocks a fill adds. Ten whole parents of
// 4 × 4 × 4 sub-cells, a file of one unit sub-block in each, filled: at
// most 10 + 10 + 630 new rows (640 made). A refused change leaves the
// latest version as it was.
func TestGeometryChangeMemoryBound(t *testing.T) {
	s, g, v1, u, body := firstSubCells(t, 10, 4)
	const old, fileRows = 10, 12 // the CSV's line bound: header, ten rows, the end
	run := func(maxMemory, given int64) (*bmstore.Version, error) {
		in := UpdateInput{ModelID: "m", Geometry: g, Update: u, CreatedBy: "u", BatchRows: 5, MaxMemory: maxMemory,
			File: bytes.NewReader(body), FileSize: int64(len(body)), FileRows: given}
		return ApplyUpdate(context.Background(), s, in)
	}
	refused := func(maxMemory, given int64) {
		t.Helper()
		_, err := run(maxMemory, given)
		var ve *blockmodel.ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Contains(t, err.Error(), "more than the")
		assert.Contains(t, err.Error(), "the worker gives a job")
		n, err := s.Latest("m")
		require.NoError(t, err)
		assert.Equal(t, v1.VersionID, n)
	}
	assert.Equal(t, UpdateMemory(old, fileRows, 1, true), geometryMemory(old, fileRows, old+fileRows, 1))
	enough := geometryMemory(old, fileRows, old+10+630, 1)
	refused(UpdateMemory(old, fileRows, 1, true)-1, 0) // before loading
	refused(enough-1, 0)                               // the fill's rows counted
	refused(enough, 1000)                              // a bound the caller read is used, not read again
	v, err := run(enough, fileRows)
	require.NoError(t, err)
	assert.Equal(t, int64(640), v.Rows)
}

// UpdateMemory grows with each count it is given and saturates past
// MaxRows instead of overflowing.
func TestUpdateMemory(t *testing.T) {
	assert.Equal(t, int64(memoryBase+rowBytes*1000), UpdateMemory(1000, 0, 0, false))
	assert.Equal(t, int64(memoryBase+oldRowBytes*100+(fileRowBytes+2*fileValueBytes)*50+newRowBytes*150), UpdateMemory(100, 50, 2, true))
	huge := UpdateMemory(MaxRows, 1<<62, 1000, true)
	assert.Positive(t, huge)
	assert.Equal(t, huge, UpdateMemory(MaxRows, 1<<61, 1000, true), "clamped past MaxRows")
	assert.Equal(t, huge, UpdateMemory(MaxRows, math.MaxInt64, 1000, true), "no overflow")
	assert.Less(t, UpdateMemory(10, 10, 1, true), UpdateMemory(10, 11, 1, true))
}
