package bmjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

var kinds = []blockmodel.ModelType{blockmodel.Regular, blockmodel.FullySubBlocked, blockmodel.Flexible, blockmodel.VariableOctree}

// cuboid is a sub-block of a parent: corners start (inclusive) to end
// (exclusive) on its sub-cell grid.
type cuboid struct{ s, e [3]uint8 }

// split returns the sub-blocks of parent p of a kind: some parents split
// (each kind its own way), the others whole.
func split(kind blockmodel.ModelType, p int64, n [3]int) []cuboid {
	whole := []cuboid{{e: [3]uint8{uint8(n[0]), uint8(n[1]), uint8(n[2])}}}
	switch kind {
	case blockmodel.FullySubBlocked:
		if p%3 != 0 {
			return whole
		}
		var out []cuboid
		for z := uint8(0); z < uint8(n[2]); z++ {
			for y := uint8(0); y < uint8(n[1]); y++ {
				for x := uint8(0); x < uint8(n[0]); x++ {
					out = append(out, cuboid{[3]uint8{x, y, z}, [3]uint8{x + 1, y + 1, z + 1}})
				}
			}
		}
		return out
	case blockmodel.Flexible: // n = (4, 2, 2)
		switch p % 3 {
		case 0:
			return []cuboid{{[3]uint8{0, 0, 0}, [3]uint8{1, 2, 2}}, {[3]uint8{1, 0, 0}, [3]uint8{4, 1, 2}},
				{[3]uint8{1, 1, 0}, [3]uint8{4, 2, 1}}, {[3]uint8{1, 1, 1}, [3]uint8{4, 2, 2}}}
		case 1:
			return []cuboid{{[3]uint8{0, 0, 0}, [3]uint8{2, 2, 2}}, {[3]uint8{2, 0, 0}, [3]uint8{4, 2, 2}}}
		}
		return whole
	case blockmodel.VariableOctree: // n = (4, 4, 2)
		if p%3 != 0 {
			return whole
		}
		out := []cuboid{
			{[3]uint8{0, 0, 0}, [3]uint8{1, 1, 1}}, {[3]uint8{1, 0, 0}, [3]uint8{2, 1, 1}},
			{[3]uint8{0, 1, 0}, [3]uint8{1, 2, 1}}, {[3]uint8{1, 1, 0}, [3]uint8{2, 2, 1}},
		}
		for z := uint8(0); z < 2; z++ {
			for y := uint8(0); y < 4; y += 2 {
				for x := uint8(0); x < 4; x += 2 {
					if x+y+z > 0 {
						out = append(out, cuboid{[3]uint8{x, y, z}, [3]uint8{x + 2, y + 2, z + 1}})
					}
				}
			}
		}
		return out
	}
	return whole
}

// geometry returns the rotated test geometry of a kind: 4×3×2 parents of
// 10×20×5 at (1000, 2000, 300), rotated [z 45, x 30].
func geometry(t testing.TB, kind blockmodel.ModelType) *blockmodel.Geometry {
	t.Helper()
	origin := blockmodel.XYZ{X: 1000, Y: 2000, Z: 300}
	rot := []blockmodel.RotationItem{{Axis: "z", Angle: 45}, {Axis: "x", Angle: 30}}
	parents := blockmodel.Size3D{NX: 4, NY: 3, NZ: 2}
	size := blockmodel.XYZ{X: 10, Y: 20, Z: 5}
	var so blockmodel.SizeOptions
	if kind == blockmodel.Regular {
		so = blockmodel.RegularSize(parents, size)
	} else {
		sub := map[blockmodel.ModelType]blockmodel.Size3D{
			blockmodel.FullySubBlocked: {NX: 2, NY: 2, NZ: 2}, blockmodel.Flexible: {NX: 4, NY: 2, NZ: 2},
			blockmodel.VariableOctree: {NX: 4, NY: 4, NZ: 2}}[kind]
		so = blockmodel.SubBlockedSize(kind, parents, sub, size)
	}
	g, err := blockmodel.NewGeometry(origin, rot, so)
	require.NoError(t, err)
	return g
}

// splitBlocks builds the rows of g split by split, built directly (not
// through the store).
func splitBlocks(t testing.TB, g *blockmodel.Geometry) *blockmodel.Blocks {
	t.Helper()
	if !g.Type().SubBlocked() {
		return g.WholeBlocks()
	}
	var parent []uint32
	var start, end []uint8
	for p := g.NumParents() - 1; p >= 0; p-- {
		for _, c := range split(g.Type(), p, g.Subblocks()) {
			parent = append(parent, uint32(p))
			start, end = append(start, c.s[:]...), append(end, c.e[:]...)
		}
	}
	perm := blockmodel.CanonicalPermutation(g, parent, start)
	cp, cs, ce := make([]uint32, len(parent)), make([]uint8, len(start)), make([]uint8, len(end))
	for n, r := range perm {
		cp[n] = parent[r]
		copy(cs[3*n:3*n+3], start[3*r:3*r+3])
		copy(ce[3*n:3*n+3], end[3*r:3*r+3])
	}
	b, err := blockmodel.NewBlocks(g, cp, cs, ce)
	require.NoError(t, err)
	return b
}

// createModel stores version 1 of a model with the rows b: no user
// column; sub-blocked rows that are not all whole as internal columns.
func createModel(t testing.TB, s *bmstore.Store, id string, b *blockmodel.Blocks) *bmstore.Version {
	t.Helper()
	v, err := CreateModel(context.Background(), s, bmstore.Model{ID: id}, b, bmstore.Meta{CreatedBy: "u"})
	require.NoError(t, err)
	return v
}

// bf is the brute-force model: the rows and, per column title, one value
// per row (nil for null), and the per-row version_id.
type bf struct {
	b     *blockmodel.Blocks
	types map[string]blockmodel.DataType
	vals  map[string][]any
	vid   []int64
}

func newBF(b *blockmodel.Blocks) *bf {
	m := &bf{b: b, types: map[string]blockmodel.DataType{}, vals: map[string][]any{}, vid: make([]int64, b.NumRows())}
	for r := range m.vid {
		m.vid[r] = 1
	}
	return m
}

// fileRow is one row of an update file: the model row it names and its
// values per title (nil: null).
type fileRow struct {
	row  int64
	vals map[string]any
}

// apply is the brute-force update of value columns: rows of the file get
// their values and version v; with replace the other rows of the named
// columns become null.
func (m *bf) apply(v int64, rows []fileRow, titles []string, types []blockmodel.DataType, replace bool) {
	n := m.b.NumRows()
	for c, title := range titles {
		col, ok := m.vals[title]
		if !ok || replace {
			old := col
			col = make([]any, n)
			if !replace {
				copy(col, old)
			}
			m.vals[title] = col
			m.types[title] = types[c]
		}
		for _, fr := range rows {
			col[fr.row] = fr.vals[title]
		}
	}
	for _, fr := range rows {
		m.vid[fr.row] = v
	}
}

// check compares the store's version v with the brute-force model.
func (m *bf) check(t *testing.T, s *bmstore.Store, id string, v *bmstore.Version) {
	t.Helper()
	user := v.UserColumns()
	var titles []string
	for _, c := range user {
		titles = append(titles, c.Title)
		require.Equal(t, m.types[c.Title], c.DataType, "type of %s", c.Title)
	}
	var want []string
	for title := range m.vals {
		want = append(want, title)
	}
	require.ElementsMatch(t, want, titles)
	for _, c := range user {
		require.Equal(t, m.vals[c.Title], readAll(t, s, id, v, c.ColID), "column %s", c.Title)
	}
	vid := readAll(t, s, id, v, bmstore.VersionIDColumn)
	for r, x := range vid {
		require.Equal(t, m.vid[r], x, "version_id of row %d", r)
	}
	rows, err := Rows(context.Background(), s, id, v, m.b.Geometry())
	require.NoError(t, err)
	require.True(t, rows.SameRows(m.b))
}

// readAll reads a whole column of a version as values (nil for null).
func readAll(t testing.TB, s *bmstore.Store, id string, v *bmstore.Version, col string) []any {
	t.Helper()
	sc, err := s.Scan(id, v.VersionID, []string{col}, 0, v.Rows, 5)
	require.NoError(t, err)
	defer sc.Close()
	var out []any
	for {
		cols, err := sc.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		c := &cols[0]
		for r := range c.Len() {
			out = append(out, storeValue(c, r))
		}
	}
}

func storeValue(c *bmstore.Column, r int) any {
	if c.IsNull(r) {
		return nil
	}
	switch familyOf(c.Type) {
	case famFloat:
		return c.Floats[r]
	case famInt:
		return c.Ints[r]
	case famUint:
		return c.Uints[r]
	case famBool:
		return c.Bools[r]
	}
	return c.Strings[r]
}

// fileCol is a value column of an update file.
type fileCol struct {
	name string
	typ  blockmodel.DataType
}

// identity returns the identity cells of a model row in a form: index or
// coordinate (centroid off by a hundredth of the tolerance).
func identity(b *blockmodel.Blocks, r int64, index bool) map[string]any {
	i, j, k, sub := b.Identity(r)
	if index {
		m := map[string]any{"i": uint64(i), "j": uint64(j), "k": uint64(k)}
		switch b.Geometry().Type() {
		case blockmodel.Flexible:
			for a, n := range []string{"si", "sj", "sk"} {
				m["start_"+n], m["end_"+n] = uint64(sub.Start[a]), uint64(sub.End[a])
			}
		case blockmodel.FullySubBlocked, blockmodel.VariableOctree:
			m["sidx"] = uint64(sub.Sidx)
		}
		return m
	}
	c, d := b.Centroid(r), b.Extent(r)
	m := map[string]any{}
	for a, n := range []string{"x", "y", "z"} {
		m[n] = c[a] + 1e-5*d[a]*float64(a+1)/3
		if b.Geometry().Type().SubBlocked() {
			m["d"+n] = d[a]
		}
	}
	return m
}

// identityCols returns the identity columns of a form with their types.
func identityCols(kind blockmodel.ModelType, index bool) []fileCol {
	names := blockmodel.CoordinateColumns(kind)
	if index {
		names = blockmodel.IndexColumns(kind)
	}
	var out []fileCol
	for _, n := range names {
		t, _ := blockmodel.SystemColumnType(n)
		out = append(out, fileCol{n, t})
	}
	return out
}

// writeParquetFile writes rows (cells by column name; a missing or nil
// cell is null) with every column optional.
func writeParquetFile(t testing.TB, cols []fileCol, rows []map[string]any) []byte {
	t.Helper()
	g := parquet.Group{}
	for _, c := range cols {
		var n parquet.Node
		switch c.typ {
		case blockmodel.UInt32:
			n = parquet.Uint(32)
		case blockmodel.UInt8:
			n = parquet.Uint(8)
		case blockmodel.UInt16:
			n = parquet.Uint(16)
		case blockmodel.Int32:
			n = parquet.Int(32)
		case blockmodel.Int64:
			n = parquet.Int(64)
		case blockmodel.Float64:
			n = parquet.Leaf(parquet.DoubleType)
		case blockmodel.Boolean:
			n = parquet.Leaf(parquet.BooleanType)
		case blockmodel.Utf8:
			n = parquet.String()
		default:
			t.Fatalf("no parquet type for %s", c.typ)
		}
		g[c.name] = parquet.Optional(n)
	}
	schema := parquet.NewSchema("update", g)
	types := map[string]blockmodel.DataType{}
	for _, c := range cols {
		types[c.name] = c.typ
	}
	paths := schema.Columns()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[any](&buf, schema, parquet.MaxRowsPerRowGroup(7))
	for _, cells := range rows {
		row := make(parquet.Row, 0, len(paths))
		for ci, path := range paths {
			name := path[0]
			x := cells[name]
			if x == nil {
				row = append(row, parquet.NullValue().Level(0, 0, ci))
				continue
			}
			var v parquet.Value
			switch types[name] {
			case blockmodel.UInt32, blockmodel.UInt8, blockmodel.UInt16:
				v = parquet.Int32Value(int32(uint32(x.(uint64))))
			case blockmodel.Int32:
				v = parquet.Int32Value(int32(x.(int64)))
			case blockmodel.Int64:
				v = parquet.Int64Value(x.(int64))
			case blockmodel.Float64:
				v = parquet.DoubleValue(x.(float64))
			case blockmodel.Boolean:
				v = parquet.BooleanValue(x.(bool))
			case blockmodel.Utf8:
				v = parquet.ByteArrayValue([]byte(x.(string)))
			}
			row = append(row, v.Level(0, 1, ci))
		}
		_, err := w.WriteRows([]parquet.Row{row})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// writeCSVFile writes rows as CSV, columns in reverse order (the reader
// goes by name); null is an empty field.
func writeCSVFile(cols []fileCol, rows []map[string]any) []byte {
	var b strings.Builder
	for n := len(cols) - 1; n >= 0; n-- {
		b.WriteString(cols[n].name)
		if n > 0 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('\n')
	for _, cells := range rows {
		for n := len(cols) - 1; n >= 0; n-- {
			switch x := cells[cols[n].name].(type) {
			case nil:
			case float64:
				b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
			case string:
				b.WriteString(`"` + strings.ReplaceAll(x, `"`, `""`) + `"`)
			default:
				fmt.Fprint(&b, x)
			}
			if n > 0 {
				b.WriteByte(',')
			}
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// updateFile writes the file of an update: the rows scrambled by rng (nil:
// in the order given), identity form index or coordinates, value columns
// vals.
func updateFile(t testing.TB, b *blockmodel.Blocks, rows []fileRow, vals []fileCol, index, csv bool, rng *rand.Rand) []byte {
	t.Helper()
	cols := append(identityCols(b.Geometry().Type(), index), vals...)
	var cells []map[string]any
	for _, fr := range rows {
		m := identity(b, fr.row, index)
		for k, v := range fr.vals {
			m[k] = v
		}
		cells = append(cells, m)
	}
	if rng != nil {
		rng.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
	}
	if csv {
		return writeCSVFile(cols, cells)
	}
	return writeParquetFile(t, cols, cells)
}

// pickRows returns a random subset of about frac of the rows, with values
// for the columns drawn by gen (nil: null about one time in eight).
func pickRows(b *blockmodel.Blocks, frac float64, cols []fileCol, rng *rand.Rand) []fileRow {
	var out []fileRow
	for r := range b.NumRows() {
		if rng.Float64() >= frac {
			continue
		}
		fr := fileRow{row: r, vals: map[string]any{}}
		for _, c := range cols {
			if rng.IntN(8) == 0 {
				fr.vals[c.name] = nil
				continue
			}
			switch c.typ {
			case blockmodel.Float64:
				fr.vals[c.name] = math.Round(rng.NormFloat64()*1e6) / 1e3
			case blockmodel.Int32:
				fr.vals[c.name] = int64(rng.IntN(2000) - 1000)
			case blockmodel.UInt16:
				fr.vals[c.name] = uint64(rng.IntN(65536))
			case blockmodel.Boolean:
				fr.vals[c.name] = rng.IntN(2) == 0
			case blockmodel.Utf8:
				fr.vals[c.name] = []string{"LMS1", "LMS2", "a,b \"q\""}[rng.IntN(3)]
			}
		}
		out = append(out, fr)
	}
	return out
}

// decodeUpdate decodes an update body against the latest version.
func decodeUpdate(t testing.TB, s *bmstore.Store, id string, g *blockmodel.Geometry, body string) *bmwire.Update {
	t.Helper()
	n, err := s.Latest(id)
	require.NoError(t, err)
	v, err := s.Version(id, n)
	require.NoError(t, err)
	u, err := bmwire.DecodeUpdate([]byte(body), ModelInfo(g, v))
	require.NoError(t, err)
	return u
}

// apply runs ApplyUpdate with a file held in memory (nil: none).
func apply(t testing.TB, s *bmstore.Store, id string, g *blockmodel.Geometry, u *bmwire.Update, file []byte) (*bmstore.Version, error) {
	t.Helper()
	in := UpdateInput{ModelID: id, Geometry: g, Update: u, CreatedBy: "u", BatchRows: 5}
	if file != nil {
		in.File, in.FileSize = bytes.NewReader(file), int64(len(file))
	}
	return ApplyUpdate(context.Background(), s, in)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sortedTitles returns the user column titles of a version, sorted.
func sortedTitles(v *bmstore.Version) []string {
	var out []string
	for _, c := range v.UserColumns() {
		out = append(out, c.Title)
	}
	sort.Strings(out)
	return out
}
