package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

func TestSummariseHandMade(t *testing.T) {
	// Equal weights: plotting positions 1/8, 3/8, 5/8, 7/8.
	m := Summarise([]float64{4, 1, math.NaN(), 3, 2}, nil, []float64{0.1, 0.125, 0.25, 0.5, 0.875, 0.95})
	assert.Equal(t, 4, m.Count)
	assert.InDelta(t, 2.5, float64(m.Mean), 1e-15)
	assert.InDelta(t, 1.25, float64(m.Variance), 1e-15) // (2.25+0.25+0.25+2.25)/4
	assert.Equal(t, Number(1), m.Min)
	assert.Equal(t, Number(4), m.Max)
	assert.InDeltaSlice(t, []float64{1, 1, 1.5, 2.5, 4, 4}, []float64(m.Quantiles), 1e-15)

	// Weights 1, 1, 2: cumulative 0.25, 0.5, 1 → positions 0.125, 0.375, 0.75.
	m = Summarise([]float64{1, 2, 3}, []float64{1, 1, 2}, []float64{0.5, 0.25})
	assert.InDelta(t, 9.0/4, float64(m.Mean), 1e-15)
	assert.InDelta(t, (1.5625+0.0625+2*0.5625)/4, float64(m.Variance), 1e-15)
	assert.InDelta(t, 2+(0.5-0.375)/0.375, m.Quantiles[0], 1e-15)
	assert.InDelta(t, 1.5, m.Quantiles[1], 1e-15)

	// Nothing finite.
	m = Summarise([]float64{math.NaN()}, nil, []float64{0.5})
	assert.Equal(t, 0, m.Count)
	assert.True(t, math.IsNaN(float64(m.Mean)) && math.IsNaN(m.Quantiles[0]))
}

// Summarise against brute force on random weighted samples: moments by
// direct sums, quantiles by scanning the plotting positions.
func TestSummariseBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		n := 1 + rng.IntN(50)
		v := make([]float64, n)
		w := make([]float64, n)
		for i := range v {
			v[i] = math.Round(rng.NormFloat64()*10) / 2 // some ties
			w[i] = rng.Float64() + 0.1
		}
		m := Summarise(v, w, probabilities)
		sw, sz := 0.0, 0.0
		for i := range v {
			sw += w[i]
			sz += w[i] * v[i]
		}
		mean := sz / sw
		ss := 0.0
		for i := range v {
			ss += w[i] * (v[i] - mean) * (v[i] - mean)
		}
		require.InDelta(t, mean, float64(m.Mean), 1e-12)
		require.InDelta(t, ss/sw, float64(m.Variance), 1e-10)

		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case v[a] < v[b]:
				return -1
			case v[a] > v[b]:
				return 1
			}
			return 0
		})
		pos := make([]float64, n)
		zs := make([]float64, n)
		cw := 0.0
		for k, i := range idx {
			pos[k] = (2*cw + w[i]) / 2 / sw
			cw += w[i]
			zs[k] = v[i]
		}
		for k, p := range probabilities {
			var want float64
			switch {
			case p <= pos[0]:
				want = zs[0]
			case p >= pos[n-1]:
				want = zs[n-1]
			default:
				j := 1
				for pos[j] < p {
					j++
				}
				want = zs[j-1] + (zs[j]-zs[j-1])*(p-pos[j-1])/(pos[j]-pos[j-1])
			}
			require.InDelta(t, want, m.Quantiles[k], 1e-12, "p=%g", p)
		}
		// Equal weights: Quantile agrees with Summarise.
		me := Summarise(v, nil, probabilities)
		s := slices.Clone(v)
		slices.Sort(s)
		for k, p := range probabilities {
			require.InDelta(t, me.Quantiles[k], Quantile(s, p), 1e-12)
		}
	}
}

func TestKolmogorovDistance(t *testing.T) {
	uniform := func(z float64) float64 { return math.Min(math.Max(z, 0), 1) }
	// Steps at 1/4, 1/2, 3/4 against the uniform CDF: the largest gap is
	// 1/4, just below 1/4 and at 3/4.
	assert.InDelta(t, 0.25, KolmogorovDistance([]float64{0.25, 0.5, 0.75}, uniform), 1e-15)
	// Ties: two values at 0.5 → F_n jumps 0 → 1 at 0.5: distance 0.5.
	assert.InDelta(t, 0.5, KolmogorovDistance([]float64{0.5, 0.5}, uniform), 1e-15)
	assert.True(t, math.IsNaN(KolmogorovDistance(nil, uniform)))

	// Brute force: sup over a dense grid of z (and just below each datum)
	// of |F_n − G| for a normal sample.
	rng := rand.New(rand.NewPCG(3, 4))
	s := make([]float64, 200)
	for i := range s {
		s[i] = rng.NormFloat64()*1.1 + 0.1
	}
	slices.Sort(s)
	got := KolmogorovDistance(s, geostat.NormalCDF)
	brute := 0.0
	ecdf := func(z float64) float64 {
		k := 0
		for _, x := range s {
			if x <= z {
				k++
			}
		}
		return float64(k) / float64(len(s))
	}
	for _, x := range s {
		brute = math.Max(brute, math.Abs(ecdf(x)-geostat.NormalCDF(x)))
		below := math.Nextafter(x, math.Inf(-1))
		brute = math.Max(brute, math.Abs(ecdf(below)-geostat.NormalCDF(below)))
	}
	assert.InDelta(t, brute, got, 1e-12)
	assert.Greater(t, got, 0.01)
}

// Reference moments by closed forms: the tails example of docs/math.md
// 8.1.9 (z = 1, 2, 4; p = 0.2, 0.5, 0.8; lower power 2 to 0; upper power 0.5
// to 10): z = √(p/0.2) below p = 0.2 and z = 4 + 6·((p − 0.8)/0.2)² above 0.8.
func TestReferenceMoments(t *testing.T) {
	d, err := geostat.NewDistribution([]float64{1, 2, 4}, []float64{0.2, 0.5, 0.8},
		geostat.Tail{Bound: 0, Power: 2}, geostat.Tail{Bound: 10, Power: 0.5})
	require.NoError(t, err)
	mean, variance := ReferenceMoments(d)
	// Interior 0.3·1.5 + 0.3·3; lower 0.2·2/3; upper 0.2·(4 + 6/3).
	wantMean := 0.45 + 0.9 + 0.2*2.0/3 + 0.2*6
	// E z²: interior 0.3·7/3 + 0.3·28/3; lower 0.2/2; upper 0.2·(16 + 16 + 36/5).
	wantM2 := 0.7 + 2.8 + 0.1 + 0.2*(16+16+7.2)
	assert.InDelta(t, wantMean, mean, 1e-7)
	assert.InDelta(t, wantM2-wantMean*wantMean, variance, 1e-6)

	// Without extrapolation the end nodes carry the tails' mass.
	d, err = geostat.NewDistribution([]float64{1, 2, 4}, []float64{0.2, 0.5, 0.8}, geostat.Tail{}, geostat.Tail{})
	require.NoError(t, err)
	mean, variance = ReferenceMoments(d)
	wantMean = 0.2*1 + 0.45 + 0.9 + 0.2*4
	wantM2 = 0.2*1 + 0.7 + 2.8 + 0.2*16
	assert.InDelta(t, wantMean, mean, 1e-12)
	assert.InDelta(t, wantM2-wantMean*wantMean, variance, 1e-12)
}

func TestNumberJSON(t *testing.T) {
	b, err := Number(math.NaN()).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))
	b, err = Series{1.5, math.NaN(), math.Inf(1), -2}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, "[1.5,null,null,-2]", string(b))
	var s Series
	require.NoError(t, s.UnmarshalJSON([]byte("[1,null,3]")))
	assert.Equal(t, 1.0, s[0])
	assert.True(t, math.IsNaN(s[1]))
	var n Number
	require.NoError(t, n.UnmarshalJSON([]byte("null")))
	assert.False(t, n.Available())
	require.NoError(t, n.UnmarshalJSON([]byte("2.5")))
	assert.Equal(t, Number(2.5), n)
}
