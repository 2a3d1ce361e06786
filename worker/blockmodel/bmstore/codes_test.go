package bmstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// requireCodes checks the codes of a float column read from dictionary
// chunks: well formed, below their dictionary's size, one value a code in
// each span, and dicts spans with a dictionary (one a chunk read).
func requireCodes(t *testing.T, c *Column, dicts int, what string) {
	t.Helper()
	require.True(t, c.coded(), what)
	seen := 0
	for i, sp := range c.codeSpans {
		end := len(c.Floats)
		if i+1 < len(c.codeSpans) {
			end = c.codeSpans[i+1].from
		}
		if sp.dict == nil {
			continue
		}
		seen++
		values := map[uint32]uint64{}
		for r := sp.from; r < end; r++ {
			if c.IsNull(r) {
				continue
			}
			code, bits := c.codes[r], math.Float64bits(c.Floats[r])
			require.Less(t, int(code), sp.dict.size, "%s row %d", what, r)
			if v, ok := values[code]; ok {
				require.Equal(t, v, bits, "%s row %d: code %d has two values", what, r, code)
			}
			values[code] = bits
		}
	}
	require.Equal(t, dicts, seen, what)
}

// codedDicts builds floatDict's dictionary of col, and of col without its
// codes, and requires the same outcome, values and indices.
func requireSameDict(t *testing.T, col *Column, what string) {
	t.Helper()
	plain := *col
	plain.codes, plain.codeSpans = nil, nil
	var a, b floatDict
	okA, okB := a.build(&plain), b.build(col)
	require.Equal(t, okA, okB, what)
	if okA {
		require.Equal(t, a.values, b.values, what)
		require.Equal(t, a.idx, b.idx, what)
	}
}

// TestScannedCodes: float column files with dictionary chunks (several
// row groups, every null layout, Float32 and Float64) read in batches
// that cross row groups give codes a chunk; a chunk without dictionary
// gives rows without codes.
func TestScannedCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 3))
	dir := t.TempDir()
	const group = 20_000
	n := 3*group + 77
	for name, pattern := range nullPatterns {
		for _, typ := range []DataType{blockmodel.Float32, blockmodel.Float64} {
			want := fewValues(rng, typ, n, pattern)
			what := fmt.Sprintf("%s %s", name, typ)
			path := filepath.Join(dir, "c.parquet")
			writeColumnFile(t, path, &want, group)
			got, _ := readColumnFile(t, path, typ, n, 0, func() int { return 1 + rng.IntN(30_000) }, true)
			requireSameFast(t, &want, &got, what)
			dicts := 0
			for lo := 0; lo < n; lo += group {
				if wantDictionary(&want, lo, min(n, lo+group)) {
					dicts++
				}
			}
			if dicts == 0 {
				require.Empty(t, got.codes, what)
				continue
			}
			requireCodes(t, &got, dicts, what)
			requireSameDict(t, &got, what)
		}
	}
	// a dictionary chunk between chunks of distinct values (PLAIN)
	want := newColumn(blockmodel.Float64, 3*group)
	for r := range 3 * group {
		v := rng.Float64()
		if r/group == 1 {
			v = float64(rng.IntN(50))
		}
		want.Floats, want.Null = append(want.Floats, v), append(want.Null, false)
	}
	path := filepath.Join(dir, "mixed.parquet")
	writeColumnFile(t, path, &want, group)
	got, _ := readColumnFile(t, path, blockmodel.Float64, 3*group, 0, fixedBatch(7_000), true)
	requireSameFast(t, &want, &got, "mixed")
	requireCodes(t, &got, 1, "mixed")
	require.Equal(t, []codeSpan{{from: 0}, {from: group, dict: got.codeSpans[1].dict}, {from: 2 * group}}, got.codeSpans)
	require.NotNil(t, got.codeSpans[1].dict)
}

// sameCode returns two rows a < b with values and the same code of one
// span with a dictionary.
func sameCode(c *Column) (a, b int, ok bool) {
	for i, sp := range c.codeSpans {
		end := len(c.Floats)
		if i+1 < len(c.codeSpans) {
			end = c.codeSpans[i+1].from
		}
		first := map[uint32]int{}
		for r := sp.from; r < end && sp.dict != nil; r++ {
			if c.IsNull(r) {
				continue
			}
			if f, seen := first[c.codes[r]]; seen {
				return f, r, true
			}
			first[c.codes[r]] = r
		}
	}
	return 0, 0, false
}

// TestFloatDictCodes: the dictionary and indices floatDict builds with
// codes are those it builds from the values alone, with spans of several
// dictionaries and spans without, nulls and NaN; codes that do not hold
// (a code with two values, a code past its dictionary) are dropped, and
// two codes of one value are one entry.
func TestFloatDictCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 4))
	for it := range 200 {
		typ := []DataType{blockmodel.Float64, blockmodel.Float32}[it%2]
		n := dictMinRows + rng.IntN(20_000)
		col := Column{Type: typ}
		pool := 1 + rng.IntN(3000)
		if it%10 == 0 {
			pool = n // distinct values: PLAIN
		}
		// spans: a dictionary of pool values (shuffled codes), or none
		for r := 0; r < n; {
			end := min(n, r+1+rng.IntN(n/2))
			var dict *codeDict
			perm := rng.Perm(pool)
			if rng.IntN(4) != 0 {
				dict = &codeDict{size: pool}
			}
			col.codesFrom(r, dict)
			for ; r < end; r++ {
				k := rng.IntN(pool)
				v := float64(k) / 8
				if typ == blockmodel.Float32 {
					v = float64(float32(v))
				}
				null := rng.IntN(10) == 0
				switch {
				case null:
					v = math.NaN()
				case rng.IntN(50) == 0:
					v = math.NaN() // a NaN value: a null too
				}
				code := uint32(0)
				if dict != nil {
					code = uint32(perm[k])
				}
				col.Floats, col.Null, col.codes = append(col.Floats, v), append(col.Null, null), append(col.codes, code)
			}
		}
		what := fmt.Sprintf("case %d (%s, %d rows, %d values)", it, typ, n, pool)
		require.True(t, col.coded(), what)
		requireSameDict(t, &col, what)
		// two codes of one value: the same entry
		if sp := col.codeSpans[len(col.codeSpans)-1]; sp.dict != nil && sp.dict.size < 1<<20 {
			sp.dict.size++ // an extra code for the value of the last row
			last := len(col.Floats) - 1
			col.codes[last] = uint32(sp.dict.size - 1)
			requireSameDict(t, &col, what+", two codes of a value")
		}
		var d floatDict
		_, complete, valid := d.fill(&col, col.Null, true)
		require.True(t, valid, what)
		// a code with two values, a code past its dictionary: dropped (seen
		// when the dictionary is not given up before)
		if a, b, ok := sameCode(&col); ok {
			for _, bad := range []func(c *Column){
				func(c *Column) { c.Floats[b] += 1 },
				func(c *Column) { c.codes[a] = 1 << 30 },
			} {
				broken := col
				broken.Floats, broken.codes = append([]float64{}, col.Floats...), append([]uint32{}, col.codes...)
				bad(&broken)
				_, _, valid := d.fill(&broken, broken.Null, true)
				require.True(t, !valid || !complete, what)
				requireSameDict(t, &broken, what+", codes broken")
			}
		}
	}
}

// spanOf is the dictionary of the span holding row r of c.
func spanOf(c *Column, r int) *codeDict {
	var d *codeDict
	for _, sp := range c.codeSpans {
		if sp.from <= r {
			d = sp.dict
		}
	}
	return d
}

// TestPickCodes: the rows a query selects from batches with codes (runs
// or flags, batches cut anywhere) keep their dictionary and code, rows
// from a batch without codes get none, and the writer's dictionary of the
// result is the one of its values alone.
func TestPickCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 5))
	dir := t.TempDir()
	const group, n = 20_000, 70_000
	want := fewValues(rng, blockmodel.Float64, n, nullPatterns["alternate"])
	path := filepath.Join(dir, "c.parquet")
	writeColumnFile(t, path, &want, group)
	src, _ := readColumnFile(t, path, blockmodel.Float64, n, 0, fixedBatch(n), true)
	requireCodes(t, &src, 4, "source")
	plain := src
	plain.codes, plain.codeSpans = nil, nil
	for it := range 50 {
		dst := newColumn(blockmodel.Float64, 0)
		type origin struct {
			dict *codeDict
			code uint32
		}
		var wantRows []origin
		for lo := 0; lo < n; {
			hi := min(n, lo+1+rng.IntN(30_000))
			from := &src
			if rng.IntN(5) == 0 {
				from = &plain
			}
			sel := make([]bool, hi-lo)
			var runs [][2]int
			for r := 0; r < len(sel); {
				k := 1 + rng.IntN(100)
				if rng.IntN(3) != 0 {
					runs = append(runs, [2]int{r, min(len(sel), r+k)})
					for x := r; x < min(len(sel), r+k); x++ {
						sel[x] = true
					}
				}
				r += k + rng.IntN(5)
			}
			if it%2 == 0 {
				runs = nil // by flags
			}
			at := len(dst.Floats)
			for r, s := range sel {
				if s {
					dst.Floats = append(dst.Floats, from.Floats[lo+r])
					dst.Null = append(dst.Null, from.Null[lo+r])
					o := origin{}
					if from == &src {
						o = origin{spanOf(&src, lo+r), src.codes[lo+r]}
					}
					wantRows = append(wantRows, o)
				}
			}
			dst.PickCodes(from, at, lo, runs, sel)
			lo = hi
		}
		what := fmt.Sprintf("selection %d", it)
		require.True(t, dst.coded(), what)
		for r, o := range wantRows {
			d := spanOf(&dst, r)
			require.Equal(t, o.dict, d, "%s row %d", what, r)
			if d != nil {
				require.Equal(t, o.code, dst.codes[r], "%s row %d", what, r)
			}
		}
		requireSameDict(t, &dst, what)
	}
}
