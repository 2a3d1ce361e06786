package ensemble

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

var (
	nanv = math.NaN()
	inf  = math.Inf(1)
)

// handEnsemble is 4 cells × 5 realisations, as realisation columns.
//
//	cell 0: 1 2 3 4 5            plain
//	cell 1: NaN 2 NaN 4 +Inf     two finite values
//	cell 2: all NaN              no value
//	cell 3: 7 7 7 7 7            ties, also at the cutoff 7
func handEnsemble() [][]float64 {
	cells := [][]float64{
		{1, 2, 3, 4, 5},
		{nanv, 2, nanv, 4, inf},
		{nanv, nanv, nanv, nanv, nanv},
		{7, 7, 7, 7, 7},
	}
	// Scramble cell 0's order: results must not depend on it.
	cells[0] = []float64{4, 1, 5, 3, 2}
	cols := make([][]float64, 5)
	for r := range cols {
		cols[r] = make([]float64, len(cells))
		for c := range cells {
			cols[r][c] = cells[c][r]
		}
	}
	return cols
}

// assertCells compares per-cell outputs to hand-computed values (NaN equals
// NaN), to 1e-14.
func assertCells(t *testing.T, what string, want, got []float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.IsNaN(want[i]) {
			assert.True(t, math.IsNaN(got[i]), "%s[%d] = %v, want NaN", what, i, got[i])
			continue
		}
		assert.InDelta(t, want[i], got[i], 1e-14, "%s[%d]", what, i)
	}
}

// The definitions on a hand-made ensemble: the values below are worked out
// by hand from the formulas of LocationWise (numpy's var and quantile give
// the same numbers).
func TestLocationWiseHand(t *testing.T) {
	ops := Operations{Summary: true, Quantiles: []float64{0.1, 0.25, 0.5, 0.9, 0, 1},
		ProbabilityAbove: []float64{3, 7}, MeanAbove: []float64{3, 5}}
	st, err := Compute(context.Background(), NewColumnsSource(handEnsemble(), 3), ops)
	require.NoError(t, err)
	assertCells(t, "min", []float64{1, 2, nanv, 7}, st.Min)
	assertCells(t, "max", []float64{5, 4, nanv, 7}, st.Max)
	assertCells(t, "mean", []float64{3, 3, nanv, 7}, st.Mean)
	// (4+1+0+1+4)/5 = 2; (1+1)/2 = 1.
	assertCells(t, "variance", []float64{2, 1, nanv, 0}, st.Variance)
	// Cell 0: h = q·4; cell 1: h = q·1 between 2 and 4.
	assertCells(t, "Q0.1", []float64{1.4, 2.2, nanv, 7}, st.Quantiles[0])
	assertCells(t, "Q0.25", []float64{2, 2.5, nanv, 7}, st.Quantiles[1])
	assertCells(t, "Q0.5", []float64{3, 3, nanv, 7}, st.Quantiles[2])
	assertCells(t, "Q0.9", []float64{4.6, 3.8, nanv, 7}, st.Quantiles[3])
	assertCells(t, "Q0", []float64{1, 2, nanv, 7}, st.Quantiles[4])
	assertCells(t, "Q1", []float64{5, 4, nanv, 7}, st.Quantiles[5])
	// Strictly greater: 3 is not above 3, 7 not above 7.
	assertCells(t, "P>3", []float64{0.4, 0.5, nanv, 1}, st.ProbabilityAbove[0])
	assertCells(t, "P>7", []float64{0, 0, nanv, 0}, st.ProbabilityAbove[1])
	assertCells(t, "M>3", []float64{4.5, 4, nanv, 7}, st.MeanAbove[0])
	assertCells(t, "M>5", []float64{nanv, nanv, nanv, 7}, st.MeanAbove[1])
}

func TestOutputsNamesAndOrder(t *testing.T) {
	l, err := NewLocationWise(Operations{Summary: true, Quantiles: []float64{0.9, 0.1},
		ProbabilityAbove: []float64{2, 0.5}, MeanAbove: []float64{1e-5}}, 4, 5)
	require.NoError(t, err)
	require.NoError(t, Process(context.Background(), NewColumnsSource(handEnsemble(), 0), l))
	var names []string
	for _, o := range l.Outputs() {
		names = append(names, o.Name)
		assert.Len(t, o.Values, 4)
	}
	assert.Equal(t, []string{"min", "max", "mean", "variance", "Quantile: 0.9", "Quantile: 0.1",
		"Prob>2.0", "Prob>0.5", "Mean>1e-05"}, names)
	assert.Equal(t, 0.9, l.Outputs()[4].Level)
	// Outputs alias the statistics.
	assert.Equal(t, l.Statistics().Quantiles[1], l.Outputs()[5].Values)
	only, err := NewLocationWise(Operations{MeanAbove: []float64{1}}, 4, 5)
	require.NoError(t, err)
	require.Len(t, only.Outputs(), 1)
	assert.Nil(t, only.Statistics().Min)
	assert.Nil(t, only.Statistics().Quantiles)
}

func TestFormatNumber(t *testing.T) {
	// Python's repr of the same floats.
	for x, want := range map[float64]string{
		0.1: "0.1", 2: "2.0", -3.5: "-3.5", 0: "0.0", 1e-5: "1e-05", 0.0001: "0.0001",
		1e16: "1e+16", 1.5e16: "1.5e+16", 1e15: "1000000000000000.0", 123456.5: "123456.5",
		9999999999999998: "9999999999999998.0",
	} {
		assert.Equal(t, want, FormatNumber(x), "%v", x)
	}
	tenth, fifth := 0.1, 0.2
	assert.Equal(t, "0.30000000000000004", FormatNumber(tenth+fifth))
	assert.Equal(t, "-0.0", FormatNumber(math.Copysign(0, -1)))
	assert.Equal(t, "nan", FormatNumber(nanv))
	assert.Equal(t, "-inf", FormatNumber(-inf))
}

func TestOperationsValidate(t *testing.T) {
	for _, c := range []struct {
		ops  Operations
		want string
	}{
		{Operations{}, "no operation requested"},
		{Operations{Quantiles: []float64{0.5, 1.5}}, "quantiles[1]: 1.5 is outside [0, 1]"},
		{Operations{Quantiles: []float64{nanv}}, "quantiles[0]"},
		{Operations{Quantiles: []float64{0.5, 0.2, 0.5}}, "quantiles[2]: 0.5 repeats quantiles[0]"},
		{Operations{ProbabilityAbove: []float64{1, inf}}, "probability_above_cutoff.cutoffs[1]"},
		{Operations{MeanAbove: []float64{nanv}}, "mean_above_cutoff.cutoffs[0]"},
		{Operations{MeanAbove: []float64{2, 2}}, "mean_above_cutoff.cutoffs[1]: 2 repeats"},
	} {
		assert.ErrorContains(t, c.ops.Validate(), c.want)
		_, err := NewLocationWise(c.ops, 3, 2)
		assert.ErrorContains(t, err, c.want)
	}
	var fe *FieldError
	require.ErrorAs(t, Operations{ProbabilityAbove: []float64{nanv}}.Validate(), &fe)
	assert.Equal(t, "probability_above_cutoff.cutoffs[0]", fe.Name)
	assert.Equal(t, "NaN is not a finite number", fe.Reason)
	require.ErrorAs(t, Operations{}.Validate(), &fe)
	assert.Empty(t, fe.Name)
	require.NoError(t, Operations{Summary: true}.Validate())
	_, err := NewLocationWise(Operations{Summary: true}, 3, 0)
	assert.Error(t, err)
}

// oracle recomputes every statistic of one cell by brute force: sort the
// finite values, textbook formulas.
type oracle struct {
	min, max, mean, variance float64
	q, p, m                  []float64
}

func bruteForce(vals []float64, ops Operations) oracle {
	var s []float64
	for _, x := range vals {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s = append(s, x)
		}
	}
	o := oracle{min: nanv, max: nanv, mean: nanv, variance: nanv}
	for range ops.Quantiles {
		o.q = append(o.q, nanv)
	}
	for range ops.ProbabilityAbove {
		o.p = append(o.p, nanv)
	}
	for range ops.MeanAbove {
		o.m = append(o.m, nanv)
	}
	n := len(s)
	if n == 0 {
		return o
	}
	slices.Sort(s)
	o.min, o.max = s[0], s[n-1]
	var sum, sq float64
	for _, x := range s {
		sum += x
	}
	o.mean = sum / float64(n)
	for _, x := range s {
		sq += (x - o.mean) * (x - o.mean)
	}
	o.variance = sq / float64(n)
	for k, q := range ops.Quantiles {
		h := q * float64(n-1)
		lo := math.Floor(h)
		hi := math.Min(lo+1, float64(n-1))
		o.q[k] = s[int(lo)] + (h-lo)*(s[int(hi)]-s[int(lo)])
	}
	for k, c := range ops.ProbabilityAbove {
		cnt := 0
		for _, x := range s {
			if x > c {
				cnt++
			}
		}
		o.p[k] = float64(cnt) / float64(n)
	}
	for k, c := range ops.MeanAbove {
		cnt, sm := 0, 0.0
		for _, x := range s {
			if x > c {
				cnt++
				sm += x
			}
		}
		if cnt > 0 {
			o.m[k] = sm / float64(cnt)
		}
	}
	return o
}

// randomEnsemble draws cells × R values on a grid of 0.25 (so many values
// tie with each other and with the cutoffs), with a share of NaN, some ±Inf
// and some cells entirely missing.
func randomEnsemble(seed uint64, cells, R int) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	cols := make([][]float64, R)
	for r := range cols {
		cols[r] = make([]float64, cells)
	}
	for c := 0; c < cells; c++ {
		empty := rng.IntN(50) == 0
		for r := 0; r < R; r++ {
			x := math.Round(rng.ExpFloat64()*8) / 4
			switch u := rng.IntN(100); {
			case empty || u < 6:
				x = nanv
			case u == 6:
				x = math.Inf(1 - 2*rng.IntN(2))
			}
			cols[r][c] = x
		}
	}
	return cols
}

func approx(want, got, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	return math.Abs(want-got) <= tol*math.Max(1, math.Abs(want))
}

// A random ensemble against the brute-force pass, with NaN, ±Inf, ties at
// the cutoffs and all-missing cells; tiles that do not divide the cells.
func TestLocationWiseBruteForce(t *testing.T) {
	const cells, R = 3001, 37
	cols := randomEnsemble(11, cells, R)
	ops := Operations{Summary: true, Quantiles: []float64{0.1, 0.5, 0.9, 0, 1, 0.37},
		ProbabilityAbove: []float64{0.5, 2, 4.25}, MeanAbove: []float64{1, 2, 9.75}}
	st, err := Compute(context.Background(), NewColumnsSource(cols, 1000), ops)
	require.NoError(t, err)
	vals := make([]float64, R)
	const tol = 1e-12
	var empties, tiesAtCutoff int
	for c := 0; c < cells; c++ {
		for r := range vals {
			vals[r] = cols[r][c]
		}
		o := bruteForce(vals, ops)
		if math.IsNaN(o.min) {
			empties++
		}
		for _, x := range vals {
			if x == 2 {
				tiesAtCutoff++
			}
		}
		check := func(what string, want, got float64) {
			if !approx(want, got, tol) {
				t.Fatalf("cell %d %s = %v, brute force %v", c, what, got, want)
			}
		}
		check("min", o.min, st.Min[c])
		check("max", o.max, st.Max[c])
		check("mean", o.mean, st.Mean[c])
		check("variance", o.variance, st.Variance[c])
		for k := range ops.Quantiles {
			check("quantile", o.q[k], st.Quantiles[k][c])
		}
		for k := range ops.ProbabilityAbove {
			check("probability", o.p[k], st.ProbabilityAbove[k][c])
		}
		for k := range ops.MeanAbove {
			check("mean above", o.m[k], st.MeanAbove[k][c])
		}
	}
	// The ensemble exercises what it is meant to.
	assert.Greater(t, empties, 20)
	assert.Greater(t, tiesAtCutoff, 1000)
}

// Bit-identical outputs for 1 and several goroutines, any tiling, and in one
// pass with a classifier.
func TestLocationWiseDeterministic(t *testing.T) {
	const cells, R = 5000, 20
	cols := randomEnsemble(5, cells, R)
	ops := Operations{Summary: true, Quantiles: []float64{0.1, 0.5, 0.9}, ProbabilityAbove: []float64{1, 2}, MeanAbove: []float64{1}}
	run := func(workers, tile int) []Output {
		ctx := geostat.WithWorkers(context.Background(), workers)
		l, err := NewLocationWise(ops, cells, R)
		require.NoError(t, err)
		cl, err := NewClassifier(MinimiseLoss, testEconomics(), cells, R)
		require.NoError(t, err)
		require.NoError(t, Process(ctx, NewColumnsSource(cols, tile), l, cl))
		return l.Outputs()
	}
	ref := run(1, cells)
	for _, c := range [][2]int{{2, 777}, {4, 64}, {3, 1}} {
		got := run(c[0], c[1])
		for k := range ref {
			for i := range ref[k].Values {
				require.Equal(t, math.Float64bits(ref[k].Values[i]), math.Float64bits(got[k].Values[i]),
					"%s cell %d, %d workers, tile %d", ref[k].Name, i, c[0], c[1])
			}
		}
	}
}

// badSource returns a tile that skips cells.
type badSource struct{ Source }

func (b badSource) ReadTile(ctx context.Context, dst [][]float64) (Tile, error) {
	t, err := b.Source.ReadTile(ctx, dst)
	t.Lo++
	return t, err
}

func TestProcessErrors(t *testing.T) {
	ctx := context.Background()
	cols := handEnsemble()
	l, err := NewLocationWise(Operations{Summary: true}, 4, 5)
	require.NoError(t, err)
	l3, err := NewLocationWise(Operations{Summary: true}, 4, 3)
	require.NoError(t, err)
	assert.ErrorContains(t, Process(ctx, NewColumnsSource(cols[:3], 2), l), "source has 4 cells × 3 realisations, the outputs 4 × 5")
	assert.ErrorContains(t, Process(ctx, NewColumnsSource(cols, 2), l, l3), "reducers disagree")
	assert.ErrorContains(t, Process(ctx, NewColumnsSource(cols, 2)), "no reducer")
	assert.ErrorContains(t, Process(ctx, badSource{NewColumnsSource(cols, 2)}, l), "source returned 2 cells at cell 1, want at most 2 at cell 0")
	assert.ErrorContains(t, ProcessTile(ctx, Tile{Lo: 3, Columns: cols}, l), "tile [3, 7) is outside the 4 cells")
	assert.ErrorContains(t, ProcessTile(ctx, Tile{Columns: cols[:2]}, l), "has 2 realisations, want 5")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, Process(cancelled, NewColumnsSource(cols, 2), l), context.Canceled)
}

// A source that ends early is an error naming the cells covered.
type shortSource struct{ Source }

func (s shortSource) ReadTile(ctx context.Context, dst [][]float64) (Tile, error) {
	t, err := s.Source.ReadTile(ctx, dst)
	if err == nil && t.Lo > 0 {
		return Tile{}, io.EOF
	}
	return t, err
}

func TestProcessShortSource(t *testing.T) {
	l, err := NewLocationWise(Operations{Summary: true}, 4, 5)
	require.NoError(t, err)
	assert.ErrorContains(t, Process(context.Background(), shortSource{NewColumnsSource(handEnsemble(), 2)}, l), "source ended after 2 of 4 cells")
}

func TestTileFromFlat(t *testing.T) {
	// 3 cells × 2 realisations, realisation-major as tbsim writes them.
	flat := []float64{1, 2, 3, 10, 20, 30}
	tl := TileFromFlat(5, 3, 2, flat, nil)
	assert.Equal(t, 5, tl.Lo)
	assert.Equal(t, 3, tl.Len())
	assert.Equal(t, [][]float64{{1, 2, 3}, {10, 20, 30}}, tl.Columns)
	assert.Panics(t, func() { TileFromFlat(0, 4, 2, flat, nil) })
}

// A reducer of one tile's cells, reset before each tile, gives the outputs
// of a reducer of every cell, bit for bit: the pattern of a caller that
// writes each tile's outputs away (consim). The ensemble has all-missing
// cells and cells with no value above a cutoff, whose outputs stay NaN only
// if Reset clears the previous tile's.
func TestLocationWiseResetStreamsTiles(t *testing.T) {
	const cells, R, tile = 2000, 15, 300
	cols := randomEnsemble(9, cells, R)
	ops := Operations{Summary: true, Quantiles: []float64{0.1, 0.9}, ProbabilityAbove: []float64{1}, MeanAbove: []float64{3, 6}}
	ctx := context.Background()
	whole, err := NewLocationWise(ops, cells, R)
	require.NoError(t, err)
	require.NoError(t, Process(ctx, NewColumnsSource(cols, 0), whole))
	want := whole.Outputs()

	l, err := NewLocationWise(ops, tile, R)
	require.NoError(t, err)
	got := make([][]float64, len(want))
	part := make([][]float64, R)
	for lo := 0; lo < cells; lo += tile {
		n := min(tile, cells-lo)
		for r := range part {
			part[r] = cols[r][lo : lo+n]
		}
		l.Reset()
		for _, o := range l.Outputs() {
			for _, v := range o.Values {
				require.True(t, math.IsNaN(v), "Reset leaves NaN")
			}
		}
		require.NoError(t, ProcessTile(ctx, Tile{Lo: 0, Columns: part}, l))
		for k, o := range l.Outputs() {
			got[k] = append(got[k], o.Values[:n]...)
		}
	}
	stale := 0
	for k := range want {
		for i := range want[k].Values {
			require.Equal(t, math.Float64bits(want[k].Values[i]), math.Float64bits(got[k][i]), "%s cell %d", want[k].Name, i)
			if math.IsNaN(want[k].Values[i]) {
				stale++
			}
		}
	}
	assert.Greater(t, stale, 100, "the ensemble has NaN outputs a stale tile would fill")
}

// A TileProcessor gives ProcessTile's outputs bit for bit, tile after tile,
// with a classifier in the same pass, and refuses what ProcessTile refuses.
func TestTileProcessor(t *testing.T) {
	const cells, R, tile = 1500, 12, 250
	cols := randomEnsemble(4, cells, R)
	ops := Operations{Summary: true, Quantiles: []float64{0.5}, ProbabilityAbove: []float64{2}}
	ctx := geostat.WithWorkers(context.Background(), 3)
	run := func(process func(Tile, ...Reducer) error) ([]Output, []int32) {
		l, err := NewLocationWise(ops, cells, R)
		require.NoError(t, err)
		c, err := NewClassifier(MaximiseProfit, testEconomics(), cells, R)
		require.NoError(t, err)
		part := make([][]float64, R)
		for lo := 0; lo < cells; lo += tile {
			for r := range part {
				part[r] = cols[r][lo:min(lo+tile, cells)]
			}
			require.NoError(t, process(Tile{Lo: lo, Columns: part}, l, c))
		}
		return l.Outputs(), c.Keys()
	}
	want, wantKeys := run(func(t Tile, rs ...Reducer) error { return ProcessTile(ctx, t, rs...) })
	var p *TileProcessor
	got, gotKeys := run(func(t Tile, rs ...Reducer) error {
		if p == nil {
			var err error
			if p, err = NewTileProcessor(ctx, rs...); err != nil {
				return err
			}
		}
		return p.Process(ctx, t)
	})
	for k := range want {
		for i := range want[k].Values {
			require.Equal(t, math.Float64bits(want[k].Values[i]), math.Float64bits(got[k].Values[i]), "%s cell %d", want[k].Name, i)
		}
	}
	assert.Equal(t, wantKeys, gotKeys)

	_, err := NewTileProcessor(ctx)
	assert.ErrorContains(t, err, "no reducer")
	l, err := NewLocationWise(ops, 10, R)
	require.NoError(t, err)
	p, err = NewTileProcessor(ctx, l)
	require.NoError(t, err)
	assert.ErrorContains(t, p.Process(ctx, Tile{Lo: 5, Columns: cols}), "outside the 10 cells")
}
