package report

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// synth is a synthetic ensemble for the tests: Gaussian fields with an
// exponential covariance by the spectral method (sums of L random cosines,
// Shinozuka's method; independent of package tbsim), a
// "truth" field sampled by vertical drill holes as the data, and
// realisations Y_r = ρ·T + √(1 − ρ²)·W_r that share the covariance and
// resemble the truth, as conditional realisations would.
type synth struct {
	g    *grid.Grid
	disc grid.BlockDiscretisation
	v    *geostat.Variogram
	ref  *geostat.Distribution
	data Data
	R    int

	point, pointNS, block, blockNS []float64
}

// spectral is one Gaussian random field: frequencies (in the model's
// isotropic space) and phases of L cosines, and the nugget scale.
type spectral struct {
	a     geostat.Anisotropy
	omega []float64
	phase []float64
	amp   float64
	c1    float64 // contribution of the exponential structure
	c0    float64 // nugget
	rng   *rand.Rand
}

func newSpectral(a geostat.Anisotropy, c0, c1 float64, L int, seed uint64) *spectral {
	rng := rand.New(rand.NewPCG(seed, 99))
	s := &spectral{a: a, amp: math.Sqrt(2 * c1 / float64(L)), c0: c0, c1: c1, rng: rng}
	for range L {
		// exp(−3r) ⇔ ω = 3·Z/|W| (the multivariate Cauchy distribution).
		w := math.Abs(rng.NormFloat64())
		for range 3 {
			s.omega = append(s.omega, 3*rng.NormFloat64()/w)
		}
		s.phase = append(s.phase, 2*math.Pi*rng.Float64())
	}
	return s
}

func (s *spectral) at(x, y, z float64) float64 {
	u, v, w := s.a.Apply(x, y, z)
	sum := 0.0
	for l := range s.phase {
		sum += math.Cos(s.omega[3*l]*u + s.omega[3*l+1]*v + s.omega[3*l+2]*w + s.phase[l])
	}
	return s.amp*sum + math.Sqrt(s.c0)*s.rng.NormFloat64()
}

// makeSynth builds a synthetic case on an unrotated grid.
func makeSynth(t testing.TB, size [3]int, cell [3]float64, disc grid.BlockDiscretisation, R, L, holes int, seed uint64) *synth {
	t.Helper()
	g, err := grid.New([3]float64{1000, 2000, 300}, size, cell, geostat.Rotation{})
	require.NoError(t, err)
	ell := geostat.Ellipsoid{Major: 12 * cell[0], SemiMajor: 6 * cell[1], Minor: 3 * cell[2], Rotation: geostat.Rotation{DipAzimuth: 60}}
	const c0, c1 = 0.05, 0.95
	v, err := geostat.NewVariogram(c0, geostat.Structure{Type: geostat.Exponential, Contribution: c1, Ellipsoid: ell})
	require.NoError(t, err)
	an, err := ell.Anisotropy()
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(seed, 1))
	truth := newSpectral(an, c0, c1, L, seed^0xabc)
	grade := func(y float64) float64 { return math.Exp(0.4 + 0.9*y) } // lognormal grades

	// Vertical drill holes, one sample per cell layer; a cluster of holes
	// in the richest corner gets smaller declustering weights.
	var d Data
	for h := range holes {
		cx, cy := rng.Float64(), rng.Float64()
		w := 1.0
		if h < holes/3 {
			cx, cy = 0.7+0.3*cx, 0.7+0.3*cy
			w = 0.4
		}
		x := g.Origin[0] + cx*float64(size[0])*cell[0]
		y := g.Origin[1] + cy*float64(size[1])*cell[1]
		for k := range size[2] {
			z := g.Origin[2] + (float64(k)+0.5)*cell[2]
			d.Coords = append(d.Coords, x, y, z)
			d.Values = append(d.Values, grade(truth.at(x, y, z)))
			d.Weights = append(d.Weights, w)
		}
	}
	zt, pt, err := geostat.ScoreTable(d.Values, d.Weights)
	require.NoError(t, err)
	maxZ := zt[len(zt)-1]
	ref, err := geostat.NewDistribution(zt, pt, geostat.Tail{Bound: 0, Power: 1}, geostat.Tail{Bound: 1.5 * maxZ, Power: 1})
	require.NoError(t, err)

	fine := disc.Fine(g)
	sub := fine.CellCentres(nil)
	nf := fine.NumCells()
	tf := make([]float64, nf)
	for i := range nf {
		tf[i] = truth.at(sub[3*i], sub[3*i+1], sub[3*i+2])
	}
	n := g.NumCells()
	s := &synth{g: g, disc: disc, v: v, ref: ref, data: d, R: R,
		point: make([]float64, n*R), pointNS: make([]float64, n*R), block: make([]float64, n*R), blockNS: make([]float64, n*R)}
	const rho = 0.75
	nsub := disc.Count()
	near := disc.Nearest()
	for r := range R {
		w := newSpectral(an, c0, c1, L, seed+uint64(r)*7919+1)
		yf := make([]float64, nf)
		for i := range nf {
			yf[i] = rho*tf[i] + math.Sqrt(1-rho*rho)*w.at(sub[3*i], sub[3*i+1], sub[3*i+2])
		}
		for c := range n {
			i, j, k := g.IJK(c)
			sy, sz := 0.0, 0.0
			for q := range nsub {
				a, b, cc := q%disc.NX, q/disc.NX%disc.NY, q/(disc.NX*disc.NY)
				fi := fine.Index(i*disc.NX+a, j*disc.NY+b, k*disc.NZ+cc)
				y := yf[fi]
				sy += y
				sz += ref.BackTransform(y)
				if q == near {
					s.pointNS[c+r*n] = y
					s.point[c+r*n] = ref.BackTransform(y)
				}
			}
			s.blockNS[c+r*n] = sy / float64(nsub)
			s.block[c+r*n] = sz / float64(nsub)
		}
	}
	return s
}

func (s *synth) input() *Input {
	return &Input{
		Context:   Context{Title: "Synthetic deposit — Au", Details: []Detail{{Label: "Domain", Value: "Oxide"}, {Label: "Realisations", Value: "synthetic"}}},
		Data:      s.data,
		Reference: s.ref, Variogram: s.v, Grid: s.g, Discretisation: s.disc,
		PointSimulations: s.point, PointSimulationsNormalScore: s.pointNS,
		BlockSimulations: s.block, BlockSimulationsNormalScore: s.blockNS,
		Units: "g/t",
	}
}
