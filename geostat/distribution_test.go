package geostat

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Oracle 8.1.9: normal scores of n equal weights.
func TestScoreTableNormalScores(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []float64
	}{
		{4, []float64{-1.1503494, -0.3186394, 0.3186394, 1.1503494}},
		{10, []float64{-1.64485, -1.03643, -0.67449, -0.38532, -0.12566, 0.12566, 0.38532, 0.67449, 1.03643, 1.64485}},
	} {
		vals := make([]float64, c.n)
		for i := range vals {
			vals[i] = float64(c.n - i) // unsorted on purpose
		}
		z, p, err := ScoreTable(vals, nil)
		require.NoError(t, err)
		require.True(t, sort.Float64sAreSorted(z))
		tol := 1e-7
		if c.n == 10 {
			tol = 1e-5
		}
		for i := range p {
			assert.InDelta(t, (float64(i)+0.5)/float64(c.n), p[i], 1e-15)
			assert.InDelta(t, c.want[i], NormalQuantile(p[i]), tol)
		}
		d, err := NewDistribution(z, p, Tail{}, Tail{})
		require.NoError(t, err)
		for i := range z {
			assert.InDelta(t, c.want[i], d.NormalScore(z[i]), tol)
		}
	}
	_, p, err := ScoreTable([]float64{1, math.NaN(), 2}, []float64{1, 5, 3})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{0.125, 0.625}, p, 1e-15)
	_, _, err = ScoreTable([]float64{1, 2}, []float64{1, -1})
	assert.ErrorContains(t, err, "weights[1]")
	_, _, err = ScoreTable([]float64{math.NaN()}, nil)
	assert.Error(t, err)
}

func tailTable(t *testing.T) *Distribution {
	d, err := NewDistribution([]float64{1, 2, 4}, []float64{0.2, 0.5, 0.8}, Tail{Bound: 0, Power: 2}, Tail{Bound: 10, Power: 0.5})
	require.NoError(t, err)
	return d
}

// Oracle 8.1.9: the power-model tails.
func TestDistributionTails(t *testing.T) {
	d := tailTable(t)
	assert.InDelta(t, 0.7071068, d.Quantile(0.1), 1e-7)
	assert.InDelta(t, 5.5, d.Quantile(0.9), 1e-12)
	assert.InDelta(t, 0.9, d.CDF(5.5), 1e-12)
	assert.InDelta(t, 0.1, d.CDF(0.7071068), 1e-7)
	assert.Equal(t, 0.0, d.Min())
	assert.Equal(t, 10.0, d.Max())
	assert.Equal(t, 0.0, d.CDF(-1))
	assert.Equal(t, 1.0, d.CDF(11))
	assert.Equal(t, 0.0, d.Quantile(0))
	assert.Equal(t, 10.0, d.Quantile(1))
	// Interior: linear in p.
	assert.InDelta(t, 0.35, d.CDF(1.5), 1e-15)
	assert.InDelta(t, 3.0, d.Quantile(0.65), 1e-15)

	// No extrapolation clamps.
	n, err := NewDistribution([]float64{1, 2, 4}, []float64{0.2, 0.5, 0.8}, Tail{}, Tail{})
	require.NoError(t, err)
	assert.Equal(t, 0.2, n.CDF(-5))
	assert.Equal(t, 0.8, n.CDF(50))
	assert.Equal(t, 1.0, n.Quantile(0.01))
	assert.Equal(t, 4.0, n.Quantile(0.99))
	assert.Equal(t, 1.0, n.BackTransform(-8))
	assert.Equal(t, 4.0, n.BackTransform(8))
}

// Oracle 8.1.9: round trip through y on a dense set, monotone both ways, NaN
// in → NaN out.
func TestDistributionRoundTripMonotone(t *testing.T) {
	d := tailTable(t)
	prevY, prevZ := math.Inf(-1), math.Inf(-1)
	for i := 0; i <= 20000; i++ {
		z := d.Min() + (d.Max()-d.Min())*float64(i)/20000
		y := d.NormalScore(z)
		back := d.BackTransform(y)
		if z > 1e-5 && z < 10-1e-5 { // beyond p clamp 1e-12 the tails saturate
			assert.InDelta(t, z, back, 1e-9*(math.Abs(z)+1), "z=%v", z)
		}
		assert.GreaterOrEqual(t, y, prevY)
		prevY = y
	}
	for y := -7.5; y <= 7.5; y += 0.001 {
		z := d.BackTransform(y)
		assert.GreaterOrEqual(t, z, prevZ)
		prevZ = z
	}
	// Nodes round-trip exactly (to rounding).
	for j := 0; j < d.Len(); j++ {
		z, p := d.Node(j)
		assert.InDelta(t, p, d.CDF(z), 0)
		assert.InDelta(t, z, d.BackTransform(d.NormalScore(z)), 1e-12)
	}
	assert.True(t, math.IsNaN(d.NormalScore(math.NaN())))
	assert.True(t, math.IsNaN(d.BackTransform(math.NaN())))
	src := []float64{0.5, math.NaN(), 3}
	dst := make([]float64, 3)
	d.NormalScores(dst, src)
	back := make([]float64, 3)
	d.BackTransforms(back, dst)
	assert.InDelta(t, 0.5, back[0], 1e-12)
	assert.True(t, math.IsNaN(back[1]))
	assert.InDelta(t, 3, back[2], 1e-12)
}

// Ties (plateaus in z) and jumps (equal p) pick the lowest node.
func TestDistributionPlateausAndJumps(t *testing.T) {
	d, err := NewDistribution([]float64{1, 2, 2, 3}, []float64{0.1, 0.3, 0.6, 0.9}, Tail{}, Tail{})
	require.NoError(t, err)
	assert.Equal(t, 0.3, d.CDF(2))
	assert.InDelta(t, 2, d.Quantile(0.45), 0)
	d, err = NewDistribution([]float64{1, 2, 3}, []float64{0.1, 0.5, 0.5}, Tail{}, Tail{})
	require.NoError(t, err)
	assert.Equal(t, 2.0, d.Quantile(0.5))
}

func TestDistributionErrors(t *testing.T) {
	cases := []struct {
		z, p         []float64
		lower, upper Tail
		want         string
	}{
		{nil, nil, Tail{}, Tail{}, "empty"},
		{[]float64{1, 2}, []float64{0.5}, Tail{}, Tail{}, "probabilities"},
		{[]float64{2, 1}, []float64{0.2, 0.5}, Tail{}, Tail{}, "non-decreasing"},
		{[]float64{1, 2}, []float64{0.5, 0.2}, Tail{}, Tail{}, "non-decreasing"},
		{[]float64{1, 2}, []float64{0, 0.2}, Tail{}, Tail{}, "outside (0, 1)"},
		{[]float64{1, math.Inf(1)}, []float64{0.1, 0.2}, Tail{}, Tail{}, "not finite"},
		{[]float64{1, 2}, []float64{0.1, 0.2}, Tail{Bound: 1.5, Power: 1}, Tail{}, "min"},
		{[]float64{1, 2}, []float64{0.1, 0.2}, Tail{}, Tail{Bound: 1.5, Power: 1}, "max"},
		{[]float64{1, 2}, []float64{0.1, 0.2}, Tail{Bound: 0, Power: -1}, Tail{}, "power"},
	}
	for _, c := range cases {
		_, err := NewDistribution(c.z, c.p, c.lower, c.upper)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestDecodeTail(t *testing.T) {
	tl, err := DecodeTail(json.RawMessage(`"no_extrapolation"`), false)
	require.NoError(t, err)
	assert.False(t, tl.Extrapolates())
	tl, err = DecodeTail(json.RawMessage(`{"power_model": {"min": 0, "power": 2}}`), false)
	require.NoError(t, err)
	assert.Equal(t, Tail{0, 2}, tl)
	tl, err = DecodeTail(json.RawMessage(`{"power_model": {"max": 10, "power": 0.5}}`), true)
	require.NoError(t, err)
	assert.Equal(t, Tail{10, 0.5}, tl)
	_, err = DecodeTail(json.RawMessage(`{"power_model": {"min": 0, "power": 2}}`), true)
	assert.ErrorContains(t, err, "upper_tail_extrapolation.power_model")
	_, err = DecodeTail(json.RawMessage(`"linear"`), false)
	assert.Error(t, err)
	_, err = DecodeTail(json.RawMessage(`{"power_model": {"min": 0, "power": 0}}`), false)
	assert.ErrorContains(t, err, "power")
}

// TestNormalQuantileAccurate checks G⁻¹ against values computed with
// mpmath at 40 significant digits (−√2 erfinv(1 − 2p) at the float64 value
// of p), across the three regions of AS 241 and both tails. The tolerance
// is 4e-16 relative (a few units in the last place); math.Erfcinv misses it
// by up to 3e-6 at p = 1e-12.
func TestNormalQuantileAccurate(t *testing.T) {
	for _, c := range []struct{ p, y float64 }{
		{1e-12, -7.0344838253011319326},
		{3e-12, -6.8796495032694017547},
		{1e-11, -6.7060231554951362961},
		{1e-10, -6.3613409024040561991},
		{1e-9, -5.9978070150076868614},
		{1e-7, -5.19933758219281694},
		{1e-6, -4.7534243088228989573},
		{1e-4, -3.7190164854556805523},
		{0.001, -3.0902323061678135354},
		{0.01, -2.3263478740408410931},
		{0.02425, -1.9729610513118848376},
		{0.07, -1.4757910281791706856},
		{0.075, -1.4395314709384559349},
		{0.1, -1.2815515655446004353},
		{0.2, -0.84162123357291416552},
		{0.3, -0.52440051270804081597},
		{0.4, -0.25334710313579974132},
		{0.425, -0.18911842627279251844},
		{0.45, -0.12566134685507400616},
		{0.49, -0.025068908258711058033},
		{0.5, 0.0},
		{0.55, 0.12566134685507414641},
		{0.6, 0.25334710313579974132},
		{0.8, 0.8416212335729143638},
		{0.9, 1.2815515655446005935},
		{0.925, 1.4395314709384562291},
		{0.975, 1.9599639845400538556},
		{0.99, 2.3263478740408407676},
		{0.9999, 3.7190164854557083867},
		{0.999999, 4.7534243088170877657},
		{0.99999999, 5.6120012433055049826},
		{0.99999999999, 6.7060231434147472662},
	} {
		got := NormalQuantile(c.p)
		assert.InDelta(t, c.y, got, 4e-16*math.Max(1, math.Abs(c.y)), "p = %g", c.p)
	}
}

func TestNormalQuantileTails(t *testing.T) {
	assert.Equal(t, NormalQuantile(1e-12), NormalQuantile(0))
	assert.Equal(t, NormalQuantile(1e-13), NormalQuantile(-1))
	assert.InDelta(t, -7.0344838253011319, NormalQuantile(0), 4e-15)
	assert.Equal(t, -NormalQuantile(0), NormalQuantile(1)) // the clamp is symmetric
	assert.Equal(t, NormalQuantile(1), NormalQuantile(2))
	assert.Equal(t, 0.0, NormalQuantile(0.5))
	for _, y := range []float64{-6, -3, -1, 0.2, 2.5, 5} {
		assert.InDelta(t, y, NormalQuantile(NormalCDF(y)), 1e-9)
	}
}

// BenchmarkTransform1M runs the forward and back transform of 1M values
// through a 1000-node table with power tails.
func BenchmarkTransform1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, 1000)
	for i := range vals {
		vals[i] = math.Exp(rng.NormFloat64())
	}
	z, p, err := ScoreTable(vals, nil)
	require.NoError(b, err)
	d, err := NewDistribution(z, p, Tail{Bound: 0, Power: 1}, Tail{Bound: z[len(z)-1] * 2, Power: 0.5})
	require.NoError(b, err)
	src := make([]float64, 1_000_000)
	for i := range src {
		src[i] = math.Exp(rng.NormFloat64())
	}
	y := make([]float64, len(src))
	back := make([]float64, len(src))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.NormalScores(y, src)
		d.BackTransforms(back, y)
	}
}
