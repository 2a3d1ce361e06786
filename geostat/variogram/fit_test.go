package variogram

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

// modelSeries evaluates v along each direction at the lag centroids k·d,
// k = 1 … n, with pairs pairs per lag: experimental points computed exactly
// from the model.
func modelSeries(v *geostat.Variogram, dirs []Direction, d float64, n int, pairs uint64) []Series {
	var out []Series
	for _, dr := range dirs {
		s := Series{Direction: dr}
		u := dr.Vector()
		for k := 1; k <= n; k++ {
			h := d * float64(k)
			g := v.GammaLag(h*u[0], h*u[1], h*u[2])
			if dr.Type == Omnidirectional {
				g = v.GammaLag(h, 0, 0)
			}
			s.Lags = append(s.Lags, Lag{Start: h - d/2, End: h + d/2, Centroid: h, Value: g, Pairs: pairs, Weight: float64(pairs)})
		}
		out = append(out, s)
	}
	return out
}

func within(t *testing.T, want, got, rel float64, msg string) {
	t.Helper()
	assert.InDelta(t, want, got, rel*math.Abs(want), "%s: want %v got %v", msg, want, got)
}

// A two-structure anisotropic model is recovered from its own γ along its
// three axes (given anisotropy), ranges and sills within 1 %, for each
// weighting.
func TestFitRecoversModelGivenAxes(t *testing.T) {
	rot := geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}
	m := rot.Matrix()
	var dirs []Direction
	for a := range 3 {
		u := [3]float64{m[a], m[3+a], m[6+a]}
		az := math.Atan2(u[0], u[1]) * 180 / math.Pi
		if az < 0 {
			az += 360
		}
		dirs = append(dirs, dir(az, -math.Asin(u[2])*180/math.Pi, 22.5, 22.5, 10, 10))
	}
	v, err := geostat.NewVariogram(0.1,
		geostat.Structure{Type: geostat.Spherical, Contribution: 0.5, Ellipsoid: geostat.Ellipsoid{Major: 80, SemiMajor: 50, Minor: 20, Rotation: rot}},
		geostat.Structure{Type: geostat.Exponential, Contribution: 0.4, Ellipsoid: geostat.Ellipsoid{Major: 250, SemiMajor: 150, Minor: 60, Rotation: rot}})
	require.NoError(t, err)
	series := modelSeries(v, dirs, 10, 30, 500)
	for _, w := range []Weighting{WeightCressie, WeightPairs, WeightPairsOverDistance} {
		for _, sill := range []SillConstraint{SillFree, SillUnit} {
			res, err := Fit(context.Background(), series, FitParams{
				Structures: []StructureSpec{{Type: geostat.Spherical}, {Type: geostat.Exponential}},
				Anisotropy: AnisotropyGiven, Axes: [3]int{0, 1, 2}, Weighting: w, Sill: sill, RangeMax: 400,
			})
			require.NoError(t, err)
			got := res.Variogram
			msg := string(w) + "/" + string(sill)
			assert.Less(t, res.Residual, 1e-8, msg)
			within(t, 0.1, got.Nugget, 0.01, msg+" nugget")
			for s := range 2 {
				we, ge := v.Structures[s].Ellipsoid, got.Structures[s].Ellipsoid
				within(t, v.Structures[s].Contribution, got.Structures[s].Contribution, 0.01, msg+" sill")
				within(t, we.Major, ge.Major, 0.01, msg+" major")
				within(t, we.SemiMajor, ge.SemiMajor, 0.01, msg+" semi-major")
				within(t, we.Minor, ge.Minor, 0.01, msg+" minor")
			}
			// The rotation reproduces the axes.
			gm := got.Structures[0].Ellipsoid.Rotation.Matrix()
			for a := range 3 {
				c := math.Abs(gm[a]*m[a] + gm[3+a]*m[3+a] + gm[6+a]*m[6+a])
				assert.InDelta(t, 1, c, 1e-9, "axis %d", a)
			}
			assert.Equal(t, 30*3, res.Lags)
		}
	}
}

// Every structure type, isotropic, from an omnidirectional series; the sill
// fixed to the data variance.
func TestFitRecoversEachType(t *testing.T) {
	for _, st := range []StructureSpec{
		{Type: geostat.Spherical}, {Type: geostat.Exponential}, {Type: geostat.Gaussian}, {Type: geostat.Cubic},
		{Type: geostat.Spheroidal, Alpha: 5}, {Type: geostat.GeneralisedCauchy, Alpha: 3}, {Type: geostat.Linear},
	} {
		v, err := geostat.NewVariogram(0.3, geostat.Structure{Type: st.Type, Alpha: st.Alpha, Contribution: 1.7,
			Ellipsoid: geostat.Ellipsoid{Major: 90, SemiMajor: 90, Minor: 90}})
		require.NoError(t, err)
		series := modelSeries(v, []Direction{omni()}, 10, 20, 100)
		p := FitParams{Structures: []StructureSpec{st}, Sill: SillDataVariance, DataVariance: 2}
		if st.Type == geostat.Linear {
			p.Sill = SillFree // an intrinsic model has no sill
		}
		res, err := Fit(context.Background(), series, p)
		require.NoError(t, err, st.Type.String())
		got := res.Variogram
		within(t, 0.3, got.Nugget, 0.01, st.Type.String()+" nugget")
		if st.Type == geostat.Linear {
			// Only the slope c/a of γ = c·h/a is identifiable.
			within(t, 1.7/90, got.Structures[0].Contribution/got.Structures[0].Ellipsoid.Major, 0.01, "linear slope")
		} else {
			within(t, 1.7, got.Structures[0].Contribution, 0.01, st.Type.String()+" sill")
			within(t, 90, got.Structures[0].Ellipsoid.Major, 0.01, st.Type.String()+" range")
		}
		assert.InDelta(t, 0, res.Residual, 1e-8)
		for k, g := range res.Model[0] {
			assert.InDelta(t, series[0].Lags[k].Value, g, 1e-3)
		}
	}
}

// A fitted rotation: seven directions of a rotated model (six would not do:
// the directions must determine the six entries of the quadratic form
// R D⁻² Rᵀ, and these seven do).
func TestFitRecoversRotation(t *testing.T) {
	rot := geostat.Rotation{DipAzimuth: 70, Dip: 0, Pitch: 0}
	v, err := geostat.NewVariogram(0.2, geostat.Structure{Type: geostat.Spherical, Contribution: 0.8,
		Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 60, Minor: 25, Rotation: rot}})
	require.NoError(t, err)
	var dirs []Direction
	for _, az := range []float64{0, 45, 90, 135} {
		dirs = append(dirs, dir(az, 0, 22.5, 22.5, 10, 10))
	}
	dirs = append(dirs, dir(0, 90, 22.5, 22.5, 10, 10), dir(0, 45, 22.5, 22.5, 10, 10), dir(90, 45, 22.5, 22.5, 10, 10))
	series := modelSeries(v, dirs, 8, 25, 200)
	res, err := Fit(context.Background(), series, FitParams{
		Structures: []StructureSpec{{Type: geostat.Spherical}}, Anisotropy: AnisotropyFitted, Axes: [3]int{-1, -1, -1},
		Weighting: WeightPairs, Starts: 16, Seed: 3,
	})
	require.NoError(t, err)
	got := res.Variogram.Structures[0].Ellipsoid
	within(t, 150, got.Major, 0.01, "major")
	within(t, 60, got.SemiMajor, 0.01, "semi-major")
	within(t, 25, got.Minor, 0.01, "minor")
	// Same model γ in every direction.
	for _, u := range [][3]float64{{1, 0, 0}, {0.6, 0.8, 0}, {0, 0.6, 0.8}} {
		for _, h := range []float64{10, 50, 120} {
			assert.InDelta(t, v.GammaLag(h*u[0], h*u[1], h*u[2]), res.Variogram.GammaLag(h*u[0], h*u[1], h*u[2]), 1e-3)
		}
	}
}

func TestRotationOf(t *testing.T) {
	for _, r := range []geostat.Rotation{{}, {DipAzimuth: 30, Dip: 20, Pitch: 10}, {DipAzimuth: 300, Dip: 89, Pitch: 250},
		{DipAzimuth: 120, Dip: 0, Pitch: 0}, {DipAzimuth: 10, Dip: 135, Pitch: 5}} {
		m := r.Matrix()
		got := RotationOf(m)
		gm := got.Matrix()
		for i := range m {
			assert.InDelta(t, m[i], gm[i], 1e-12, "%+v → %+v", r, got)
		}
	}
}

func TestFitErrors(t *testing.T) {
	v, _ := geostat.NewVariogram(0.1, geostat.Structure{Type: geostat.Spherical, Contribution: 0.9,
		Ellipsoid: geostat.Ellipsoid{Major: 50, SemiMajor: 50, Minor: 50}})
	series := modelSeries(v, []Direction{dir(0, 0, 20, 20, 5, 5), dir(90, 0, 20, 20, 5, 5)}, 10, 6, 20)
	ok := FitParams{Structures: []StructureSpec{{Type: geostat.Spherical}}}
	cases := []struct {
		name string
		edit func(p *FitParams)
		want string
	}{
		{"no structures", func(p *FitParams) { p.Structures = nil }, "structures"},
		{"four structures", func(p *FitParams) { p.Structures = make([]StructureSpec, 4) }, "structures"},
		{"alpha", func(p *FitParams) { p.Structures = []StructureSpec{{Type: geostat.Spheroidal, Alpha: 4}} }, "structures[0].alpha"},
		{"too few pairs", func(p *FitParams) { p.MinPairs = 21 }, "min_pairs"},
		{"weighting", func(p *FitParams) { p.Weighting = "odd" }, "weighting"},
		{"sill", func(p *FitParams) { p.Sill = SillDataVariance }, "data_variance"},
		{"axes", func(p *FitParams) { p.Anisotropy = AnisotropyGiven; p.Axes = [3]int{0, -1, -1} }, "axes"},
		{"parallel axes", func(p *FitParams) { p.Anisotropy = AnisotropyGiven; p.Axes = [3]int{0, 0, -1} }, "axes"},
		{"bad axis", func(p *FitParams) { p.Anisotropy = AnisotropyGiven; p.Axes = [3]int{0, 5, -1} }, "axes.semi_major"},
		{"range bounds", func(p *FitParams) { p.RangeMin = 100; p.RangeMax = 50 }, "range_min"},
		{"starts", func(p *FitParams) { p.Starts = -1 }, "starts"},
	}
	for _, c := range cases {
		p := ok
		c.edit(&p)
		_, err := Fit(context.Background(), series, p)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	_, err := Fit(context.Background(), nil, ok)
	require.ErrorContains(t, err, "series")
	_, err = Fit(context.Background(), modelSeries(v, []Direction{omni()}, 10, 5, 20), FitParams{
		Structures: []StructureSpec{{Type: geostat.Spherical}}, Anisotropy: AnisotropyGiven})
	require.ErrorContains(t, err, "anisotropy")
}

// The fit does not depend on the number of goroutines.
func TestFitDeterministic(t *testing.T) {
	v, _ := geostat.NewVariogram(0.2, geostat.Structure{Type: geostat.Spherical, Contribution: 0.8,
		Ellipsoid: geostat.Ellipsoid{Major: 70, SemiMajor: 40, Minor: 40}})
	series := modelSeries(v, []Direction{dir(0, 0, 20, 20, 5, 5), dir(90, 0, 20, 20, 5, 5)}, 10, 12, 50)
	for i := range series {
		for k := range series[i].Lags {
			series[i].Lags[k].Value *= 1 + 0.1*math.Sin(float64(7*k+i)) // noise
		}
	}
	p := FitParams{Structures: []StructureSpec{{Type: geostat.Exponential}}, Anisotropy: AnisotropyGiven, Axes: [3]int{0, 1, -1}, Starts: 5}
	var ref *FitResult
	for _, w := range []int{1, 2, 5} {
		res, err := Fit(geostat.WithWorkers(context.Background(), w), series, p)
		require.NoError(t, err)
		if ref == nil {
			ref = res
			continue
		}
		assert.Equal(t, ref.Residual, res.Residual)
		assert.Equal(t, ref.Variogram.Nugget, res.Variogram.Nugget)
		assert.Equal(t, ref.Variogram.Structures[0].Ellipsoid, res.Variogram.Structures[0].Ellipsoid)
	}
	// Two directions in the horizontal plane: the minor (vertical) range is
	// tied to the semi-major one.
	e := ref.Variogram.Structures[0].Ellipsoid
	assert.Equal(t, e.SemiMajor, e.Minor)
}

// A structure the data do not need vanishes with a warning: a pure
// spherical model fitted with a spherical and a gaussian structure.
func TestFitVanishedStructure(t *testing.T) {
	v, _ := geostat.NewVariogram(0.2, geostat.Structure{Type: geostat.Spherical, Contribution: 0.8,
		Ellipsoid: geostat.Ellipsoid{Major: 50, SemiMajor: 50, Minor: 50}})
	series := modelSeries(v, []Direction{omni()}, 5, 20, 100)
	res, err := Fit(context.Background(), series, FitParams{
		Structures: []StructureSpec{{Type: geostat.Spherical}, {Type: geostat.Gaussian}}})
	require.NoError(t, err)
	assert.InDelta(t, 0, res.Residual, 1e-10)
	require.Len(t, res.Variogram.Structures, 1)
	assert.Equal(t, geostat.Spherical, res.Variogram.Structures[0].Type)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0], "structures[1] (gaussian)")
}
