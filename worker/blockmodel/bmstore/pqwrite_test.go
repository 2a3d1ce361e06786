package bmstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// nullPatterns are columns' null layouts that exercise every branch of the
// definition level encoder: none, all, alternating, sparse, runs just
// below and above the RLE threshold, and a page edge inside a run.
var nullPatterns = map[string]func(r int, rng *rand.Rand) bool{
	"none":      func(int, *rand.Rand) bool { return false },
	"all":       func(int, *rand.Rand) bool { return true },
	"alternate": func(r int, _ *rand.Rand) bool { return r%2 == 0 },
	"sparse":    func(_ int, rng *rand.Rand) bool { return rng.IntN(50) == 0 },
	"fifth":     func(_ int, rng *rand.Rand) bool { return rng.IntN(5) == 0 },
	"runs15":    func(r int, _ *rand.Rand) bool { return r/15%2 == 1 },
	"runs16":    func(r int, _ *rand.Rand) bool { return r/16%2 == 1 },
	"runs17x3":  func(r int, _ *rand.Rand) bool { return (r+3)/17%3 == 0 },
	"edge":      func(r int, _ *rand.Rand) bool { return r >= pageRows-5 && r < pageRows+40 },
	"page":      func(r int, _ *rand.Rand) bool { return r >= pageRows && r < 2*pageRows }, // a page of nulls only
}

// patterned is a random column of type t whose nulls follow pattern.
func patterned(rng *rand.Rand, t DataType, n int, null func(int, *rand.Rand) bool) Column {
	c := randColumn(rng, t, n)
	for r := range n {
		c.Null[r] = null(r, rng)
	}
	return c
}

// TestWriterFilesReadByArrow: tables written by tableWriter, every type
// and every null pattern, several row groups and pages (a string page cut
// by bytes), read with Arrow's Parquet reader (an implementation
// independent of this writer and of parquet-go) give back every value and
// null, under parquet-go's schema.
func TestWriterFilesReadByArrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	const group = 70_000 // two pages a row group, the second short
	n := 2*group + 123
	for name, pattern := range nullPatterns {
		var names []string
		var want []Column
		for _, typ := range allTypes {
			names = append(names, "c_"+string(typ))
			want = append(want, patterned(rng, typ, n, pattern))
		}
		// one long-string column: pages cut at pageBytes
		long := newColumn(blockmodel.Utf8, n)
		for r := range n {
			long.Strings = append(long.Strings, fmt.Sprintf("%050d", r))
			long.Null = append(long.Null, pattern(r, rng))
		}
		names, want = append(names, "long"), append(want, long)
		// floats of few distinct values in the first two row groups
		// (dictionary chunks), distinct in the last (plain)
		for _, typ := range []DataType{blockmodel.Float64, blockmodel.Float32, blockmodel.Float16} {
			c := patterned(rng, typ, n, pattern)
			for r := range 2 * group {
				c.Floats[r] = float64(rng.IntN(3000)-1000) / 8
			}
			names, want = append(names, "dict_"+string(typ)), append(want, c)
		}
		// a float column whose first row group starts with dictProbe
		// distinct values and then repeats them (PLAIN by the probe, though
		// a quarter of its values are distinct), the second of few values
		probe := patterned(rng, blockmodel.Float64, n, pattern)
		for r := range group {
			probe.Floats[r] = float64(r % dictProbe)
		}
		for r := group; r < 2*group; r++ {
			probe.Floats[r] = float64(rng.IntN(3000))
		}
		names, want = append(names, "dict_probe"), append(want, probe)
		// integers in runs of equal values in the first two row groups
		// (run dictionary chunks: runs of 1 to 60, the mean above
		// runDictMinRun; negative values too), random in the last
		for _, typ := range allTypes {
			if k, _ := kindOf(typ); k != kInt && k != kUint {
				continue
			}
			c := patterned(rng, typ, n, pattern)
			for r := 0; r < 2*group; {
				v, k := int64(rng.IntN(90)), 1+rng.IntN(60)
				if k, _ := kindOf(typ); k == kInt {
					v -= 40
				}
				for ; k > 0 && r < 2*group; k-- {
					if c.Ints != nil {
						c.Ints[r] = v
					} else {
						c.Uints[r] = uint64(v)
					}
					r++
				}
			}
			names, want = append(names, "runs_"+string(typ)), append(want, c)
		}
		types := make([]DataType, len(want))
		for i := range want {
			types[i] = want[i].Type
		}

		var buf bytes.Buffer
		tw, err := newTableWriter(&buf, names, types, group)
		require.NoError(t, err)
		for lo := 0; lo < n; lo += 33_333 {
			var batch []*Column
			for i := range want {
				b := slice(&want[i], lo, min(n, lo+33_333))
				batch = append(batch, &b)
			}
			require.NoError(t, tw.write(batch))
		}
		require.NoError(t, tw.close())

		// parquet-go sees its own schema and the row groups
		pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err, name)
		schema, err := schemaElements(names, types)
		require.NoError(t, err)
		require.Equal(t, schema, []format.SchemaElement(pf.Metadata().Schema), name)
		require.Len(t, pf.RowGroups(), 3, name)
		dicts := 0
		for g, rg := range pf.Metadata().RowGroups {
			for c, cc := range rg.Columns {
				dict := cc.MetaData.DictionaryPageOffset != 0
				require.Equal(t, wantDictionary(&want[c], g*group, min(n, (g+1)*group)), dict, "%s %s row group %d: dictionary", name, names[c], g)
				if dict {
					dicts++
					require.True(t, strings.HasPrefix(names[c], "dict_") || strings.HasPrefix(names[c], "runs_"), "%s %s: only columns of few values or long runs have dictionaries", name, names[c])
				}
			}
		}
		if name != "all" {
			require.Positive(t, dicts, name)
		}

		// Arrow reads every value
		rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, name)
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 10_000}, memory.DefaultAllocator)
		require.NoError(t, err, name)
		table, err := fr.ReadTable(context.Background())
		require.NoError(t, err, name)
		require.Equal(t, int64(n), table.NumRows(), name)
		for c := range want {
			got := arrowColumn(t, table.Column(c), types[c])
			requireSameFast(t, &want[c], &got, name+" "+names[c])
		}
		table.Release()
		require.NoError(t, rdr.Close())
	}
}

// arrowColumn converts a column Arrow read into a Column of type t.
func arrowColumn(t *testing.T, col *arrow.Column, typ DataType) Column {
	out := newColumn(typ, col.Len())
	for _, chunk := range col.Data().Chunks() {
		for i := range chunk.Len() {
			if chunk.IsNull(i) {
				out.appendNull()
				continue
			}
			out.Null = append(out.Null, false)
			switch a := chunk.(type) {
			case *array.Boolean:
				out.Bools = append(out.Bools, a.Value(i))
			case *array.Int8:
				out.Ints = append(out.Ints, int64(a.Value(i)))
			case *array.Int16:
				out.Ints = append(out.Ints, int64(a.Value(i)))
			case *array.Int32:
				out.Ints = append(out.Ints, int64(a.Value(i)))
			case *array.Int64:
				out.Ints = append(out.Ints, a.Value(i))
			case *array.Date32:
				out.Ints = append(out.Ints, int64(a.Value(i)))
			case *array.Timestamp:
				out.Ints = append(out.Ints, int64(a.Value(i)))
			case *array.Uint8:
				out.Uints = append(out.Uints, uint64(a.Value(i)))
			case *array.Uint16:
				out.Uints = append(out.Uints, uint64(a.Value(i)))
			case *array.Uint32:
				out.Uints = append(out.Uints, uint64(a.Value(i)))
			case *array.Uint64:
				out.Uints = append(out.Uints, a.Value(i))
			case *array.Float32:
				out.Floats = append(out.Floats, float64(a.Value(i)))
			case *array.Float64:
				out.Floats = append(out.Floats, a.Value(i))
			case *array.String:
				out.Strings = append(out.Strings, a.Value(i))
			default:
				t.Fatalf("column of %s read as Arrow %s", typ, chunk.DataType())
			}
		}
	}
	return out
}

// TestColumnFileDictionaryPages: a column file of few distinct floats (its
// chunks dictionary-encoded) and one of distinct floats read back through
// colReader's typed path, from the start and after a skip, every null
// layout.
func TestColumnFileDictionaryPages(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	n := 2*storeRowGroup + 1000
	for name, pattern := range nullPatterns {
		for _, typ := range []DataType{blockmodel.Float64, blockmodel.Float32, blockmodel.Float16} {
			for _, distinct := range []bool{false, true} {
				want := patterned(rng, typ, n, pattern)
				if !distinct {
					for r := range want.Floats {
						want.Floats[r] = float64(rng.IntN(5000)) / 1000
						if typ != blockmodel.Float64 {
							want.Floats[r] = float64(float32(want.Floats[r]))
						}
					}
				}
				path := t.TempDir() + "/c.parquet"
				f, err := os.Create(path)
				require.NoError(t, err)
				tw, err := newTableWriter(f, []string{"v"}, []DataType{typ}, storeRowGroup)
				require.NoError(t, err)
				require.NoError(t, tw.write([]*Column{&want}))
				require.NoError(t, tw.close())
				require.NoError(t, f.Close())
				what := fmt.Sprintf("%s %s distinct=%v", name, typ, distinct)

				for _, from := range []int{0, storeRowGroup + 77} {
					cr, err := openColReader(path, typ)
					require.NoError(t, err)
					require.NoError(t, cr.skip(int64(from)))
					got := newColumn(typ, n)
					for got.Len() < n-from {
						k, err := cr.read(&got, 50_000)
						require.NoError(t, err)
						require.Positive(t, k)
						if name != "all" {
							require.Nil(t, cr.values, "%s: pages read typed, not value by value", what)
						}
					}
					require.NoError(t, cr.close())
					sub := slice(&want, from, n)
					requireSameFast(t, &sub, &got, what)
				}
			}
		}
	}
}

// TestSetBits sets ranges of a bitset against a bit-by-bit oracle: ranges
// within a word, across words, whole words and empty.
func TestSetBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	for range 2000 {
		n := int64(1 + rng.IntN(300))
		got, want := make([]uint64, (n+63)/64), make([]uint64, (n+63)/64)
		for range 3 {
			from := rng.Int64N(n + 1)
			to := from + rng.Int64N(n-from+1)
			setBits(got, from, to)
			for r := from; r < to; r++ {
				want[r>>6] |= 1 << (r & 63)
			}
		}
		require.Equal(t, want, got)
	}
}

// TestQueryWriterLentGroups: row groups lent to WriteGroup are written as
// they are (a short last group too), each released exactly once, never
// before it is encoded (the lender scribbles over a released group); a bad
// group is refused and released at once.
func TestQueryWriterLentGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	types := []DataType{blockmodel.UInt32, blockmodel.Float64, blockmodel.Utf8, blockmodel.UInt32, blockmodel.UInt8, blockmodel.UInt32}
	names := []string{"i", "grade", "code", "i32", "u8_32", "runs32"}
	u32 := []bool{false, false, false, true, true, true} // lent in U32
	sizes := []int{QueryRowGroup, QueryRowGroup, QueryRowGroup, 12_345}
	var want []Column
	for _, typ := range types {
		want = append(want, randColumn(rng, typ, 3*QueryRowGroup+12_345))
	}
	for r := range want[5].Uints { // runs of 40 (a run dictionary), some null
		want[5].Uints[r] = uint64(r / 40 % 7)
	}
	var buf bytes.Buffer
	q, err := NewQueryWriter(&buf, names, types, QueryOptions{})
	require.NoError(t, err)
	released := make(chan int, len(sizes))
	lo := 0
	for g, n := range sizes {
		group := make([]Column, len(want))
		for c := range want {
			group[c] = slice(&want[c], lo, lo+n)
			// a copy the writer may read until it releases it
			cp := newColumn(types[c], n)
			cp.appendRange(&group[c], 0, n)
			if u32[c] {
				cp.U32 = make([]uint32, n)
				for r, x := range cp.Uints {
					cp.U32[r] = uint32(x)
				}
				cp.Uints = nil
			}
			group[c] = cp
		}
		require.NoError(t, q.WriteGroup(group, func() {
			for c := range group { // the lender reuses its storage
				clear(group[c].Null)
				clear(group[c].Uints)
				clear(group[c].U32)
				clear(group[c].Floats)
				clear(group[c].Strings)
			}
			released <- g
		}))
		lo += n
	}
	require.NoError(t, q.Close())
	require.Len(t, released, len(sizes), "every group released once")
	require.Equal(t, int64(lo), q.Rows())

	rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 10_000}, memory.DefaultAllocator)
	require.NoError(t, err)
	table, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer table.Release()
	require.Equal(t, 4, rdr.NumRowGroups())
	for c := range want {
		got := arrowColumn(t, table.Column(c), types[c])
		requireSameFast(t, &want[c], &got, names[c])
	}
	for g := range 4 {
		md, err := rdr.MetaData().RowGroup(g).ColumnChunk(5)
		require.NoError(t, err)
		require.True(t, md.HasDictionaryPage(), "row group %d: runs of a U32 column are a run dictionary", g)
	}

	// the CSV writer reads U32 columns too
	var text bytes.Buffer
	cq, err := NewQueryWriter(&text, []string{"i"}, []DataType{blockmodel.UInt32}, QueryOptions{Format: "csv"})
	require.NoError(t, err)
	require.NoError(t, cq.WriteGroup([]Column{{Type: blockmodel.UInt32, U32: []uint32{7, 4294967295}, Null: []bool{false, false}}}, func() {}))
	require.NoError(t, cq.Close())
	require.Equal(t, "i\n7\n4294967295\n", strings.ReplaceAll(text.String(), "\r\n", "\n"))

	// a group of the wrong shape is refused and released
	q, err = NewQueryWriter(&bytes.Buffer{}, names, types, QueryOptions{})
	require.NoError(t, err)
	calls := 0
	err = q.WriteGroup([]Column{newColumn(blockmodel.UInt32, 0), newColumn(blockmodel.Float64, 0), newColumn(blockmodel.Utf8, 0)}, func() { calls++ })
	require.Error(t, err)
	require.Equal(t, 1, calls)
	big := []Column{randColumn(rng, blockmodel.UInt32, QueryRowGroup+1), randColumn(rng, blockmodel.Float64, QueryRowGroup+1), randColumn(rng, blockmodel.Utf8, QueryRowGroup+1)}
	require.Error(t, q.WriteGroup(big, func() { calls++ }))
	require.Equal(t, 2, calls)
}

// wantDictionary is the rule of floatDict.build and runDict.build for
// rows [lo, hi) of c: a chunk of at least dictMinRows rows; a float one
// whose distinct values are at most a quarter of its values (and at most
// dictMaxValues) and whose first dictProbe values (not null) are not all
// distinct, an integer one whose values (not null) make at most one
// run of equal values in runDictMinRun rows.
func wantDictionary(c *Column, lo, hi int) bool {
	if hi-lo < dictMinRows || c.Type == blockmodel.Boolean || c.Type == blockmodel.Utf8 {
		return false
	}
	if c.Floats == nil {
		runs := 0
		var prev any
		for r := lo; r < hi; r++ {
			if c.IsNull(r) {
				continue
			}
			var v any
			if c.Ints != nil {
				v = c.Ints[r]
			} else {
				v = c.Uints[r]
			}
			if runs == 0 || v != prev {
				runs, prev = runs+1, v
			}
		}
		return runs > 0 && runs <= (hi-lo)/runDictMinRun
	}
	distinct := map[uint64]bool{}
	present := 0
	probed := false // the first dictProbe values all distinct
	for r := lo; r < hi; r++ {
		if c.IsNull(r) {
			continue
		}
		present++
		if c.Type == blockmodel.Float64 {
			distinct[math.Float64bits(c.Floats[r])] = true
		} else {
			distinct[uint64(math.Float32bits(float32(c.Floats[r])))] = true
		}
		if present == dictProbe && len(distinct) == dictProbe {
			probed = true
		}
	}
	d := len(distinct)
	return !probed && d > 0 && 4*d <= present && d <= min(dictMaxValues, (hi-lo)/4)
}

// TestQueryWriterReusesIdleSlots: a lender of two row groups at a time
// (as a query on two cores) keeps the writer at two slots, however many
// groups it writes: a slot is idle again before its group is released,
// and an idle slot is taken before a new one is made.
func TestQueryWriterReusesIdleSlots(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the writer keeps one slot on one core")
	}
	rng := rand.New(rand.NewPCG(30, 5))
	q, err := NewQueryWriter(io.Discard, []string{"v"}, []DataType{blockmodel.Float64}, QueryOptions{})
	require.NoError(t, err)
	free := make(chan []Column, 2)
	for range 2 {
		free <- []Column{randColumn(rng, blockmodel.Float64, 1000)}
	}
	var busy atomic.Int32 // releases that came before their slot was idle
	for range 12 {
		g := <-free
		require.NoError(t, q.WriteGroup(g, func() {
			if len(q.tw.free) == 0 {
				busy.Add(1)
			}
			free <- g
		}))
	}
	require.NoError(t, q.Close())
	require.Zero(t, busy.Load())
	require.Equal(t, 2, q.tw.made)
}
