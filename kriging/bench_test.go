package kriging

import (
	"math"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

// benchCase is the benchmark of issue 4: 2,000 samples in 1000 × 1000 × 200
// m, the 200,000 centres of a 100 × 100 × 20 grid of 10 m cells, at most 32
// samples, a two-structure anisotropic rotated variogram with nugget.
type benchCase struct {
	coords, values []float64
	targets        []float64
	grid           *grid.Grid
	variogram      *geostat.Variogram
	search         neighbor.Params
}

var (
	benchOnce sync.Once
	bench     benchCase
)

// benchData returns the shared benchmark inputs. The samples are drill-hole
// like: 100 straight holes from random collars at z = 200, dipping 60–90°
// toward random azimuths, sampled every 10 m down to z ≥ 0 (20 samples
// each), with a smooth value plus noise.
func benchData(b testing.TB) *benchCase {
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(2024, 4))
		for h := 0; h < 100; h++ {
			x0, y0 := rng.Float64()*1000, rng.Float64()*1000
			az := rng.Float64() * 2 * math.Pi
			dip := (60 + 30*rng.Float64()) * math.Pi / 180
			dx, dy, dz := math.Cos(dip)*math.Sin(az), math.Cos(dip)*math.Cos(az), -math.Sin(dip)
			for s := 0; s < 20; s++ {
				t := 5 + 10*float64(s)/(-dz)*(-dz) // 10 m along hole, first sample 5 m down
				x, y, z := x0+t*dx, y0+t*dy, 200+t*dz
				bench.coords = append(bench.coords, x, y, z)
				bench.values = append(bench.values, math.Sin(x/150)+math.Cos(y/200)+z/200+0.3*rng.NormFloat64())
			}
		}
		g, err := grid.New([3]float64{0, 0, 0}, [3]int{100, 100, 20}, [3]float64{10, 10, 10}, geostat.Rotation{})
		if err != nil {
			panic(err)
		}
		bench.grid = g
		bench.targets = g.CellCentres(nil)
		rot := geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}
		v, err := geostat.NewVariogram(0.1,
			geostat.Structure{Type: geostat.Spherical, Contribution: 0.6, Ellipsoid: geostat.Ellipsoid{Major: 300, SemiMajor: 200, Minor: 50, Rotation: rot}},
			geostat.Structure{Type: geostat.Exponential, Contribution: 0.3, Ellipsoid: geostat.Ellipsoid{Major: 600, SemiMajor: 400, Minor: 100, Rotation: rot}})
		if err != nil {
			panic(err)
		}
		bench.variogram = v
		bench.search = neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 600, SemiMajor: 400, Minor: 100, Rotation: rot}, MaxSamples: 32}
	})
	return &bench
}

// BenchmarkEstimate kriges the 200,000 cell centres (one op = all targets):
// simple and ordinary, point and 2 × 2 × 2 block. Run with -cpu 1,2.
func BenchmarkEstimate(b *testing.B) {
	c := benchData(b)
	for _, m := range []Method{Simple, Ordinary} {
		for _, block := range []bool{false, true} {
			name := m.String() + "/point"
			p := Params{Variogram: c.variogram, Method: m, Search: c.search}
			if block {
				name = m.String() + "/block2x2x2"
				p.Discretisation, p.CellSize = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, c.grid.CellSize
			}
			b.Run(name, func(b *testing.B) {
				k, err := New(c.coords, c.values, p)
				if err != nil {
					b.Fatal(err)
				}
				nt := len(c.targets) / 3
				out := Output{Estimate: make([]float64, nt), Variance: make([]float64, nt)}
				// Check the result once before timing.
				if err := k.Estimate(b.Context(), c.targets, &out, nil); err != nil {
					b.Fatal(err)
				}
				s := k.NewSolver()
				for q := 0; q < nt; q += 997 {
					sol, ok := s.Solve(c.targets[3*q], c.targets[3*q+1], c.targets[3*q+2])
					if !ok {
						b.Fatalf("target %d not estimated", q)
					}
					e := 0.0
					for a, i := range sol.Neighbors {
						e += sol.Weights[a] * c.values[i]
					}
					if m == Simple {
						e = 0
						for a, i := range sol.Neighbors {
							e += sol.Weights[a] * (c.values[i] - p.Mean)
						}
						e += p.Mean
					}
					if math.Abs(e-out.Estimate[q]) > 1e-9 || math.Abs(sol.Variance-out.Variance[q]) > 1e-9 || !(out.Variance[q] >= 0) {
						b.Fatalf("target %d: estimate %v variance %v, Solve gives %v and %v", q, out.Estimate[q], out.Variance[q], e, sol.Variance)
					}
				}
				before := k.Stats()
				b.ResetTimer()
				c0 := cpuTime()
				for b.Loop() {
					if err := k.Estimate(b.Context(), c.targets, &out, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				st := k.Stats()
				systems := st.Systems - before.Systems
				b.ReportMetric(float64(st.Reused-before.Reused)/float64(systems), "reuse")
				b.ReportMetric(float64(st.Updated-before.Updated)/float64(systems), "updated")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*int64(nt)), "ns/target")
				b.ReportMetric((cpuTime()-c0)/1e9/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// BenchmarkNew measures the preparation of the benchmark's Kriger (merging,
// index, per-structure transforms; the covariance table is filled later, as
// systems need it).
func BenchmarkNew(b *testing.B) {
	c := benchData(b)
	p := Params{Variogram: c.variogram, Method: Simple, Search: c.search}
	for b.Loop() {
		if _, err := New(c.coords, c.values, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSolve measures Solver.Solve (search, system, factorisation, one
// right-hand side) on the benchmark data along a row of cell centres.
func BenchmarkSolve(b *testing.B) {
	c := benchData(b)
	k, err := New(c.coords, c.values, Params{Variogram: c.variogram, Method: Ordinary, Search: c.search})
	if err != nil {
		b.Fatal(err)
	}
	s := k.NewSolver()
	nt := len(c.targets) / 3
	q := 0
	for b.Loop() {
		s.Solve(c.targets[3*q], c.targets[3*q+1], c.targets[3*q+2])
		q = (q + 1) % nt
	}
}

// cpuTime returns the process' user + system CPU time in nanoseconds (the
// figure to compare when other processes share the machine).
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}
