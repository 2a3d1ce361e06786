package tasks

import (
	"context"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/variogram"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVariogramLibraryErrorsNameRequestMembers feeds the library invalid
// parameters and checks that each error maps onto the request member the
// task declares.
func TestVariogramLibraryErrorsNameRequestMembers(t *testing.T) {
	ctx := context.Background()
	coords := []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}
	values := []float64{1, 2, 3, 4}
	omni := []variogram.Direction{{Type: variogram.Omnidirectional}}
	dir := variogram.Direction{Azimuth: 0, AzimuthTolerance: 22.5, DipTolerance: 22.5, Bandwidth: math.Inf(1), BandHeight: math.Inf(1)}
	compute := []struct {
		p    variogram.Params
		want string
	}{
		{variogram.Params{Directions: omni, LagDistance: 0, NLags: 3}, "lags.lag_distance"},
		{variogram.Params{Directions: omni, LagDistance: 1, NLags: 0}, "lags.number_of_lags"},
		{variogram.Params{Directions: omni, LagDistance: 1, NLags: 3, LagTolerance: -1}, "lags.lag_tolerance"},
		{variogram.Params{Directions: nil, LagDistance: 1, NLags: 3}, "directions"},
		{variogram.Params{Directions: []variogram.Direction{dir, func() variogram.Direction { d := dir; d.AzimuthTolerance = 95; return d }()},
			LagDistance: 1, NLags: 3}, "directions[1].azimuth_tolerance"},
		{variogram.Params{Directions: []variogram.Direction{func() variogram.Direction { d := dir; d.Bandwidth = 0; return d }()},
			LagDistance: 1, NLags: 3}, "directions[0].bandwidth"},
	}
	for _, c := range compute {
		_, err := variogram.Compute(ctx, coords, values, nil, c.p)
		require.Error(t, err, c.want)
		name, reason := libraryParam(err)
		assert.Equal(t, c.want, name, "%v", err)
		assert.NotEmpty(t, reason)
	}

	// A line of 40 samples, enough lags for the fits.
	coords, values = nil, nil
	for i := range 40 {
		coords = append(coords, 0, float64(i), 0)
		values = append(values, math.Sin(float64(i)/3))
	}
	exp, err := variogram.Compute(ctx, coords, values, nil, variogram.Params{Directions: []variogram.Direction{dir, {Type: variogram.Omnidirectional}}, LagDistance: 1, NLags: 10})
	require.NoError(t, err)
	sph := variogram.StructureSpec{Type: geostat.Spherical}
	fits := []struct {
		p    variogram.FitParams
		want string
	}{
		{variogram.FitParams{Structures: []variogram.StructureSpec{sph, sph, sph, sph}}, "model.structures"},
		{variogram.FitParams{Structures: []variogram.StructureSpec{{Type: geostat.Spheroidal, Alpha: 4}}}, "model.structures[0].alpha"},
		{variogram.FitParams{Structures: []variogram.StructureSpec{sph}, Anisotropy: variogram.AnisotropyGiven, Axes: [3]int{0, 1, -1}}, "model.anisotropy"},
		{variogram.FitParams{Structures: []variogram.StructureSpec{sph}, Weighting: "x"}, "model.weighting"},
		{variogram.FitParams{Structures: []variogram.StructureSpec{sph}, Sill: "x"}, "model.sill_constraint"},
		{variogram.FitParams{Structures: []variogram.StructureSpec{sph}, MinPairs: 1000}, "model.min_pairs"},
		{variogram.FitParams{Structures: []variogram.StructureSpec{sph}, Starts: 5000}, "model.starts"},
	}
	for _, c := range fits {
		_, err := variogram.Fit(ctx, exp.Series(), c.p)
		require.Error(t, err, c.want)
		name, _ := libraryParam(err)
		assert.Equal(t, c.want, name, "%v", err)
	}
	name, _ := libraryParam(context.Canceled)
	assert.Empty(t, name)
}
