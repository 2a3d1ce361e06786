package kriging

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

// iso returns an isotropic ellipsoid of range a.
func iso(a float64) geostat.Ellipsoid { return geostat.Ellipsoid{Major: a, SemiMajor: a, Minor: a} }

// mustVariogram builds a variogram or fails the test.
func mustVariogram(t testing.TB, nugget float64, s ...geostat.Structure) *geostat.Variogram {
	t.Helper()
	v, err := geostat.NewVariogram(nugget, s...)
	require.NoError(t, err)
	return v
}

// spherical returns the spherical model of range a, contribution c, nugget c0.
func spherical(t testing.TB, c0, c, a float64) *geostat.Variogram {
	return mustVariogram(t, c0, geostat.Structure{Type: geostat.Spherical, Contribution: c, Ellipsoid: iso(a)})
}

// twoStructure is an anisotropic, rotated two-structure model with nugget.
func twoStructure(t testing.TB, nugget float64) *geostat.Variogram {
	return mustVariogram(t, nugget,
		geostat.Structure{Type: geostat.Spherical, Contribution: 0.6, Ellipsoid: geostat.Ellipsoid{
			Major: 300, SemiMajor: 200, Minor: 50, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}}},
		geostat.Structure{Type: geostat.Exponential, Contribution: 0.3, Ellipsoid: geostat.Ellipsoid{
			Major: 600, SemiMajor: 400, Minor: 100, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}}})
}

// wide is a search neighbourhood that includes everything within r.
func wide(r float64, maxSamples int) neighbor.Params {
	return neighbor.Params{Ellipsoid: iso(r), MaxSamples: maxSamples}
}

// mustKriger builds a Kriger or fails the test.
func mustKriger(t testing.TB, coords, values []float64, p Params) *Kriger {
	t.Helper()
	k, err := New(coords, values, p)
	require.NoError(t, err)
	return k
}

// randomPoints returns n uniform points in [0, sx] × [0, sy] × [0, sz].
func randomPoints(rng *rand.Rand, n int, sx, sy, sz float64) []float64 {
	out := make([]float64, 3*n)
	for i := 0; i < n; i++ {
		out[3*i] = rng.Float64() * sx
		out[3*i+1] = rng.Float64() * sy
		out[3*i+2] = rng.Float64() * sz
	}
	return out
}

// dense is the reference solution of one target computed independently of
// the package: covariances from geostat.Variogram.CovarianceLag on world
// lags, sub-point offsets from grid.BlockDiscretisation.Offsets, and the full
// (bordered for ordinary kriging) system solved by gonum's LU.
type dense struct {
	sub      [][]float64 // per sub-point weights
	weights  []float64
	mu       float64
	variance float64
}

// denseSolve solves the system of the given neighbours (indices into coords)
// for the target centre and world sub-point offsets.
func denseSolve(t testing.TB, v *geostat.Variogram, ordinary bool, coords []float64, nb []int32, centre [3]float64, offsets []float64) dense {
	t.Helper()
	n := len(nb)
	np := len(offsets) / 3
	m := n
	if ordinary {
		m = n + 1
	}
	pt := func(i int32) [3]float64 { return [3]float64{coords[3*i], coords[3*i+1], coords[3*i+2]} }
	a := mat.NewDense(m, m, nil)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			a.Set(r, c, v.Covariance(pt(nb[r]), pt(nb[c])))
		}
		if ordinary {
			a.Set(r, n, 1)
			a.Set(n, r, 1)
		}
	}
	sub := func(p int) [3]float64 {
		return [3]float64{centre[0] + offsets[3*p], centre[1] + offsets[3*p+1], centre[2] + offsets[3*p+2]}
	}
	// Right-hand side without nugget: the structural part of C.
	structural := func(a, b [3]float64) float64 {
		c := v.Covariance(a, b)
		if a == b {
			c -= v.Nugget
		}
		return c
	}
	b := mat.NewDense(m, np, nil)
	for p := 0; p < np; p++ {
		for r := 0; r < n; r++ {
			b.Set(r, p, structural(pt(nb[r]), sub(p)))
		}
		if ordinary {
			b.Set(n, p, 1)
		}
	}
	var x mat.Dense
	require.NoError(t, x.Solve(a, b))
	out := dense{weights: make([]float64, n)}
	kbar := make([]float64, n)
	for p := 0; p < np; p++ {
		w := make([]float64, n)
		for r := 0; r < n; r++ {
			w[r] = x.At(r, p)
			out.weights[r] += w[r] / float64(np)
			kbar[r] += b.At(r, p) / float64(np)
		}
		out.sub = append(out.sub, w)
		if ordinary {
			out.mu += x.At(n, p) / float64(np)
		}
	}
	cvv := 0.0
	for p := 0; p < np; p++ {
		for q := 0; q < np; q++ {
			cvv += v.Covariance(sub(p), sub(q))
		}
	}
	cvv /= float64(np * np)
	out.variance = cvv - out.mu
	for r := 0; r < n; r++ {
		out.variance -= out.weights[r] * kbar[r]
	}
	return out
}

// worldOffsets returns the world sub-point offsets of a block through the
// grid package (an independent path from the Kriger's own).
func worldOffsets(t testing.TB, d grid.BlockDiscretisation, cell [3]float64, rot geostat.Rotation) []float64 {
	g, err := grid.New([3]float64{}, [3]int{1, 1, 1}, cell, rot)
	require.NoError(t, err)
	return d.Offsets(g)
}
