package report

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// spreadCase is an ensemble of R realisations on four cells whose means
// average mRef + diff with standard deviation (divisor R − 1) sd; every
// realisation has the same variance and spreads about as the reference,
// which has mean mRef = 1.389 (z = 0.389, 2.389 at p = 0.25, 0.75).
func spreadCase(t *testing.T, R int, diff, sd float64, weights []float64) *Input {
	t.Helper()
	g, err := grid.New([3]float64{}, [3]int{4, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	ref, err := geostat.NewDistribution([]float64{0.389, 2.389}, []float64{0.25, 0.75}, geostat.Tail{}, geostat.Tail{})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 3, SemiMajor: 3, Minor: 3}})
	require.NoError(t, err)
	// Centred, evenly spaced u with unit sample standard deviation.
	u := make([]float64, R)
	ss := 0.0
	for r := range u {
		u[r] = float64(r) - float64(R-1)/2
		ss += u[r] * u[r]
	}
	var ens []float64
	for r := range u {
		m := 1.389 + diff + sd*u[r]/math.Sqrt(ss/float64(R-1))
		ens = append(ens, m-1, m-0.5, m+0.5, m+1) // about the reference quantiles
	}
	return &Input{
		Data:             Data{Coords: []float64{0.5, 0.5, 0.5, 2.5, 0.5, 0.5}, Values: []float64{1, 2}, Weights: weights},
		Reference:        ref,
		Variogram:        v,
		Grid:             g,
		PointSimulations: ens,
		Units:            "g/t",
	}
}

func renderPage(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, r.WriteHTML(&b))
	return b.String()
}

// The case of the issue: a mean difference of −0.0997 (7.18 % of the
// reference mean, marginal by the 5 %/10 % thresholds) is 0.35 standard
// deviations of realisation means that vary by 0.2861: consistent. Far
// outside the spread it fails; between 2 and 3 σ it is marginal.
func TestVerdictJudgesBySpread(t *testing.T) {
	for _, tc := range []struct {
		name string
		diff float64
		want Verdict
	}{
		{"inside", -0.0997, Acceptable},
		{"marginal", 2.5 * 0.2861, Marginal},
		{"far outside", -5 * 0.2861, Failing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compute(context.Background(), spreadCase(t, 20, tc.diff, 0.2861, nil), nil)
			require.NoError(t, err)
			ck := r.Summary.MeanCheck
			assert.Equal(t, FluctuationRule, ck.Rule)
			assert.Equal(t, PointSimulations, ck.Ensemble)
			assert.InDelta(t, tc.diff, float64(ck.Difference), 1e-12)
			assert.InDelta(t, 0.2861, float64(ck.Spread), 1e-12)
			assert.InDelta(t, tc.diff/0.2861, float64(ck.Z), 1e-9)
			assert.Equal(t, tc.want, ck.Verdict)
			assert.Equal(t, tc.want, r.Summary.Verdict)
			assert.InDelta(t, math.Abs(tc.diff)/1.389, float64(ck.RelativeDifference), 1e-9)
			// Every realisation has the same variance: no spread to judge
			// the variance by, the relative rule applies and says so.
			assert.Equal(t, RelativeRule, r.Summary.VarianceCheck.Rule)
			assert.Contains(t, r.Summary.VarianceCheck.Reason, "all equal")

			// The quantiles move with the means: the same spread.
			q := r.Summary.QuantileCheck
			assert.Equal(t, FluctuationRule, q.Rule)
			assert.InDelta(t, 0.2861, float64(q.Spread), 1e-9)
			assert.InDelta(t, float64(q.Value-q.Target)/0.2861, float64(q.Z), 1e-9)
			switch tc.name {
			case "inside":
				assert.Equal(t, Acceptable, q.Verdict)
			case "far outside":
				assert.Equal(t, Failing, q.Verdict)
			}

			html := renderPage(t, r)
			assert.Contains(t, html, `<p class="badge">`+string(tc.want)+`</p>`)
			assert.Contains(t, html, "Quantile reproduction")
			assert.Contains(t, html, "z = "+zfmt(tc.diff/0.2861))
			assert.Contains(t, html, "the standard deviation of the 20 realisation means")
		})
	}
	// The 7.18 % case alone, by the old relative rule, would be marginal.
	c := &computation{p: &prepared{th: DefaultThresholds(), nReal: 20}}
	_, v := c.classify(1.389, 1.389-0.0997)
	assert.Equal(t, Marginal, v)
}

// A single realisation has no spread: the verdict says it cannot be judged
// by fluctuation and falls back to the thresholds.
func TestVerdictSingleRealisation(t *testing.T) {
	in := spreadCase(t, 2, -0.0997, 0.2861, nil)
	in.PointSimulations = in.PointSimulations[:4]
	r, err := Compute(context.Background(), in, nil)
	require.NoError(t, err)
	ck := r.Summary.MeanCheck
	assert.Equal(t, RelativeRule, ck.Rule)
	assert.Contains(t, ck.Reason, "single realisation")
	assert.True(t, math.IsNaN(float64(ck.Spread)))
	assert.True(t, math.IsNaN(float64(ck.Z)))
	// m = 1.389 − 0.0997 − 0.2861/√2: d ≈ 21.8 % > 10 %.
	assert.Equal(t, Failing, ck.Verdict)
	html := renderPage(t, r)
	assert.Contains(t, html, "cannot be judged by fluctuation: a single realisation has no spread to judge by")
	assert.Contains(t, strings.Join(r.Warnings, "\n"), "cannot be judged by the fluctuation between realisations")
}

// "declustered" appears on the page only when the data have declustering
// weights: legends, captions, cards and definitions.
func TestDeclusteredOnlyWithWeights(t *testing.T) {
	r, err := Compute(context.Background(), spreadCase(t, 5, 0, 0.1, nil), nil)
	require.NoError(t, err)
	plain := strings.ToLower(renderPage(t, r))
	assert.NotContains(t, plain, "declustered")
	assert.Contains(t, plain, "equal-weight mean")

	r, err = Compute(context.Background(), spreadCase(t, 5, 0, 0.1, []float64{1, 3}), nil)
	require.NoError(t, err)
	weighted := renderPage(t, r)
	for _, want := range []string{
		"Data (declustered)",
		"declustered mean",                         // data card
		"the declustered data (grey bars)",         // histogram caption
		"against the mean of the declustered data", // swath lead
		"data moments are declustered",             // definitions
		"the data mean of a slice is declustered",
	} {
		assert.Contains(t, weighted, want)
	}
	// The weighted data mean is (1 + 3·2)/4 = 1.75.
	assert.InDelta(t, 1.75, float64(r.Data.Mean), 1e-12)

	// The synthetic case has weights; with them removed no label remains.
	s := makeSynth(t, [3]int{12, 10, 4}, [3]float64{10, 10, 5}, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}, 3, 30, 6, 21)
	in := s.input()
	require.NotNil(t, in.Data.Weights)
	r, err = Compute(context.Background(), in, nil)
	require.NoError(t, err)
	assert.Contains(t, renderPage(t, r), "Data (declustered)")
	in.Data.Weights = nil
	r, err = Compute(context.Background(), in, nil)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(renderPage(t, r)), "declustered")
}

func TestJudgeEdgeCases(t *testing.T) {
	c := &computation{p: &prepared{th: DefaultThresholds(), nReal: 20}}
	ck := c.judge("mean", 0, -0.0997, 0.2861)
	assert.Equal(t, Acceptable, ck.Verdict)
	assert.InDelta(t, -0.3485, float64(ck.Z), 1e-4)
	assert.Equal(t, Marginal, c.judge("mean", 0, 0.6, 0.2861).Verdict)    // 2.1σ
	assert.Equal(t, Failing, c.judge("mean", 0, -0.9, 0.2861).Verdict)    // 3.1σ
	assert.Equal(t, Acceptable, c.judge("mean", 0, 0.57, 0.2861).Verdict) // 1.99σ
	// σ = 0: the relative rule, absolute difference for a zero target.
	ck = c.judge("mean", 0, 0.07, 0)
	assert.Equal(t, RelativeRule, ck.Rule)
	assert.Equal(t, Marginal, ck.Verdict)
	assert.Contains(t, ck.Reason, "all equal")
	// A spread at the rounding level of the values is no spread.
	assert.Equal(t, RelativeRule, c.judge("mean", 10, 10, 1e-15).Rule)
	ck = c.judge("variance", 4, 4.1, math.NaN())
	assert.Equal(t, RelativeRule, ck.Rule)
	assert.Equal(t, Acceptable, ck.Verdict) // 2.5 %
	c.p.nReal = 1
	ck = c.judge("mean", 1, 1.2, math.NaN())
	assert.Contains(t, ck.Reason, "single realisation")
	assert.Equal(t, Failing, ck.Verdict) // 20 %
}
