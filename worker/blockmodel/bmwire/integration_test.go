package bmwire_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// model builds a rotated model of a kind and its rows: a regular model's
// whole blocks, or sub-blocked parents split by split (given in a scrambled
// order and put into canonical order as a store would).
func model(t *testing.T, kind blockmodel.ModelType) *blockmodel.Blocks {
	t.Helper()
	origin := blockmodel.XYZ{X: 1000, Y: 2000, Z: 300}
	rot := []blockmodel.RotationItem{{Axis: "z", Angle: 45}, {Axis: "x", Angle: 30}}
	parents := blockmodel.Size3D{NX: 4, NY: 3, NZ: 2}
	size := blockmodel.XYZ{X: 10, Y: 20, Z: 5}
	if kind == blockmodel.Regular {
		g, err := blockmodel.NewGeometry(origin, rot, blockmodel.RegularSize(parents, size))
		require.NoError(t, err)
		return g.WholeBlocks()
	}
	sub := map[blockmodel.ModelType]blockmodel.Size3D{
		blockmodel.FullySubBlocked: {NX: 2, NY: 2, NZ: 2}, blockmodel.Flexible: {NX: 4, NY: 2, NZ: 2},
		blockmodel.VariableOctree: {NX: 4, NY: 4, NZ: 2}}[kind]
	g, err := blockmodel.NewGeometry(origin, rot, blockmodel.SubBlockedSize(kind, parents, sub, size))
	require.NoError(t, err)
	var parent []uint32
	var start, end []uint8
	for p := g.NumParents() - 1; p >= 0; p-- {
		for _, c := range split(kind, p, g.Subblocks()) {
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

// fileRow is one row of an update file in every identity form, with its
// values.
type fileRow struct {
	ijk       [3]uint32
	sidx      uint32
	s, e      [3]uint8
	xyz, dxyz [3]float64
	cu        float64
	tag       string
}

// rowOf returns the file row of a model row, its coordinates off the
// centroid by a hundredth of the matching tolerance, and tag naming its
// identity.
func rowOf(b *blockmodel.Blocks, r int64, cu float64) fileRow {
	i, j, k, sub := b.Identity(r)
	c, d := b.Centroid(r), b.Extent(r)
	for a := range c {
		c[a] += 1e-5 * d[a] * float64(a+1) / 3
	}
	return fileRow{ijk: [3]uint32{i, j, k}, sidx: sub.Sidx, s: sub.Start, e: sub.End, xyz: c, dxyz: d, cu: cu,
		tag: identityTag(i, j, k, sub.Start, sub.End)}
}

func identityTag(i, j, k uint32, s, e [3]uint8) string {
	return fmt.Sprintf("%d.%d.%d:%v-%v", i, j, k, s, e)
}

// The Parquet schemas of each identity form.
type (
	regularIndex struct {
		I   uint32  `parquet:"i"`
		J   uint32  `parquet:"j"`
		K   uint32  `parquet:"k"`
		Cu  float64 `parquet:"cu"`
		Tag string  `parquet:"tag"`
	}
	sidxIndex struct {
		I    uint32  `parquet:"i"`
		J    uint32  `parquet:"j"`
		K    uint32  `parquet:"k"`
		Sidx uint32  `parquet:"sidx"`
		Cu   float64 `parquet:"cu"`
		Tag  string  `parquet:"tag"`
	}
	flexibleIndex struct {
		I       uint32  `parquet:"i"`
		J       uint32  `parquet:"j"`
		K       uint32  `parquet:"k"`
		StartSI uint8   `parquet:"start_si"`
		StartSJ uint8   `parquet:"start_sj"`
		StartSK uint8   `parquet:"start_sk"`
		EndSI   uint8   `parquet:"end_si"`
		EndSJ   uint8   `parquet:"end_sj"`
		EndSK   uint8   `parquet:"end_sk"`
		Cu      float64 `parquet:"cu"`
		Tag     string  `parquet:"tag"`
	}
	centroid struct {
		X   float64 `parquet:"x"`
		Y   float64 `parquet:"y"`
		Z   float64 `parquet:"z"`
		Cu  float64 `parquet:"cu"`
		Tag string  `parquet:"tag"`
	}
	centroidSize struct {
		X   float64 `parquet:"x"`
		Y   float64 `parquet:"y"`
		Z   float64 `parquet:"z"`
		DX  float64 `parquet:"dx"`
		DY  float64 `parquet:"dy"`
		DZ  float64 `parquet:"dz"`
		Cu  float64 `parquet:"cu"`
		Tag string  `parquet:"tag"`
	}
)

func writeRows[T any](t *testing.T, rows []fileRow, conv func(fileRow) T) []byte {
	t.Helper()
	out := make([]T, len(rows))
	for n, r := range rows {
		out[n] = conv(r)
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, parquet.MaxRowsPerRowGroup(7))
	_, err := w.Write(out)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// writeParquet writes rows in an identity form with parquet-go.
func writeParquet(t *testing.T, kind blockmodel.ModelType, index bool, rows []fileRow) []byte {
	switch {
	case !index && kind == blockmodel.Regular:
		return writeRows(t, rows, func(r fileRow) centroid { return centroid{r.xyz[0], r.xyz[1], r.xyz[2], r.cu, r.tag} })
	case !index:
		return writeRows(t, rows, func(r fileRow) centroidSize {
			return centroidSize{r.xyz[0], r.xyz[1], r.xyz[2], r.dxyz[0], r.dxyz[1], r.dxyz[2], r.cu, r.tag}
		})
	case kind == blockmodel.Regular:
		return writeRows(t, rows, func(r fileRow) regularIndex { return regularIndex{r.ijk[0], r.ijk[1], r.ijk[2], r.cu, r.tag} })
	case kind == blockmodel.Flexible:
		return writeRows(t, rows, func(r fileRow) flexibleIndex {
			return flexibleIndex{r.ijk[0], r.ijk[1], r.ijk[2], r.s[0], r.s[1], r.s[2], r.e[0], r.e[1], r.e[2], r.cu, r.tag}
		})
	}
	return writeRows(t, rows, func(r fileRow) sidxIndex { return sidxIndex{r.ijk[0], r.ijk[1], r.ijk[2], r.sidx, r.cu, r.tag} })
}

// writeCSV writes rows in an identity form, the value columns first and
// the identity columns in reverse order (the reader goes by name).
func writeCSV(kind blockmodel.ModelType, index bool, rows []fileRow) []byte {
	ident := blockmodel.CoordinateColumns(kind)
	if index {
		ident = blockmodel.IndexColumns(kind)
	}
	var b strings.Builder
	b.WriteString("tag,cu")
	for n := len(ident) - 1; n >= 0; n-- {
		b.WriteString("," + ident[n])
	}
	b.WriteString("\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		cells := map[string]string{
			"i": fmt.Sprint(r.ijk[0]), "j": fmt.Sprint(r.ijk[1]), "k": fmt.Sprint(r.ijk[2]), "sidx": fmt.Sprint(r.sidx),
			"start_si": fmt.Sprint(r.s[0]), "start_sj": fmt.Sprint(r.s[1]), "start_sk": fmt.Sprint(r.s[2]),
			"end_si": fmt.Sprint(r.e[0]), "end_sj": fmt.Sprint(r.e[1]), "end_sk": fmt.Sprint(r.e[2]),
			"x": f(r.xyz[0]), "y": f(r.xyz[1]), "z": f(r.xyz[2]), "dx": f(r.dxyz[0]), "dy": f(r.dxyz[1]), "dz": f(r.dxyz[2]),
		}
		b.WriteString(r.tag + "," + f(r.cu))
		for n := len(ident) - 1; n >= 0; n-- {
			b.WriteString("," + cells[ident[n]])
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// bruteRow finds the model row a file row names by a linear search over
// every row: by indices and sub-block (sidx or corners per kind), or by
// centroid and, sub-blocked, extent within the matching tolerance. -1 when
// none does.
func bruteRow(b *blockmodel.Blocks, index bool, fr fileRow) int64 {
	kind := b.Geometry().Type()
	for r := int64(0); r < b.NumRows(); r++ {
		i, j, k, sub := b.Identity(r)
		if index {
			if [3]uint32{i, j, k} != fr.ijk {
				continue
			}
			switch kind {
			case blockmodel.Regular:
			case blockmodel.Flexible:
				if sub.Start != fr.s || sub.End != fr.e {
					continue
				}
			default:
				if sub.Sidx != fr.sidx {
					continue
				}
			}
			return r
		}
		c, d := b.Centroid(r), b.Extent(r)
		ok := true
		for a := range 3 {
			// the tolerance is along the model axes; a world distance
			// below it is below it along every axis.
			if math.Abs(c[a]-fr.xyz[a]) > blockmodel.MatchTolerance*min(d[0], d[1], d[2]) ||
				(kind.SubBlocked() && math.Abs(d[a]-fr.dxyz[a]) > blockmodel.MatchTolerance*d[a]) {
				ok = false
			}
		}
		if ok {
			return r
		}
	}
	return -1
}

// Update files of every kind, in both identity forms and both formats,
// read against the model's Blocks: each value lands on the row a brute-force
// search names, and a file with rows matching nothing or a block twice
// fails listing each with its row number and, where known, i, j, k.
func TestUpdateFileAgainstBlocks(t *testing.T) {
	cols := []bmwire.ValueColumn{{Title: "cu", Type: blockmodel.Float64}, {Title: "tag", Type: blockmodel.Utf8}}
	for _, kind := range []blockmodel.ModelType{blockmodel.Regular, blockmodel.FullySubBlocked, blockmodel.Flexible, blockmodel.VariableOctree} {
		b := model(t, kind)
		rng := rand.New(rand.NewPCG(7, uint64(len(kind))))
		// A subset of the rows (two in three), in random order.
		var rows []fileRow
		var subset []int64
		for r := int64(0); r < b.NumRows(); r++ {
			if r%3 != 2 {
				subset = append(subset, r)
			}
		}
		rng.Shuffle(len(subset), func(a, c int) { subset[a], subset[c] = subset[c], subset[a] })
		for n, r := range subset {
			rows = append(rows, rowOf(b, r, float64(n)*1.5+0.25))
		}
		// Rows that match nothing: a parent outside the model, and a block
		// of a parent that is not one of its rows (a sub-block of a whole
		// parent; for a regular model, a centroid between blocks).
		g := b.Geometry()
		outside := rowOf(b, 0, -1)
		outside.ijk[0] = uint32(g.Parents()[0])
		outside.xyz = g.LocalToWorld(-5, 1, 1)
		var absent fileRow
		if kind == blockmodel.Regular {
			absent = rowOf(b, 5, -2)
			absent.xyz = g.LocalToWorld(15, 20, 2.5) // on the face between two blocks
			absent.ijk[2] = 2                        // past the last layer
		} else {
			// Parent 2 is whole in every kind (2 % 3 == 2): its unit
			// sub-cell (0, 0, 0) is no row, nor is sidx 1.
			require.Len(t, split(kind, 2, g.Subblocks()), 1)
			i, j, k := g.ParentIJK(2)
			s, e := [3]uint8{}, [3]uint8{1, 1, 1}
			absent = fileRow{ijk: [3]uint32{i, j, k}, sidx: 1, s: s, e: e, xyz: g.SubCentroid(i, j, k, s, e),
				dxyz: g.SubExtent(s, e), cu: -2, tag: "absent"}
		}
		bad := append(append([]fileRow{}, rows[:5]...), outside, rows[1], absent)
		bad = append(bad, rows[5:]...)
		bad = append(bad, rows[0])

		for _, index := range []bool{true, false} {
			for _, format := range []string{bmwire.FormatParquet, bmwire.FormatCSV} {
				name := fmt.Sprintf("%s/index=%v/%s", kind, index, format)
				in := bmwire.DefaultInput()
				in.Format = format
				spec := bmwire.FileSpec{Kind: kind, Input: in, Columns: cols, BatchRows: 5}
				file := func(rows []fileRow) []byte {
					if format == bmwire.FormatCSV {
						return writeCSV(kind, index, rows)
					}
					return writeParquet(t, kind, index, rows)
				}

				t.Run(name, func(t *testing.T) {
					f := file(rows)
					c := bmwire.NewCollector(cols)
					sum, err := bmwire.Read(bytes.NewReader(f), int64(len(f)), spec, b, c)
					require.NoError(t, err)
					require.Equal(t, int64(len(rows)), sum.Rows)
					assert.Equal(t, index, sum.IndexForm)
					require.Len(t, c.Rows, len(rows))
					lo, hi := [3]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}, [3]int64{-1, -1, -1}
					for n, fr := range rows {
						want := bruteRow(b, index, fr)
						require.GreaterOrEqual(t, want, int64(0), "file row %d", n+1)
						require.Equal(t, want, c.Rows[n], "file row %d", n+1)
						assert.Equal(t, fr.cu, c.Values[0].Float[n])
						i, j, k, sub := b.Identity(c.Rows[n])
						assert.Equal(t, identityTag(i, j, k, sub.Start, sub.End), c.Values[1].Str[n], "the value landed on the row it names")
						for a, v := range [3]uint32{i, j, k} {
							lo[a], hi[a] = min(lo[a], int64(v)), max(hi[a], int64(v))
						}
					}
					require.NotNil(t, sum.BBox)
					assert.Equal(t, blockmodel.NewIJKBox(lo, hi), *sum.BBox)
				})

				t.Run(name+"/unmatched-and-duplicate", func(t *testing.T) {
					f := file(bad)
					_, err := bmwire.Read(bytes.NewReader(f), int64(len(f)), spec, b, bmwire.NewCollector(cols))
					var fe *bmwire.FileError
					require.True(t, errors.As(err, &fe), "%v", err)
					var want []bmwire.RowError
					seen := map[int64]bool{}
					for n, fr := range bad {
						r := bruteRow(b, index, fr)
						switch {
						case r < 0:
							e := bmwire.RowError{Row: int64(n + 1), Message: "matches no block of the model"}
							if index {
								e.IJK = &fr.ijk
							}
							want = append(want, e)
						case seen[r]:
							i, j, k, _ := b.Identity(r)
							want = append(want, bmwire.RowError{Row: int64(n + 1), IJK: &[3]uint32{i, j, k},
								Message: "matches a block another row of the file matched (duplicate)"})
						}
						seen[r] = true
					}
					require.Len(t, want, 4, "two unmatched rows, two duplicates")
					assert.Equal(t, want, fe.Errors)
					assert.Equal(t, int64(4), fe.Total)
					var out bytes.Buffer
					require.NoError(t, fe.WriteCSV(&out))
					lines := strings.Split(strings.TrimSpace(out.String()), "\n")
					require.Len(t, lines, 5)
					assert.Equal(t, "row,i,j,k,message", lines[0])
					for n, e := range want {
						ijk := ",,"
						if e.IJK != nil {
							ijk = fmt.Sprintf("%d,%d,%d", e.IJK[0], e.IJK[1], e.IJK[2])
						}
						assert.Equal(t, fmt.Sprintf("%d,%s,%s", e.Row, ijk, e.Message), lines[n+1])
					}
				})
			}
		}
	}
}

// hidden hides a *blockmodel.Blocks behind the Locator interface, so the
// reader locates every row with Locate.
type hidden struct{ blockmodel.Locator }

// Files mostly in row order (rows located from the row after the last,
// LocateNear) read the same as through Locate alone: every row in order,
// with a row left out, a row out of place, a duplicate and a row matching
// nothing, for each sub-blocked kind and identity by index.
func TestInOrderFilesReadAsLocate(t *testing.T) {
	cols := []bmwire.ValueColumn{{Title: "cu", Type: blockmodel.Float64}, {Title: "tag", Type: blockmodel.Utf8}}
	for _, kind := range []blockmodel.ModelType{blockmodel.FullySubBlocked, blockmodel.Flexible, blockmodel.VariableOctree} {
		b := model(t, kind)
		n := b.NumRows()
		var all []fileRow
		for r := range n {
			all = append(all, rowOf(b, r, float64(r)))
		}
		bad := rowOf(b, n/2, -1)
		bad.ijk[0] = uint32(b.Geometry().Parents()[0])
		files := map[string][]fileRow{
			"in order":     all,
			"one left out": append(append([]fileRow{}, all[:n/3]...), all[n/3+1:]...),
			"out of place": append(append([]fileRow{all[n/2]}, all[:n/2]...), all[n/2+1:]...),
			"duplicate":    append(append([]fileRow{}, all...), all[n/4]),
			"no match":     append(append(append([]fileRow{}, all[:n/2]...), bad), all[n/2:]...),
		}
		for name, rows := range files {
			data := writeParquet(t, kind, true, rows)
			spec := bmwire.FileSpec{Kind: kind, Input: bmwire.DefaultInput(), Columns: cols, BatchRows: 16}
			near := bmwire.NewCollector(cols)
			sNear, errNear := bmwire.Read(bytes.NewReader(data), int64(len(data)), spec, b, near)
			plain := bmwire.NewCollector(cols)
			sPlain, errPlain := bmwire.Read(bytes.NewReader(data), int64(len(data)), spec, hidden{b}, plain)
			what := fmt.Sprintf("%s, %s", kind, name)
			assert.Equal(t, errPlain, errNear, what)
			assert.Equal(t, sPlain, sNear, what)
			assert.Equal(t, plain.Rows, near.Rows, what)
			assert.Equal(t, plain.Values, near.Values, what)
			if name == "in order" {
				require.NoError(t, errNear, what)
				require.Len(t, near.Rows, int(n), what)
			}
		}
	}
}
