package variogram

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gamvData is the data set of the gamv oracle: 300 samples at integer
// coordinates in [0, 100) × [0, 100) × [0, 30) with values k/64, k in
// [0, 256), all exact in float32 (gamv computes in single precision), and
// spatially correlated through a smooth trend.
func gamvData() (coords, values []float64) {
	rng := rand.New(rand.NewPCG(2026, 11))
	for i := 0; i < 300; i++ {
		x, y, z := float64(rng.IntN(100)), float64(rng.IntN(100)), float64(rng.IntN(30))
		coords = append(coords, x, y, z)
		k := math.Round(128 + 60*math.Sin(x/20)*math.Cos(y/30) + 20*math.Sin(z/8) + 30*rng.NormFloat64())
		values = append(values, math.Max(0, math.Min(255, k))/64)
	}
	return
}

// gamvParams are the directions of the oracle: omnidirectional (gamv:
// azimuth tolerance 90, dip tolerance 90, bands 1000), north with bandwidth
// 10.5, azimuth 60 and azimuth 90 dipping 30° down (gamv dip −30). Lag 10,
// tolerance 4.9, 6 lags. No pair sits exactly on a window or tolerance
// boundary (integer squared distances are never 5.1², 14.9², …, and no
// integer separation makes an angle of exactly 46°, 74°, …), where the
// decision would be left to rounding (gamv computes in float32).
var gamvParams = Params{
	Directions: []Direction{
		{Type: Omnidirectional},
		{Azimuth: 0, AzimuthTolerance: 22.5, DipTolerance: 22.5, Bandwidth: 10.5, BandHeight: 5.5},
		{Azimuth: 60, AzimuthTolerance: 14, DipTolerance: 30, Bandwidth: 1000, BandHeight: 1000},
		{Azimuth: 90, Dip: 30, AzimuthTolerance: 30, DipTolerance: 20, Bandwidth: 12.5, BandHeight: 7.5},
	},
	LagDistance: 10, NLags: 6, LagTolerance: 4.9,
}

// gamvOracle holds GSLIB gamv's output (np, dis, gam per lag; lags 2 … 8 of
// its nlag + 2 = 8, which are lags 0 … 6 here; its lag 1 holds only the
// samples paired with themselves, there being no coincident samples) for gamvData and gamvParams.
// Produced with the GSLIB 2.0 gamv (src/legacy/gamv/gamv.f90 of a public
// GSLIB 2.0 repository, compiled with gfortran -O2 outside this repository)
// on gamvData written as a GEO-EAS file, variogram type 1, no standardisation,
// trimming limits ±1e21, lag 10, tolerance 4.9, 6 lags, 4 directions
// (azm, atol, bandh, dip, dtol, bandv):
//
//	0 90 1000 0 90 1000
//	0 22.5 10.5 0 22.5 5.5
//	60 14 1000 0 30 1000
//	90 30 12.5 -30 20 7.5
//
// gamv counts the omnidirectional pairs twice (its azimuth tolerance is 90°).
var gamvOracle = [4][7]struct {
	np       uint64
	dis, gam float64
}{
	{{140, 3.544, 0.25168}, {2856, 11.197, 0.25518}, {7996, 20.474, 0.30490}, {11710, 30.163, 0.37650}, {13012, 40.002, 0.43896}, {12894, 49.976, 0.53532}, {12300, 59.982, 0.58212}},
	{{4, 3.601, 0.18179}, {162, 11.406, 0.27156}, {373, 20.145, 0.32549}, {408, 29.977, 0.41240}, {321, 39.696, 0.45437}, {272, 49.802, 0.61875}, {217, 59.719, 0.75825}},
	{{9, 3.241, 0.14368}, {106, 11.601, 0.31731}, {363, 20.803, 0.30198}, {608, 30.418, 0.36789}, {883, 40.169, 0.48906}, {1032, 50.027, 0.58021}, {1054, 60.013, 0.55896}},
	{{7, 3.250, 0.26512}, {164, 11.293, 0.25622}, {403, 20.222, 0.33331}, {423, 29.697, 0.33410}, {267, 39.273, 0.55788}, {109, 49.585, 0.54175}, {37, 58.642, 0.60730}},
}

func TestComputeAgainstGamv(t *testing.T) {
	coords, values := gamvData()
	e, err := Compute(context.Background(), coords, values, nil, gamvParams)
	require.NoError(t, err)
	for d := range gamvOracle {
		lags := e.DirectionLags(d)
		for k, want := range gamvOracle[d] {
			got := lags[k]
			np := got.Pairs
			if d == 0 {
				np *= 2
			}
			assert.Equal(t, want.np, np, "direction %d lag %d", d, k)
			if want.np == 0 {
				continue
			}
			assert.InDelta(t, want.dis, got.Centroid, 5.1e-4, "direction %d lag %d distance", d, k)
			assert.InDelta(t, want.gam, got.Value, 5.1e-6, "direction %d lag %d γ", d, k)
		}
	}
}
