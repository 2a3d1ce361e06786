package variogram

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

func omni() Direction { return Direction{Type: Omnidirectional} }

func dir(az, dip, atol, dtol, bw, bh float64) Direction {
	return Direction{Azimuth: az, Dip: dip, AzimuthTolerance: atol, DipTolerance: dtol, Bandwidth: bw, BandHeight: bh}
}

// Four samples on the x axis at 0, 1, 2, 4 with values 0, 1, 3, 2 and lag
// distance 1 (tolerance ½, 3 lags): the pairs by distance are
// d=1: (0,1) Δ=1, (1,2) Δ=2; d=2: (0,2) Δ=3, (2,4) Δ=−1;
// d=3: (1,4) Δ=1; d=4: (0,4) Δ=2 (beyond 3.5, left out).
// γ(1) = (1+4)/4, γ(2) = (9+1)/4, γ(3) = 1/2.
func TestComputeByHandLine(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0}
	values := []float64{0, 1, 3, 2}
	e, err := Compute(context.Background(), coords, values, nil, Params{
		Directions:  []Direction{omni(), dir(90, 0, 10, 10, 1, 1), dir(0, 0, 10, 10, 1, 1)},
		LagDistance: 1, NLags: 3,
	})
	require.NoError(t, err)
	require.Len(t, e.Lags, 12)
	for _, di := range []int{0, 1} { // omnidirectional and east-west agree
		l := e.DirectionLags(di)
		assert.Equal(t, uint64(0), l[0].Pairs)
		assert.True(t, math.IsNaN(l[0].Value))
		assert.Equal(t, []uint64{2, 2, 1}, []uint64{l[1].Pairs, l[2].Pairs, l[3].Pairs})
		assert.InDelta(t, 5.0/4, l[1].Value, 1e-15)
		assert.InDelta(t, 10.0/4, l[2].Value, 1e-15)
		assert.InDelta(t, 0.5, l[3].Value, 1e-15)
		assert.InDelta(t, 2.0, l[2].Centroid, 1e-15)
		assert.Equal(t, 0.0, l[0].Start)
		assert.Equal(t, 0.5, l[0].End)
		assert.Equal(t, 2.5, l[3].Start)
		assert.Equal(t, 3.5, l[3].End)
	}
	for _, l := range e.DirectionLags(2) { // north-south: no pair
		assert.Equal(t, uint64(0), l.Pairs)
	}
	// Population variance of 0, 1, 3, 2.
	assert.InDelta(t, 1.25, e.DataVariance, 1e-15)
	assert.Equal(t, Omnidirectional, e.Directions[0].Type)
	assert.Equal(t, Directional, e.Directions[1].Type)
	assert.Equal(t, 4, e.Directions[1].Offset)
}

// Declustering weights: pair weight w_i·w_j. With weights 1, 2, 1, 1 on the
// line above, lag 1 holds (0,1) weight 2 Δ²=1 and (1,2) weight 2 Δ²=4:
// γ = (2+8)/(2·4); lag 2 holds (0,2) weight 1 Δ²=9 and (2,4) weight 1 Δ²=1.
// The weighted mean is (0+2+3+2)/5 = 1.4 and the variance
// (1.96 + 2·0.16 + 2.56 + 0.36)/5 = 1.04.
func TestComputeByHandWeights(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0}
	e, err := Compute(context.Background(), coords, []float64{0, 1, 3, 2}, []float64{1, 2, 1, 1},
		Params{Directions: []Direction{omni()}, LagDistance: 1, NLags: 3})
	require.NoError(t, err)
	assert.InDelta(t, 10.0/8, e.Lags[1].Value, 1e-15)
	assert.InDelta(t, 4.0, e.Lags[1].Weight, 1e-15)
	assert.InDelta(t, 10.0/4, e.Lags[2].Value, 1e-15)
	assert.InDelta(t, 1.04, e.DataVariance, 1e-14)
}

// Angular and band tests on a hand-made configuration around the origin:
// a direction N45E with 10° tolerance, bandwidth 0.5, dip 0 with tolerance
// 10° and band height 0.3.
func TestComputeByHandDirections(t *testing.T) {
	s := math.Sqrt2 / 2
	coords := []float64{
		0, 0, 0, // 0: origin, value 0
		2 * s, 2 * s, 0, // 1: N45E at distance 2, value 1 → accepted
		-2 * s, -2 * s, 0, // 2: S45W (the opposite) at distance 2, value 2 → accepted
		2, 0, 0, // 3: east at 2, 45° off → rejected by azimuth
		2 * s, 2 * s, 0.2, // 4: slightly above 1 → dip 5.7°, band 0.2 → accepted
		2 * s, 2 * s, 1, // 5: far above: dip 26.6° → rejected
	}
	values := []float64{0, 1, 2, 10, 3, 20}
	// Only pairs with the origin matter at lag 2 (lag distance 2, tolerance
	// 0.1): 0–1, 0–2, 0–4; 1–4 (d = 0.2) and 2–… are not in a lag, 0–3 is
	// rejected, 0–5 (d=2.236) is outside the window.
	e, err := Compute(context.Background(), coords, values, nil, Params{
		Directions:  []Direction{dir(45, 0, 10, 10, 0.5, 0.3)},
		LagDistance: 2, NLags: 1, LagTolerance: 0.1,
	})
	require.NoError(t, err)
	l := e.Lags[1]
	assert.Equal(t, uint64(3), l.Pairs)
	assert.InDelta(t, (1.0+4+9)/6, l.Value, 1e-15)
	// The same with a band height of 0.1 drops pair 0–4.
	e, err = Compute(context.Background(), coords, values, nil, Params{
		Directions:  []Direction{dir(45, 0, 10, 10, 0.5, 0.1)},
		LagDistance: 2, NLags: 1, LagTolerance: 0.1,
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(2), e.Lags[1].Pairs)
	assert.InDelta(t, (1.0+4)/4, e.Lags[1].Value, 1e-15)
	// A direction dipping 26.57° down towards S45W (= up towards N45E) finds
	// the pair 0–5 at lag √5.
	dip := math.Atan(0.5) * 180 / math.Pi
	e, err = Compute(context.Background(), coords, values, nil, Params{
		Directions:  []Direction{dir(225, dip, 5, 5, 0.1, 0.1)},
		LagDistance: math.Sqrt(5), NLags: 1, LagTolerance: 0.01,
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(1), e.Lags[1].Pairs)
	assert.InDelta(t, 200.0, e.Lags[1].Value, 1e-12)
}

// Closed lag windows: a pair exactly on the boundary between lags 1 and 2
// (|h| = 1.5 with d = 1) counts in both.
func TestComputeClosedWindows(t *testing.T) {
	e, err := Compute(context.Background(), []float64{0, 0, 0, 1.5, 0, 0}, []float64{0, 2}, nil,
		Params{Directions: []Direction{omni()}, LagDistance: 1, NLags: 2})
	require.NoError(t, err)
	assert.Equal(t, uint64(1), e.Lags[1].Pairs)
	assert.Equal(t, uint64(1), e.Lags[2].Pairs)
	assert.Equal(t, 2.0, e.Lags[2].Value)
}

// bruteForce is an all-pairs implementation of the conventions of the package
// documentation, written independently of the cell index.
func bruteForce(coords, values, weights []float64, p Params) []Lag {
	tol := p.LagTolerance
	if tol == 0 {
		tol = p.LagDistance / 2
	}
	nb := p.NLags + 1
	maxD := (float64(p.NLags) + 0.5) * p.LagDistance
	type acc struct {
		n         uint64
		w, wh, wg float64
	}
	out := make([]acc, len(p.Directions)*nb)
	n := len(values)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if math.IsNaN(values[i]) || math.IsNaN(values[j]) {
				continue
			}
			h := [3]float64{coords[3*j] - coords[3*i], coords[3*j+1] - coords[3*i+1], coords[3*j+2] - coords[3*i+2]}
			hs := h[0]*h[0] + h[1]*h[1] + h[2]*h[2]
			if hs == 0 || hs > maxD*maxD {
				continue
			}
			d := math.Sqrt(hs)
			w := 1.0
			if weights != nil {
				w = weights[i] * weights[j]
			}
			for di, dr := range p.Directions {
				if dr.Type != Omnidirectional {
					az, dp := dr.Azimuth*math.Pi/180, dr.Dip*math.Pi/180
					u := [3]float64{math.Sin(az), math.Cos(az)}
					hxy := math.Hypot(h[0], h[1])
					ca := 1.0
					if hxy >= 1e-20 {
						ca = (h[0]*u[0] + h[1]*u[1]) / hxy
					}
					catol := 0.0
					if dr.AzimuthTolerance < 90 {
						catol = math.Cos(dr.AzimuthTolerance * math.Pi / 180)
					}
					if math.Abs(ca) < catol || math.Abs(u[0]*h[1]-u[1]*h[0]) > dr.Bandwidth {
						continue
					}
					if ca < 0 {
						hxy = -hxy
					}
					cdtol := 0.0
					if dr.DipTolerance < 90 {
						cdtol = math.Cos(dr.DipTolerance * math.Pi / 180)
					}
					if math.Abs(hxy*math.Cos(dp)-h[2]*math.Sin(dp))/d < cdtol ||
						math.Abs(math.Cos(dp)*h[2]+math.Sin(dp)*hxy) > dr.BandHeight {
						continue
					}
				}
				for k := 0; k < nb; k++ {
					c := float64(k) * p.LagDistance
					if d >= c-tol && d <= c+tol {
						a := &out[di*nb+k]
						dv := values[j] - values[i]
						a.n++
						a.w += w
						a.wh += w * d
						a.wg += w * dv * dv
					}
				}
			}
		}
	}
	lags := make([]Lag, len(out))
	for i, a := range out {
		lags[i] = Lag{Pairs: a.n, Weight: a.w, Value: math.NaN(), Centroid: math.NaN()}
		if a.n > 0 {
			lags[i].Value = a.wg / (2 * a.w)
			lags[i].Centroid = a.wh / a.w
		}
	}
	return lags
}

func randomData(seed uint64, n int, ext [3]float64) (coords, values, weights []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	coords = make([]float64, 3*n)
	values = make([]float64, n)
	weights = make([]float64, n)
	for i := 0; i < n; i++ {
		for a := range 3 {
			coords[3*i+a] = rng.Float64() * ext[a]
		}
		values[i] = math.Sin(coords[3*i]/30) + rng.NormFloat64()
		weights[i] = 0.5 + rng.Float64()
		if rng.IntN(50) == 0 {
			values[i] = math.NaN()
		}
	}
	return
}

// The cell index finds exactly the pairs of an all-pairs loop under the same
// tolerances: pair counts equal, γ̂ to 1e-12, centroids and weights to a
// relative 1e-12 (only the order of summation differs).
func TestComputeBruteForce(t *testing.T) {
	coords, values, weights := randomData(7, 3000, [3]float64{400, 300, 60})
	// Drill-hole-like duplicates along z and an exact duplicate location.
	coords[3*5], coords[3*5+1], coords[3*5+2] = coords[0], coords[1], coords[2]
	p := Params{
		Directions: []Direction{
			omni(),
			dir(0, 0, 22.5, 22.5, 20, 10),
			dir(120, 30, 15, 10, 40, 8),
			dir(300, -60, 30, 20, math.Inf(1), 15),
			dir(45, 90, 90, 15, math.Inf(1), math.Inf(1)),
			dir(200, 0, 90, 90, 5, 5),
		},
		LagDistance: 12.5, NLags: 9, LagTolerance: 8,
	}
	for _, w := range [][]float64{nil, weights} {
		e, err := Compute(context.Background(), coords, values, w, p)
		require.NoError(t, err)
		want := bruteForce(coords, values, w, p)
		for i, l := range e.Lags {
			require.Equal(t, want[i].Pairs, l.Pairs, "lag %d", i)
			if l.Pairs == 0 {
				continue
			}
			assert.InDelta(t, want[i].Value, l.Value, 1e-12, "lag %d", i)
			assert.InEpsilon(t, want[i].Centroid, l.Centroid, 1e-12, "lag %d", i)
			assert.InEpsilon(t, want[i].Weight, l.Weight, 1e-12, "lag %d", i)
		}
	}
}

// The same bits for any number of goroutines.
func TestComputeDeterministic(t *testing.T) {
	coords, values, weights := randomData(9, 4000, [3]float64{500, 500, 100})
	p := Params{Directions: []Direction{omni(), dir(30, 10, 20, 20, 50, 20)}, LagDistance: 20, NLags: 10}
	var ref *Experimental
	for _, w := range []int{1, 2, 3, 8} {
		e, err := Compute(geostat.WithWorkers(context.Background(), w), coords, values, weights, p)
		require.NoError(t, err)
		if ref == nil {
			ref = e
			continue
		}
		for i := range e.Lags {
			assert.Equal(t, math.Float64bits(ref.Lags[i].Value), math.Float64bits(e.Lags[i].Value))
			assert.Equal(t, math.Float64bits(ref.Lags[i].Centroid), math.Float64bits(e.Lags[i].Centroid))
		}
	}
}

func TestComputeErrors(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0, 2, 0, 0}
	values := []float64{1, 2, 3}
	ok := Params{Directions: []Direction{dir(0, 0, 20, 20, 10, 10)}, LagDistance: 1, NLags: 3}
	cases := []struct {
		name string
		edit func(p *Params)
		want string
	}{
		{"no directions", func(p *Params) { p.Directions = nil }, "directions"},
		{"no lags", func(p *Params) { p.NLags = 0 }, "n_lags"},
		{"zero lag distance", func(p *Params) { p.LagDistance = 0 }, "lag_distance"},
		{"negative tolerance", func(p *Params) { p.LagTolerance = -1 }, "lag_tolerance"},
		{"azimuth tolerance", func(p *Params) { p.Directions[0].AzimuthTolerance = 95 }, "directions[0].azimuth_tolerance"},
		{"zero dip tolerance", func(p *Params) { p.Directions[0].DipTolerance = 0 }, "directions[0].dip_tolerance"},
		{"azimuth", func(p *Params) { p.Directions[0].Azimuth = -5 }, "directions[0].azimuth"},
		{"dip", func(p *Params) { p.Directions[0].Dip = 91 }, "directions[0].dip"},
		{"bandwidth", func(p *Params) { p.Directions[0].Bandwidth = 0 }, "directions[0].bandwidth"},
		{"bandheight", func(p *Params) { p.Directions[0].BandHeight = math.NaN() }, "directions[0].bandheight"},
		{"type", func(p *Params) { p.Directions[0].Type = "sideways" }, "directions[0].direction_type"},
	}
	for _, c := range cases {
		p := ok
		p.Directions = append([]Direction(nil), ok.Directions...)
		c.edit(&p)
		_, err := Compute(context.Background(), coords, values, nil, p)
		require.Error(t, err, c.name)
		assert.True(t, strings.HasPrefix(err.Error(), c.want), "%s: %v", c.name, err)
	}
	_, err := Compute(context.Background(), coords, values, []float64{1, -1, 1}, ok)
	require.ErrorContains(t, err, "weights[1]")
	_, err = Compute(context.Background(), coords[:6], values, nil, ok)
	require.ErrorContains(t, err, "coordinates")
	_, err = Compute(context.Background(), coords, []float64{1, math.NaN(), math.NaN()}, nil, ok)
	require.ErrorContains(t, err, "values")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Compute(ctx, coords, values, nil, ok)
	require.ErrorIs(t, err, context.Canceled)
}

// With UTM-sized coordinates the index still finds exactly the pairs of the
// all-pairs loop.
func TestComputeBruteForceUTM(t *testing.T) {
	coords, values, weights := randomData(8, 1500, [3]float64{400, 300, 60})
	for i := 0; i < len(coords); i += 3 {
		coords[i] += 512345.25
		coords[i+1] += 7012345.5
		coords[i+2] += 1250
	}
	p := Params{
		Directions:  []Direction{omni(), dir(75, 10, 20, 15, 15, 6), dir(0, 90, 90, 20, 8, 8)},
		LagDistance: 15, NLags: 8,
	}
	e, err := Compute(context.Background(), coords, values, weights, p)
	require.NoError(t, err)
	want := bruteForce(coords, values, weights, p)
	for i, l := range e.Lags {
		require.Equal(t, want[i].Pairs, l.Pairs, "lag %d", i)
		if l.Pairs > 0 {
			assert.InDelta(t, want[i].Value, l.Value, 1e-12, "lag %d", i)
		}
	}
}
