package bmjob

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// queryModel builds a model of a kind with columns cu (Float64), dom (Utf8)
// and n (Int32) written by two updates, and its brute-force twin.
func queryModel(t *testing.T, kind blockmodel.ModelType) (*bmstore.Store, *blockmodel.Geometry, *bf, *bmstore.Version) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, uint64(len(kind))))
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	g := geometry(t, kind)
	b := splitBlocks(t, g)
	createModel(t, s, "m", b)
	m := newBF(b)
	vals := []fileCol{{"cu", blockmodel.Float64}, {"dom", blockmodel.Utf8}, {"n", blockmodel.Int32}}
	rows := pickRows(b, 0.7, vals, rng)
	u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}, {"title": "dom", "data_type": "Utf8"},
		{"title": "n", "data_type": "Int32"}]}}`)
	_, err = apply(t, s, "m", g, u, updateFile(t, b, rows, vals, false, false, rng))
	require.NoError(t, err)
	m.apply(2, rows, []string{"cu", "dom", "n"}, []blockmodel.DataType{blockmodel.Float64, blockmodel.Utf8, blockmodel.Int32}, false)
	vals = vals[:1]
	rows = pickRows(b, 0.3, vals, rng)
	u = decodeUpdate(t, s, "m", g, `{"columns": {"update": ["cu"]}}`)
	v, err := apply(t, s, "m", g, u, updateFile(t, b, rows, vals, true, false, rng))
	require.NoError(t, err)
	m.apply(3, rows, []string{"cu"}, []blockmodel.DataType{blockmodel.Float64}, false)
	m.check(t, s, "m", v)
	return s, g, m, v
}

// bruteQuery is the expected output of a query: headers and rows.
func (m *bf) bruteQuery(t *testing.T, v *bmstore.Version, q *bmwire.Query) ([]string, [][]any) {
	t.Helper()
	g := m.b.Geometry()
	resolved, err := q.ResolveColumns(ModelInfo(g, v))
	require.NoError(t, err)
	geo := q.GeometrySet(g.Type())
	headers := append([]string{}, geo...)
	for _, name := range resolved {
		if c, ok := v.Column(name); ok && !blockmodel.IsSystemColumn(name) && q.Output.ColumnHeaders == "id" {
			headers = append(headers, c.ColID)
		} else {
			headers = append(headers, name)
		}
	}
	var out [][]any
	for r := range m.b.NumRows() {
		i, j, k, sub := m.b.Identity(r)
		c, d := m.b.Centroid(r), m.b.Extent(r)
		if box := q.BBox.IJK; box != nil {
			in := func(x uint32, mm blockmodel.IndexMinMax) bool { return int64(x) >= mm.Min && int64(x) <= mm.Max }
			if !in(i, box.IMinMax) || !in(j, box.JMinMax) || !in(k, box.KMinMax) {
				continue
			}
		}
		if box := q.BBox.XYZ; box != nil {
			in := func(x float64, mm blockmodel.MinMax) bool { return x >= mm.Min && x <= mm.Max }
			if !in(c[0], box.XMinMax) || !in(c[1], box.YMinMax) || !in(c[2], box.ZMinMax) {
				continue
			}
		}
		sys := map[string]any{"i": uint64(i), "j": uint64(j), "k": uint64(k), "sidx": uint64(sub.Sidx),
			"x": c[0], "y": c[1], "z": c[2], "dx": d[0], "dy": d[1], "dz": d[2],
			"start_si": uint64(sub.Start[0]), "start_sj": uint64(sub.Start[1]), "start_sk": uint64(sub.Start[2]),
			"end_si": uint64(sub.End[0]), "end_sj": uint64(sub.End[1]), "end_sk": uint64(sub.End[2]),
			"version_id": m.vid[r], "sub_block_derivation": "user specified"}
		var row []any
		for _, n := range geo {
			row = append(row, sys[n])
		}
		users, nulls := 0, 0
		for _, name := range resolved {
			if col, ok := v.Column(name); ok && !blockmodel.IsSystemColumn(name) {
				x := m.vals[col.Title][r]
				users++
				if x == nil {
					nulls++
				}
				row = append(row, x)
			} else {
				row = append(row, sys[name])
			}
		}
		if q.Output.ExcludeNullRows && users > 0 && nulls == users {
			continue
		}
		out = append(out, row)
	}
	return headers, out
}

// readParquetOutput reads a query output back with parquet-go.
func readParquetOutput(t *testing.T, data []byte, types []blockmodel.DataType) ([]string, [][]any) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var headers []string
	for _, p := range f.Schema().Columns() {
		headers = append(headers, p[0])
	}
	r := parquet.NewReader(f)
	defer r.Close()
	var out [][]any
	for {
		row, err := readRow(r)
		if err != nil {
			break
		}
		vals := make([]any, len(headers))
		for _, v := range row {
			c := v.Column()
			if v.IsNull() {
				continue
			}
			switch types[c] {
			case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
				vals[c] = uint64(uint32(v.Int32()))
			case blockmodel.Int32:
				vals[c] = int64(v.Int32())
			case blockmodel.Int64:
				vals[c] = v.Int64()
			case blockmodel.Float64:
				vals[c] = v.Double()
			case blockmodel.Utf8:
				vals[c] = string(v.ByteArray())
			case blockmodel.Boolean:
				vals[c] = v.Boolean()
			default:
				t.Fatalf("type %s", types[c])
			}
		}
		out = append(out, vals)
	}
	return headers, out
}

func readRow(r *parquet.Reader) (parquet.Row, error) {
	rows := make([]parquet.Row, 1)
	n, err := r.ReadRows(rows)
	if n == 1 {
		return rows[0], nil
	}
	if err == nil {
		err = fmt.Errorf("no row")
	}
	return nil, err
}

// TestQueryAgainstBruteForce: query outputs of every kind, read back with
// parquet-go, equal the brute-force selection: every column or some, index
// and coordinate geometry, IJK and XYZ boxes, exclude_null_rows, id headers,
// version_id and sub_block_derivation.
func TestQueryAgainstBruteForce(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			s, g, m, v := queryModel(t, kind)
			cu, _ := v.Column("cu")
			bb := g.BBox()
			mid := func(mm blockmodel.MinMax) string {
				w := mm.Max - mm.Min
				return fmt.Sprintf(`{"min": %v, "max": %v}`, mm.Min+w/4, mm.Max-w/4)
			}
			bodies := []string{
				`{"columns": ["*"], "output_options": {"exclude_null_rows": false}}`,
				`{"columns": ["*", "version_id"], "geometry_columns": "coordinates"}`,
				`{"columns": ["cu", "version_id"], "geometry_columns": "coordinates",
					"bbox": {"i_minmax": {"min": 1, "max": 2}, "j_minmax": {"min": 0, "max": 1}, "k_minmax": {"min": 1, "max": 1}}}`,
				`{"columns": ["` + cu.ColID + `", "dom", "sub_block_derivation", "x", "i"],
					"bbox": {"x_minmax": ` + mid(bb.XMinMax) + `, "y_minmax": ` + mid(bb.YMinMax) + `, "z_minmax": ` + mid(bb.ZMinMax) + `},
					"output_options": {"column_headers": "id", "exclude_null_rows": false}}`,
				`{"columns": ["version_id"], "output_options": {"exclude_null_rows": true}}`,
				`{"columns": ["n"], "bbox": {"i_minmax": {"min": 3, "max": 3}, "j_minmax": {"min": 2, "max": 2}, "k_minmax": {"min": 0, "max": 1}}}`,
			}
			for n, body := range bodies {
				q, err := bmwire.DecodeQuery([]byte(body), ModelInfo(g, v))
				require.NoError(t, err, body)
				var buf bytes.Buffer
				res, err := Query(context.Background(), s, "m", g, v, q, &buf)
				require.NoError(t, err, body)
				wantH, wantRows := m.bruteQuery(t, v, q)
				require.Equal(t, wantH, res.Headers, "query %d", n)
				types := outTypes(t, v, q, res)
				gotH, gotRows := readParquetOutput(t, buf.Bytes(), types)
				require.Equal(t, wantH, gotH, "query %d", n)
				require.Equal(t, len(wantRows), len(gotRows), "query %d rows", n)
				require.Equal(t, wantRows, gotRows, "query %d", n)
				require.Equal(t, int64(len(wantRows)), res.Rows)
				if n == 3 || n == 4 {
					require.NotEmpty(t, gotRows, "query %d selects rows", n)
				}
			}
		})
	}
}

// outTypes returns the data types of a query's output columns.
func outTypes(t *testing.T, v *bmstore.Version, q *bmwire.Query, res QueryResult) []blockmodel.DataType {
	var types []blockmodel.DataType
	for _, h := range res.Headers {
		if typ, ok := blockmodel.SystemColumnType(h); ok {
			types = append(types, typ)
			continue
		}
		if h == blockmodel.ColSubBlockDerivation {
			types = append(types, blockmodel.Utf8)
			continue
		}
		c, ok := v.Column(h)
		require.True(t, ok, h)
		types = append(types, c.DataType)
	}
	return types
}

// TestQueryCSV: a CSV query output with another delimiter holds the
// brute-force rows, nulls as empty fields.
func TestQueryCSV(t *testing.T) {
	s, g, m, v := queryModel(t, blockmodel.Flexible)
	q, err := bmwire.DecodeQuery([]byte(`{"columns": ["dom", "cu", "n"], "output_options": {"file_format": "csv", "delimiter": ";"}}`), ModelInfo(g, v))
	require.NoError(t, err)
	var buf bytes.Buffer
	res, err := Query(context.Background(), s, "m", g, v, q, &buf)
	require.NoError(t, err)
	wantH, wantRows := m.bruteQuery(t, v, q)
	rd := csv.NewReader(&buf)
	rd.Comma = ';'
	recs, err := rd.ReadAll()
	require.NoError(t, err)
	require.Equal(t, wantH, recs[0])
	require.Len(t, recs, len(wantRows)+1)
	require.Equal(t, int64(len(wantRows)), res.Rows)
	for r, want := range wantRows {
		for c, x := range want {
			cell := recs[r+1][c]
			switch x := x.(type) {
			case nil:
				require.Empty(t, cell)
			case float64:
				f, err := strconv.ParseFloat(cell, 64)
				require.NoError(t, err)
				require.Equal(t, x, f)
			default:
				require.Equal(t, fmt.Sprint(x), cell)
			}
		}
	}
}

// TestQueryCancelled: a cancelled context stops a query.
func TestQueryCancelled(t *testing.T) {
	s, g, _, v := queryModel(t, blockmodel.Regular)
	q, err := bmwire.DecodeQuery([]byte(`{"columns": ["cu"]}`), ModelInfo(g, v))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Query(ctx, s, "m", g, v, q, &bytes.Buffer{})
	require.ErrorIs(t, err, context.Canceled)
}

// TestQueryXYZBoxes: random world boxes (inside, across the edge, outside,
// one centroid exactly) select the rows brute force selects, though a query
// reads only the parents the box can reach.
func TestQueryXYZBoxes(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			s, g, m, v := queryModel(t, kind)
			rng := rand.New(rand.NewPCG(31, 32))
			bb := g.BBox()
			for n := range 40 {
				var box [3]blockmodel.MinMax
				c := m.b.Centroid(rng.Int64N(m.b.NumRows()))
				for a, mm := range bb.Axes() {
					w := mm.Max - mm.Min
					if n%5 == 0 { // exactly one centroid's coordinates
						box[a] = blockmodel.MinMax{Min: c[a], Max: c[a]}
						continue
					}
					mid := mm.Min - 0.2*w + 1.4*w*rng.Float64()
					h := 0.3 * w * rng.Float64()
					box[a] = blockmodel.MinMax{Min: mid - h, Max: mid + h}
				}
				body := fmt.Sprintf(`{"columns": ["cu"], "bbox": {"x_minmax": {"min": %v, "max": %v}, "y_minmax": {"min": %v, "max": %v},
					"z_minmax": {"min": %v, "max": %v}}, "output_options": {"exclude_null_rows": false}}`,
					box[0].Min, box[0].Max, box[1].Min, box[1].Max, box[2].Min, box[2].Max)
				q, err := bmwire.DecodeQuery([]byte(body), ModelInfo(g, v))
				require.NoError(t, err)
				var buf bytes.Buffer
				res, err := Query(context.Background(), s, "m", g, v, q, &buf)
				require.NoError(t, err)
				_, want := m.bruteQuery(t, v, q)
				_, got := readParquetOutput(t, buf.Bytes(), outTypes(t, v, q, res))
				require.Equal(t, want, got, "box %d %s", n, body)
				if n%5 == 0 {
					require.NotEmpty(t, got, "the box of one centroid selects its block")
				}
			}
		})
	}
}

// fillIndices (parent indices by increment with carries) equals
// ParentIJK row by row, for a whole regular model read in batches that
// start anywhere and for a sub-blocked model whose parents repeat.
func TestFillIndicesIncrement(t *testing.T) {
	check := func(t *testing.T, b *blockmodel.Blocks, step int64) {
		g := b.Geometry()
		var sys blockmodel.SystemBatch
		for from := int64(0); from < b.NumRows(); from += step {
			to := min(from+step, b.NumRows())
			fillIndices(b, from, to, &sys)
			require.Len(t, sys.I, int(to-from))
			for r := range int(to - from) {
				i, j, k := g.ParentIJK(b.Parent(from + int64(r)))
				require.Equal(t, [3]uint32{i, j, k}, [3]uint32{sys.I[r], sys.J[r], sys.K[r]}, "row %d", from+int64(r))
			}
		}
	}
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(blockmodel.Size3D{NX: 5, NY: 4, NZ: 3}, blockmodel.XYZ{X: 1, Y: 1, Z: 1}))
	require.NoError(t, err)
	for _, step := range []int64{1, 7, 19, 60} {
		check(t, g.WholeBlocks(), step)
	}
	g, err = blockmodel.NewGeometry(blockmodel.XYZ{}, nil,
		blockmodel.SubBlockedSize(blockmodel.FullySubBlocked, blockmodel.Size3D{NX: 3, NY: 2, NZ: 2}, blockmodel.Size3D{NX: 2, NY: 1, NZ: 1}, blockmodel.XYZ{X: 1, Y: 1, Z: 1}))
	require.NoError(t, err)
	var parent []uint32
	var start, end []uint8
	for p := uint32(0); p < 12; p++ {
		switch p % 2 {
		case 0: // two halves
			parent = append(parent, p, p)
			start = append(start, 0, 0, 0, 1, 0, 0)
			end = append(end, 1, 1, 1, 2, 1, 1)
		default: // whole
			parent = append(parent, p)
			start = append(start, 0, 0, 0)
			end = append(end, 2, 1, 1)
		}
	}
	b, err := blockmodel.NewBlocks(g, parent, start, end)
	require.NoError(t, err)
	for _, step := range []int64{1, 4, 5, 100} {
		check(t, b, step)
	}
}

// TestQueryRowGroupsAcrossBatches: a query of a model larger than three
// output row groups, with null rows left out (in runs and scattered, so
// that output groups end inside input batches) and with an IJK box, gives
// the brute-force rows in row groups of exactly bmstore.QueryRowGroup rows
// but the last; a column of few distinct floats is dictionary-encoded in
// the full ones.
func TestQueryRowGroupsAcrossBatches(t *testing.T) {
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	size := blockmodel.Size3D{NX: 100, NY: 60, NZ: 50}
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(size, blockmodel.XYZ{X: 1, Y: 1, Z: 1}))
	require.NoError(t, err)
	b := g.WholeBlocks()
	createModel(t, s, "m", b)
	n := b.NumRows()
	rng := rand.New(rand.NewPCG(12, 1))
	grade := bmstore.Column{Type: blockmodel.Float64, Floats: make([]float64, n), Null: make([]bool, n)}
	for r := range n {
		grade.Floats[r] = float64(rng.IntN(2000)) / 100
		grade.Null[r] = r%7777 < 900 || rng.IntN(40) == 0
	}
	tx, err := s.Begin("m")
	require.NoError(t, err)
	cw, err := tx.AddColumn(bmstore.ColumnMeta{Title: "grade", DataType: blockmodel.Float64})
	require.NoError(t, err)
	for lo := int64(0); lo < n; lo += 77_777 {
		hi := min(n, lo+77_777)
		require.NoError(t, cw.Write(bmstore.Column{Type: blockmodel.Float64, Floats: grade.Floats[lo:hi], Null: grade.Null[lo:hi]}))
	}
	require.NoError(t, cw.Close())
	v, err := tx.Commit(bmstore.Meta{CreatedBy: "u"})
	require.NoError(t, err)

	for _, body := range []string{
		`{"columns": ["grade"]}`,
		`{"columns": ["grade"], "bbox": {"i_minmax": {"min": 3, "max": 90}, "j_minmax": {"min": 0, "max": 59}, "k_minmax": {"min": 5, "max": 48}}}`,
		`{"columns": ["grade"], "output_options": {"exclude_null_rows": false}}`,
	} {
		q, err := bmwire.DecodeQuery([]byte(body), ModelInfo(g, v))
		require.NoError(t, err)
		var buf bytes.Buffer
		res, err := Query(context.Background(), s, "m", g, v, q, &buf)
		require.NoError(t, err, body)
		var want [][]any
		for r := range n {
			i, j, k := uint64(r%100), uint64(r/100%60), uint64(r/6000)
			if q.BBox.IJK != nil && (i < 3 || i > 90 || k < 5 || k > 48) {
				continue
			}
			var val any
			if !grade.Null[r] {
				val = grade.Floats[r]
			} else if q.Output.ExcludeNullRows {
				continue
			}
			want = append(want, []any{i, j, k, val})
		}
		_, got := readParquetOutput(t, buf.Bytes(), []blockmodel.DataType{blockmodel.UInt32, blockmodel.UInt32, blockmodel.UInt32, blockmodel.Float64})
		require.Equal(t, len(want), len(got), body)
		require.Equal(t, want, got, body)
		require.Equal(t, int64(len(want)), res.Rows)
		f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err)
		groups := f.Metadata().RowGroups
		require.Greater(t, len(groups), 2, body)
		for gi, rg := range groups {
			if gi < len(groups)-1 {
				require.Equal(t, int64(bmstore.QueryRowGroup), rg.NumRows, "%s: row group %d", body, gi)
				require.NotZero(t, rg.Columns[3].MetaData.DictionaryPageOffset, "%s: grade of row group %d has a dictionary", body, gi)
			}
		}
	}
}

// TestQuerySlotsBounded: a query keeps three output row groups in flight
// on more than two cores, two on two cores or when three would exceed
// querySlotBudget (a wide query).
func TestQuerySlotsBounded(t *testing.T) {
	narrow := []outCol{{typ: blockmodel.UInt32}, {typ: blockmodel.UInt32}, {typ: blockmodel.UInt32}, {typ: blockmodel.Float64}}
	var wide []outCol
	for range 30 {
		wide = append(wide, outCol{typ: blockmodel.Float64})
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(4)
	require.Equal(t, 3, slotsFor(narrow))
	require.Equal(t, 2, slotsFor(wide))
	runtime.GOMAXPROCS(2)
	require.Equal(t, 2, slotsFor(narrow))
	require.Equal(t, 2, slotsFor(wide))
}

// TestIJKInto: the i, j and k ijkInto generates for selected rows from
// any row equal the geometry's ParentIJK of each selected row, with the
// selection's runs and by its flags, for every subset of the axes, after
// values already there; runs and the gaps between them cross rows and
// slabs of the grid.
func TestIJKInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 1))
	for _, n := range []blockmodel.Size3D{{NX: 1, NY: 1, NZ: 7}, {NX: 5, NY: 3, NZ: 4}, {NX: 250, NY: 2, NZ: 3}, {NX: 7, NY: 11, NZ: 13}} {
		g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(n, blockmodel.XYZ{X: 1, Y: 1, Z: 1}))
		require.NoError(t, err)
		total := g.NumParents()
		for it := range 200 {
			row0 := rng.Int64N(total)
			rows := 1 + rng.IntN(int(total-row0))
			sel := make([]bool, rows)
			for r := range sel {
				switch it % 3 {
				case 0, 1: // a row in 4 or in 50 left out
					sel[r] = rng.IntN([]int{4, 50}[it%3]) != 0
				default: // a row in 30 selected: gaps longer than rows of the grid
					sel[r] = rng.IntN(30) == 0
				}
			}
			var want [3][]uint32
			for r, s := range sel {
				if s {
					i, j, k := g.ParentIJK(row0 + int64(r))
					for axis, v := range [3]uint32{i, j, k} {
						want[axis] = append(want[axis], v)
					}
				}
			}
			for _, s := range []selection{{sel: sel}, {sel: sel, runs: bruteRuns(sel)}} {
				// every subset of the axes asked, after values already there
				for asked := 1; asked < 8; asked++ {
					var got [3][]uint32
					var dst [3]*[]uint32
					for axis := range 3 {
						if asked>>axis&1 != 0 {
							got[axis] = []uint32{9, 9, 9}
							dst[axis] = &got[axis]
						}
					}
					ijkInto(dst, g, row0, s)
					for axis := range 3 {
						if dst[axis] == nil {
							require.Nil(t, got[axis])
							continue
						}
						require.Equal(t, []uint32{9, 9, 9}, got[axis][:3])
						require.Equal(t, append([]uint32{}, want[axis]...), got[axis][3:], "%v axis %d from row %d (%d rows), runs %v", n, axis, row0, rows, s.runs != nil)
					}
				}
			}
		}
	}
}

// bruteRuns is the runs [a, b) of consecutive true flags, one flag at a time.
func bruteRuns(sel []bool) [][2]int {
	runs := [][2]int{}
	for r := 0; r < len(sel); r++ {
		if sel[r] && (r == 0 || !sel[r-1]) {
			runs = append(runs, [2]int{r, r + 1})
		} else if sel[r] {
			runs[len(runs)-1][1] = r + 1
		}
	}
	return runs
}

// TestExcludeNullRows: a row stays selected when one of the user columns
// has a value (not a null flag, not NaN), for one float column (the path
// 8 flags at a time, any length and alignment), for an integer column and
// for two columns; selectRows without a box selects every row.
func TestExcludeNullRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 2))
	for n := range 40 {
		for range 20 {
			floats, ints := bmstore.EmptyColumn(blockmodel.Float64, n), bmstore.EmptyColumn(blockmodel.Int64, n)
			floats.Null, ints.Null = []bool{}, []bool{}
			for range n {
				f := rng.Float64()
				if rng.IntN(5) == 0 {
					f = math.NaN()
				}
				floats.Floats, floats.Null = append(floats.Floats, f), append(floats.Null, rng.IntN(3) == 0)
				ints.Ints, ints.Null = append(ints.Ints, 1), append(ints.Null, rng.IntN(3) == 0)
			}
			scanned := []bmstore.Column{floats, ints}
			base := make([]bool, n)
			for r := range base {
				base[r] = rng.IntN(4) != 0
			}
			for _, users := range [][]int{{0}, {1}, {0, 1}} {
				cols := []outCol{{system: blockmodel.ColI, scan: -1}}
				for _, u := range users {
					cols = append(cols, outCol{scan: u, user: true})
				}
				want := make([]bool, n)
				for r := range want {
					for _, u := range users {
						want[r] = want[r] || (base[r] && !scanned[u].IsNull(r))
					}
				}
				sel := append([]bool{}, base...)
				excludeNullRows(sel, cols, scanned)
				require.Equal(t, want, sel, "%d rows, columns %v", n, users)
			}
		}
		all := selectRows([]bool{false}, nil, bmwire.BBox{}, n)
		require.Len(t, all, n+1)
		require.Equal(t, slices.Repeat([]bool{true}, n), all[1:])
	}
}

// TestSelectionRuns: selectionOf finds the runs of selected rows a brute
// force finds (8 flags at a time, across word edges), nil when they
// average fewer than 16 rows; pickSel picks the same either way.
func TestSelectionRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	var buf [][2]int
	for it := range 3000 {
		n := rng.IntN(300)
		sel := make([]bool, n)
		gap := []int{2, 5, 40, 1000}[it%4]
		for r := range sel {
			sel[r] = rng.IntN(gap) != 0
		}
		if it%7 == 0 { // a long false stretch
			from := rng.IntN(n + 1)
			clear(sel[from:min(n, from+1+rng.IntN(40))])
		}
		s := selectionOf(sel, &buf)
		want := bruteRuns(sel)
		if len(want) > n/16 {
			require.Nil(t, s.runs, "%d runs in %d rows", len(want), n)
		} else {
			require.Equal(t, want, append([][2]int{}, s.runs...))
		}
		vals := make([]int, n)
		for r := range vals {
			vals[r] = r
		}
		wantPick := []int{-1}
		for r, ok := range sel {
			if ok {
				wantPick = append(wantPick, r)
			}
		}
		require.Equal(t, wantPick, pickSel([]int{-1}, vals, s))
		require.Equal(t, wantPick, pickSel([]int{-1}, vals, selection{sel: sel, runs: want}))
	}
}
