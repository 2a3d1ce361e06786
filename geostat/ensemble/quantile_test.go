package ensemble

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

// stableSorted is the oracle of the order statistics: v sorted stably by
// value (−0 and +0 keep their order).
func stableSorted(v []float64) []float64 {
	s := slices.Clone(v)
	slices.SortStableFunc(s, cmp.Compare[float64])
	return s
}

// checkOrderStatistics places the order statistics of every level of the
// bench workload and more (0, 1, and positions that fall on and between
// order statistics) and compares them, and the quantiles, bit for bit with
// those of the stable sort; v is left unchanged.
func checkOrderStatistics(t testing.TB, v []float64, what string) {
	levels := []float64{0, 0.1, 0.5, 0.9, 1, 0.37, 0.999}
	lo, hi := firstExtremes(v)
	var s quantScratch
	keep := slices.Clone(v)
	pos := wantedPositions(nil, levels, len(v))
	w := orderStatistics(v, lo, hi, pos, &s)
	require.Equal(t, keep, v, "%s: v changed", what)
	want := stableSorted(v)
	for _, p := range pos {
		require.Equal(t, math.Float64bits(want[p]), math.Float64bits(w[p]), "%s: n=%d position %d", what, len(v), p)
	}
	for _, q := range levels {
		require.Equal(t, math.Float64bits(quantileAt(want, q)), math.Float64bits(quantileAt(w, q)), "%s: n=%d level %v", what, len(v), q)
	}
	// The bucket order: v sorted stably by bucket (one bucket: v).
	byBucket := slices.Clone(v)
	if s.nb > 0 {
		slices.SortStableFunc(byBucket, func(x, y float64) int {
			return cmp.Compare(int((x-s.lo)*s.scale), int((y-s.lo)*s.scale))
		})
	}
	for i := range v {
		require.Equal(t, math.Float64bits(byBucket[i]), math.Float64bits(s.sorted[i]), "%s: n=%d bucket order at %d", what, len(v), i)
	}
	// With the squares asked for, the same positions and, when the buckets
	// were used, sumSquares bit for bit.
	var s2 quantScratch
	m := sum(v) / float64(len(v))
	s2.squares, s2.mean = true, m
	w2 := orderStatistics(v, lo, hi, pos, &s2)
	for _, p := range pos {
		require.Equal(t, math.Float64bits(w[p]), math.Float64bits(w2[p]), "%s: n=%d position %d with squares", what, len(v), p)
	}
	if s2.haveSS {
		require.Equal(t, math.Float64bits(sumSquares(v, m)), math.Float64bits(s2.ss), "%s: n=%d sum of squares", what, len(v))
	} else {
		require.Zero(t, s2.nb, "%s: n=%d buckets used but no sum of squares", what, len(v))
	}
	// Counts and sums above cutoffs in [lo, hi) from the buckets: cutoffs
	// at values (ties: strictly greater) and between values.
	if lo == hi {
		return
	}
	for i := 0; i < len(want); i += 1 + len(want)/17 {
		for _, c := range []float64{want[i], want[i] + (want[min(i+1, len(want)-1)]-want[i])/2} {
			if !(c >= lo && c < hi) {
				continue
			}
			wn, wt := countAbove(v, c)
			n, tot := s.above(s.sorted[:len(v)], c)
			require.Equal(t, wn, n, "%s: n=%d count above %v", what, len(v), c)
			// Bit for bit the documented order: the bucket holding c
			// (masked), then the later buckets, in bucket order.
			a, e := 0, len(v)
			if s.nb > 0 {
				bc := int((c - s.lo) * s.scale)
				a, e = len(v), len(v)
				for i := len(v) - 1; i >= 0; i-- {
					bi := int((byBucket[i] - s.lo) * s.scale)
					if bi > bc {
						a, e = i, i
					} else if bi == bc {
						a = i
					}
				}
			}
			_, bt := countAbove(byBucket[a:e], c)
			if e < len(v) {
				bt += sum(byBucket[e:])
			}
			require.Equal(t, math.Float64bits(bt), math.Float64bits(tot), "%s: n=%d sum above %v in bucket order", what, len(v), c)
			abs := 0.0
			for _, x := range v {
				abs += math.Abs(x)
			}
			if math.IsInf(abs, 0) {
				continue // the sums overflow, in either order
			}
			require.InDelta(t, wt, tot, 1e-14*float64(len(v))*abs, "%s: n=%d sum above %v", what, len(v), c)
		}
	}
}

// The bucketed order statistics equal those of a full stable sort, bit for
// bit, on random, tied, all-equal, ±0, sorted, reversed, skewed
// (exponential, lognormal, one far outlier) and extreme-range cells.
func TestOrderStatisticsMatchSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	patterns := map[string]func(i, n int) float64{
		"uniform":     func(i, n int) float64 { return rng.Float64() },
		"ties":        func(i, n int) float64 { return float64(rng.IntN(3)) },
		"grid":        func(i, n int) float64 { return math.Round(rng.ExpFloat64()*8) / 4 },
		"all equal":   func(i, n int) float64 { return 1.5 },
		"sorted":      func(i, n int) float64 { return float64(i) },
		"reversed":    func(i, n int) float64 { return float64(n - i) },
		"organ pipe":  func(i, n int) float64 { return float64(min(i, n-i)) },
		"sawtooth":    func(i, n int) float64 { return float64(i%2*n + i/2) },
		"±0":          func(i, n int) float64 { return math.Copysign(0, float64(i%2)-0.5) },
		"±0 and ±1":   func(i, n int) float64 { return math.Copysign(float64(rng.IntN(2)), rng.Float64()-0.5) },
		"exponential": func(i, n int) float64 { return rng.ExpFloat64() },
		"lognormal":   func(i, n int) float64 { return math.Exp(2 * rng.NormFloat64()) },
		"outlier": func(i, n int) float64 {
			if i == n/3 {
				return 1e12
			}
			return rng.Float64()
		},
		"huge range": func(i, n int) float64 { return math.MaxFloat64 * (2*rng.Float64() - 1) },
		"tiny range": func(i, n int) float64 { return 1 + float64(rng.IntN(4))*0x1p-52 },
		"subnormal":  func(i, n int) float64 { return float64(rng.IntN(5)) * 0x1p-1074 },
		"zero-inflated": func(i, n int) float64 {
			if rng.IntN(2) == 0 {
				return 0
			}
			return rng.ExpFloat64()
		},
		// Nested clusters: each bucket's values are again one cluster
		// and a far one, down past maxDepth.
		"nested scales": func(i, n int) float64 { return math.Ldexp(rng.Float64(), -20*rng.IntN(8)) },
		"mostly equal": func(i, n int) float64 {
			if rng.IntN(10) == 0 {
				return rng.NormFloat64()
			}
			return 2
		},
	}
	for _, n := range []int{1, 2, 3, 5, 16, 17, 40, 64, 100, 101, 255, 256, 257, 1001} {
		for name, gen := range patterns {
			for rep := range 3 {
				v := make([]float64, n)
				for i := range v {
					v[i] = gen(i, n)
				}
				checkOrderStatistics(t, v, name)
				_ = rep
			}
		}
	}
}

// Every position of every cell, not only the bench's: windows at the top
// bucket (padding past the last value), buckets of four and five values,
// −0 and +0 mixed in one short bucket among spread values, ties at bucket
// edges, long buckets, cells of 17 to 255 values (byte counters) and more.
func TestOrderStatisticsEveryPosition(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	patterns := map[string]func(i, n int) float64{
		"uniform": func(i, n int) float64 { return rng.Float64() },
		// A few zeros of both signs in the middle bucket of values
		// spread over [−1, 1] that keep out of it.
		"±0 in a short bucket": func(i, n int) float64 {
			if i%23 == 5 {
				return math.Copysign(0, float64(i%2)-0.5)
			}
			x := 0.01 + 0.99*rng.Float64()
			return math.Copysign(x, rng.Float64()-0.5)
		},
		// Values on the edges of the 255 buckets between 0 and 255.
		"bucket edges": func(i, n int) float64 {
			if i == 0 {
				return 0
			}
			if i == 1 {
				return 255
			}
			return float64(rng.IntN(256))
		},
		"pairs": func(i, n int) float64 { return float64(rng.IntN(n / 2)) },
		"top heavy": func(i, n int) float64 {
			if i%3 == 0 {
				return 1
			}
			return rng.Float64()
		},
		"lognormal": func(i, n int) float64 { return math.Exp(3 * rng.NormFloat64()) },
	}
	for _, n := range []int{2, 5, 16, 17, 18, 20, 25, 26, 33, 51, 52, 100, 254, 255, 256, 300} {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		for name, gen := range patterns {
			for rep := range 4 {
				v := make([]float64, n)
				for i := range v {
					v[i] = gen(i, n)
				}
				if rep%2 == 1 {
					rng.Shuffle(n, func(i, j int) { v[i], v[j] = v[j], v[i] })
				}
				lo, hi := firstExtremes(v)
				var s quantScratch
				got := orderStatistics(v, lo, hi, all, &s)
				want := stableSorted(v)
				for p := range want {
					require.Equal(t, math.Float64bits(want[p]), math.Float64bits(got[p]), "%s n=%d rep %d position %d", name, n, rep, p)
				}
				// Again with the scratch of the cell before (stale
				// values past this cell's).
				got = orderStatistics(v[:n-1], lo, hi, all[:n-1], &s)
				want = stableSorted(v[:n-1])
				if lo2, hi2 := firstExtremes(v[:n-1]); lo2 != lo || hi2 != hi {
					got = orderStatistics(v[:n-1], lo2, hi2, all[:n-1], &s)
				}
				for p := range want {
					require.Equal(t, math.Float64bits(want[p]), math.Float64bits(got[p]), "%s n=%d rep %d position %d (shorter)", name, n-1, rep, p)
				}
			}
		}
	}
}

// Two reducers with different levels share a goroutine's scratch (and its
// remembered wanted positions) with cells of different lengths: each gives
// what it gives alone, bit for bit.
func TestTwoLocationWiseShareScratch(t *testing.T) {
	const cells, R = 1500, 40
	cols := randomEnsemble(23, cells, R)
	opsA := Operations{Quantiles: []float64{0.1, 0.9}, ProbabilityAbove: []float64{1}}
	opsB := Operations{Summary: true, Quantiles: []float64{0.25, 0.5, 0.75, 0.975}, MeanAbove: []float64{2}}
	ctx := geostat.WithWorkers(context.Background(), 1)
	run := func(ops ...Operations) [][]Output {
		var rs []Reducer
		var ls []*LocationWise
		for _, o := range ops {
			l, err := NewLocationWise(o, cells, R)
			require.NoError(t, err)
			rs, ls = append(rs, l), append(ls, l)
		}
		require.NoError(t, Process(ctx, NewColumnsSource(cols, 0), rs...))
		var out [][]Output
		for _, l := range ls {
			out = append(out, l.Outputs())
		}
		return out
	}
	both := run(opsA, opsB)
	alone := [][]Output{run(opsA)[0], run(opsB)[0]}
	for r := range both {
		for k := range both[r] {
			for i := range both[r][k].Values {
				require.Equal(t, math.Float64bits(alone[r][k].Values[i]), math.Float64bits(both[r][k].Values[i]), "%s cell %d", both[r][k].Name, i)
			}
		}
	}
}

func TestWantedPositions(t *testing.T) {
	assert.Equal(t, []int{0, 4}, wantedPositions(nil, []float64{1, 0}, 5))
	// 0.1·4 = 0.4 needs positions 0 and 1; 0.5·4 = 2 only 2; 0.05·4 = 0.2
	// again 0 and 1.
	assert.Equal(t, []int{0, 1, 2}, wantedPositions(nil, []float64{0.5, 0.1, 0.05}, 5))
	assert.Equal(t, []int{0}, wantedPositions(nil, []float64{0.3, 1}, 1))
	assert.Equal(t, []int{9, 10, 49, 50, 89, 90}, wantedPositions(nil, []float64{0.1, 0.5, 0.9}, 100))
}

// FuzzOrderStatistics checks the bucketed order statistics against the
// stable sort on cells made from the fuzzer's bytes (any float64 bit
// patterns; NaN and ±Inf are dropped as the tiles drop them).
func FuzzOrderStatistics(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64})
	f.Add(make([]byte, 8*40))
	seed := make([]byte, 8*100)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < len(seed); i += 8 {
		x := math.Float64bits(rng.ExpFloat64())
		for k := range 8 {
			seed[i+k] = byte(x >> (8 * k))
		}
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		var v []float64
		for i := 0; i+8 <= len(data); i += 8 {
			var x uint64
			for k := range 8 {
				x |= uint64(data[i+k]) << (8 * k)
			}
			if f := math.Float64frombits(x); f-f == 0 {
				v = append(v, f)
			}
		}
		if len(v) == 0 {
			return
		}
		checkOrderStatistics(t, v, "fuzz")
	})
}

// With quantiles requested, a cutoff below every value gives Mean>c equal
// to the mean bit for bit (both sums in realisation order) and Prob>c = 1;
// a cutoff at or above the maximum gives 0 and NaN.
func TestMeanAboveBelowMinimumIsMean(t *testing.T) {
	const cells, R = 200, 37
	rng := rand.New(rand.NewPCG(21, 22))
	cols := make([][]float64, R)
	for r := range cols {
		cols[r] = make([]float64, cells)
		for c := range cols[r] {
			cols[r][c] = 10 + rng.ExpFloat64()
		}
	}
	st, err := Compute(context.Background(), NewColumnsSource(cols, 64),
		Operations{Summary: true, Quantiles: []float64{0.5}, ProbabilityAbove: []float64{-1, 1e9}, MeanAbove: []float64{-1, 1e9}})
	require.NoError(t, err)
	for c := range cells {
		require.Equal(t, math.Float64bits(st.Mean[c]), math.Float64bits(st.MeanAbove[0][c]), "cell %d", c)
		require.Equal(t, 1.0, st.ProbabilityAbove[0][c])
		require.Equal(t, 0.0, st.ProbabilityAbove[1][c])
		require.True(t, math.IsNaN(st.MeanAbove[1][c]))
	}
}

// The small sorts are stable sorts, bit for bit: every cell of 2, 3 and 4
// values drawn from −1, −0, +0, 1 and 2 (ties and both zeros).
func TestSmallSortsStable(t *testing.T) {
	vals := []float64{-1, math.Copysign(0, -1), 0, 1, 2}
	for m := 2; m <= 4; m++ {
		idx := make([]int, m)
		for {
			w := make([]float64, m)
			for i, k := range idx {
				w[i] = vals[k]
			}
			want := stableSorted(w)
			sortStable(w)
			for i := range w {
				require.Equal(t, math.Float64bits(want[i]), math.Float64bits(w[i]), "m=%d %v", m, idx)
			}
			i := 0
			for ; i < m; i++ {
				idx[i]++
				if idx[i] < len(vals) {
					break
				}
				idx[i] = 0
			}
			if i == m {
				break
			}
		}
	}
}
