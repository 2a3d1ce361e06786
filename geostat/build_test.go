package geostat

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tableByDefinition is the oracle of BuildDistribution's table: drop missing
// values, sort (value, input position) pairs, normalise the weights and take
// the mid-step cumulative probabilities Σ_{k<i} w_k + w_i/2.
func tableByDefinition(values, weights []float64) (z, p []float64) {
	type row struct {
		v, w float64
		i    int
	}
	var rows []row
	total := 0.0
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		rows = append(rows, row{v, w, i})
		total += w
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := cmp.Compare(a.v, b.v); c != 0 {
			return c
		}
		return a.i - b.i
	})
	below := 0.0
	for _, r := range rows {
		z = append(z, r.v)
		p = append(p, below+r.w/total/2)
		below += r.w / total
	}
	return z, p
}

func TestBuildDistributionDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	n := 500
	values := make([]float64, n)
	weights := make([]float64, n)
	for i := range values {
		values[i] = math.Exp(rng.NormFloat64())
		if i%50 == 0 {
			values[i] = values[i/2] // ties keep input order
		}
		weights[i] = 0.1 + rng.Float64()
		if i%37 == 0 {
			values[i] = math.NaN()
			weights[i] = math.NaN() // the weight of a missing value is ignored
		}
	}
	for _, w := range [][]float64{nil, weights} {
		d, err := BuildDistribution(values, w, Tail{}, Tail{})
		require.NoError(t, err)
		wantZ, wantP := tableByDefinition(values, w)
		require.Equal(t, len(wantZ), d.Len())
		for j := range wantZ {
			z, p := d.Node(j)
			require.Equal(t, wantZ[j], z, "node %d", j)
			require.InDelta(t, wantP[j], p, 1e-14, "node %d", j)
			if w == nil {
				require.InDelta(t, (float64(j)+0.5)/float64(len(wantZ)), p, 1e-14)
			}
		}
		lower, upper := d.Tails()
		assert.False(t, lower.Extrapolates())
		assert.False(t, upper.Extrapolates())
	}
}

func TestBuildDistributionTails(t *testing.T) {
	values := []float64{2, 5, 3, 4}
	lower, err := LowerPowerTail(0.5, 0.5)
	require.NoError(t, err)
	upper, err := UpperPowerTail(9, 0.5)
	require.NoError(t, err)
	// The request's lower power 0.5 is stored as its reciprocal 2 (the
	// schema's lower power is ≥ 1); the upper power as it is.
	assert.Equal(t, Tail{Bound: 0.5, Power: 2}, lower)
	assert.Equal(t, Tail{Bound: 9, Power: 0.5}, upper)
	d, err := BuildDistribution(values, nil, lower, upper)
	require.NoError(t, err)
	// Table 2, 3, 4, 5 at 1/8, 3/8, 5/8, 7/8. Lower tail at z = 1.25, halfway
	// from min to z₁: F = (1/8)·(1/2)^2; upper at z = 7: F = 7/8 + (1/8)·(1/2)^0.5.
	assert.InDelta(t, 0.125*0.25, d.CDF(1.25), 1e-15)
	assert.InDelta(t, 0.875+0.125*math.Sqrt(0.5), d.CDF(7), 1e-15)
	assert.Equal(t, 0.5, d.Min())
	assert.Equal(t, 9.0, d.Max())
	// Both stored powers satisfy the object schema and round-trip through
	// the component's JSON.
	gl, gu := d.Tails()
	assert.GreaterOrEqual(t, gl.Power, 1.0)
	assert.True(t, gu.Power > 0 && gu.Power <= 1)
	for _, c := range []struct {
		tail  Tail
		upper bool
		json  string
	}{
		{gl, false, `{"power_model":{"min":0.5,"power":2}}`},
		{gu, true, `{"power_model":{"max":9,"power":0.5}}`},
		{Tail{}, true, `"no_extrapolation"`},
	} {
		raw := EncodeTail(c.tail, c.upper)
		assert.JSONEq(t, c.json, string(raw))
		back, err := DecodeTail(raw, c.upper)
		require.NoError(t, err)
		assert.Equal(t, c.tail, back)
	}
	// The request's power range is (0, 1].
	for _, pw := range []float64{0, -1, 1.5, math.NaN()} {
		_, err := LowerPowerTail(0, pw)
		assert.ErrorContains(t, err, "tail_extrapolation.lower.power")
		_, err = UpperPowerTail(10, pw)
		assert.ErrorContains(t, err, "tail_extrapolation.upper.power")
	}
	_, err = UpperPowerTail(math.Inf(1), 1)
	assert.ErrorContains(t, err, "tail_extrapolation.upper.max")
	// min not below / max not above the data.
	_, err = BuildDistribution(values, nil, Tail{Bound: 2, Power: 1}, Tail{})
	assert.ErrorContains(t, err, "tail_extrapolation.lower.min")
	_, err = BuildDistribution(values, nil, Tail{}, Tail{Bound: 5, Power: 1})
	assert.ErrorContains(t, err, "tail_extrapolation.upper.max")
	_, err = BuildDistribution(values, nil, Tail{}, Tail{Bound: 4.5, Power: 1})
	assert.ErrorContains(t, err, "tail_extrapolation.upper.max")
}

func TestBuildDistributionErrors(t *testing.T) {
	for _, c := range []struct {
		values, weights []float64
		want            string
	}{
		{nil, nil, "values: no value"},
		{[]float64{math.NaN(), math.NaN()}, nil, "all missing"},
		{[]float64{1, 2}, []float64{1}, "weights: 1 weights for 2 values"},
		{[]float64{1, 2, 3}, []float64{1, 0, 1}, "weights[1]"},
		{[]float64{1, 2, 3}, []float64{1, 1, -0.5}, "weights[2]"},
		{[]float64{1, 2, 3}, []float64{math.NaN(), 1, 1}, "weights[0]"},
		{[]float64{1, 2, 3}, []float64{1, math.Inf(1), 1}, "weights[1]"},
		{[]float64{1, math.Inf(1)}, nil, "values[1]"},
	} {
		_, err := BuildDistribution(c.values, c.weights, Tail{}, Tail{})
		assert.ErrorContains(t, err, c.want)
	}
}

func TestBuildDistributionNormalScoreRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	n := 2000
	values := make([]float64, n)
	weights := make([]float64, n)
	for i := range values {
		values[i] = 10 * math.Exp(0.8*rng.NormFloat64())
		weights[i] = 0.5 + rng.Float64()
	}
	values[7] = math.NaN()
	lower, err := LowerPowerTail(0, 0.7)
	require.NoError(t, err)
	upper, err := UpperPowerTail(1000, 0.4)
	require.NoError(t, err)
	d, err := BuildDistribution(values, weights, lower, upper)
	require.NoError(t, err)

	// The object holds the table and the tails; reading them back with
	// NewDistribution and DecodeTail, as the simulation does, gives the same
	// transform.
	z := make([]float64, d.Len())
	p := make([]float64, d.Len())
	for j := range z {
		z[j], p[j] = d.Node(j)
	}
	gl, gu := d.Tails()
	rl, err := DecodeTail(EncodeTail(gl, false), false)
	require.NoError(t, err)
	ru, err := DecodeTail(EncodeTail(gu, true), true)
	require.NoError(t, err)
	read, err := NewDistribution(z, p, rl, ru)
	require.NoError(t, err)

	// Forward and backward over large arrays, on 1 and 3 goroutines, equal
	// bit for bit to the element-wise transforms; NaN stays NaN.
	src := append([]float64{math.NaN(), -5, 0, 1e-3, 999.9, 1000, 2000}, values...)
	run := func(procs int) ([]float64, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		y := make([]float64, len(src))
		require.NoError(t, read.NormalScoresAll(context.Background(), y, src, nil))
		back := make([]float64, len(src))
		require.NoError(t, read.BackTransformsAll(context.Background(), back, y, nil))
		return y, back
	}
	y1, b1 := run(1)
	y3, b3 := run(3)
	for i, v := range src {
		require.Equal(t, math.Float64bits(d.NormalScore(v)), math.Float64bits(y1[i]), "value %d", i)
		require.Equal(t, math.Float64bits(y1[i]), math.Float64bits(y3[i]))
		require.Equal(t, math.Float64bits(d.BackTransform(y1[i])), math.Float64bits(b1[i]))
		require.Equal(t, math.Float64bits(b1[i]), math.Float64bits(b3[i]))
	}
	assert.True(t, math.IsNaN(y1[0]) && math.IsNaN(b1[0]))
	// The normal scores of the data have the definition's probabilities.
	for j := range z {
		require.InDelta(t, NormalQuantile(p[j]), read.NormalScore(z[j]), 1e-12)
	}
	// A sample value comes back from its normal score up to the rounding
	// of G(G⁻¹(p)) (a few units in the last place of p) times the table's
	// slope next to the node: measured 6e-14 relative here; 1e-11 allowed.
	worst := 0.0
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		got := b1[7+i]
		worst = math.Max(worst, math.Abs(got-v)/v)
		require.InDelta(t, v, got, 1e-11*v, "sample %d", i)
	}
	t.Logf("largest relative round-trip error of a sample value: %.2g", worst)
	// Values beyond the tails' bounds come back inside them, near the bound
	// (probabilities are clamped to [1e-12, 1 − 1e-12] before G⁻¹).
	assert.True(t, b1[1] >= 0 && b1[1] < 1e-6, "%v", b1[1])
	assert.True(t, b1[6] <= 1000 && b1[6] > 999.99, "%v", b1[6])
}

func TestTransformAllProgressAndErrors(t *testing.T) {
	d, err := BuildDistribution([]float64{1, 2, 3}, nil, Tail{}, Tail{})
	require.NoError(t, err)
	src := make([]float64, 3*transformChunk+5)
	last := 0
	require.NoError(t, d.NormalScoresAll(context.Background(), src, src, func(done, total int) {
		require.Equal(t, len(src), total)
		require.Greater(t, done, last)
		last = done
	}))
	assert.Equal(t, len(src), last)
	assert.ErrorContains(t, d.BackTransformsAll(context.Background(), src[:1], src, nil), "dst")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, d.NormalScoresAll(ctx, src, src, nil), context.Canceled)
}
