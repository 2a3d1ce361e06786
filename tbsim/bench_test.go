package tbsim

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

func benchGrid(b *testing.B) *grid.Grid {
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{200, 200, 25}, [3]float64{5, 5, 4}, geostat.Rotation{})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func benchUnconditionalField(b *testing.B, typ geostat.StructureType, alpha int) {
	g := benchGrid(b)
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: typ, Alpha: alpha, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 40, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10}}})
	if err != nil {
		b.Fatal(err)
	}
	lo, hi := g.BoundingBox()
	out := make([]float64, g.NumCells())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := NewField(v, 1, 500, int64(i), lo, hi)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Grid(context.Background(), 0, g, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NumCells())/500, "ns/node-line")
}

// BenchmarkFieldGrid: 1,000,000 nodes, 500 lines, one structure.
func BenchmarkFieldGridSpherical(b *testing.B)   { benchUnconditionalField(b, geostat.Spherical, 0) }
func BenchmarkFieldGridExponential(b *testing.B) { benchUnconditionalField(b, geostat.Exponential, 0) }

// BenchmarkUnconditional: Run on 1,000,000 cells (200×200×25), 500 lines,
// 1 realisation, one spherical structure, Gaussian output (issue 5 goal:
// ≤ 0.3 s on 2 cores).
func BenchmarkUnconditional(b *testing.B) {
	g := benchGrid(b)
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 40, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10}}})
	if err != nil {
		b.Fatal(err)
	}
	prm := DefaultParams()
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		prm.Seed = int64(i)
		res, err := Run(context.Background(), Input{Grid: g, Variogram: v}, prm)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			m, s2 := meanVarBench(res.Block)
			if math.Abs(m) > 0.5 || s2 < 0.5 || s2 > 1.5 {
				b.Fatalf("implausible realisation: mean %g variance %g", m, s2)
			}
		}
	}
	b.ReportMetric((cpuTime()-c0)/1e9/float64(b.N), "cpu-s/op")
}

func meanVarBench(x []float64) (float64, float64) {
	m, s := 0.0, 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, s / float64(len(x))
}

// benchConditional: 2,000 data → 200×200×25 cells, 500 lines, 10
// realisations, simple kriging with 32 samples, two structures.
func benchConditional(b *testing.B, disc grid.BlockDiscretisation, types [2]geostat.StructureType) {
	g := benchGrid(b)
	rot := geostat.Rotation{DipAzimuth: 30, Dip: 10}
	v, err := geostat.NewVariogram(0.05,
		geostat.Structure{Type: types[0], Contribution: 0.55, Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15, Rotation: rot}},
		geostat.Structure{Type: types[1], Contribution: 0.4, Ellipsoid: geostat.Ellipsoid{Major: 300, SemiMajor: 200, Minor: 50, Rotation: rot}})
	if err != nil {
		b.Fatal(err)
	}
	lo, hi := g.BoundingBox()
	rng := newRand(12345)
	coords := make([]float64, 0, 6000)
	values := make([]float64, 0, 2000)
	for i := 0; i < 2000; i++ {
		for a := 0; a < 3; a++ {
			coords = append(coords, lo[a]+rng.Float64()*(hi[a]-lo[a]))
		}
		values = append(values, math.Exp(rng.NormFloat64()))
	}
	z, p, err := geostat.ScoreTable(values, nil)
	if err != nil {
		b.Fatal(err)
	}
	d, err := geostat.NewDistribution(z, p, geostat.Tail{Bound: 0, Power: 1}, geostat.Tail{Bound: 60, Power: 1})
	if err != nil {
		b.Fatal(err)
	}
	prm := DefaultParams()
	prm.Realisations = 10
	prm.Discretisation = disc
	prm.Search = &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 300, SemiMajor: 200, Minor: 50, Rotation: rot}, MaxSamples: 32}
	in := Input{Grid: g, Coords: coords, Values: values, Variogram: v, Distribution: d}
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		prm.Seed = int64(i)
		res, err := Run(context.Background(), in, prm)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			for _, x := range res.Block {
				if math.IsNaN(x) || x < 0 || x > 60 {
					b.Fatalf("bad simulated value %v", x)
				}
			}
			b.ReportMetric(res.Stats.Kriging.ReuseRate(), "reuse")
		}
	}
	b.ReportMetric((cpuTime()-c0)/1e9/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MB")
}

func BenchmarkConditional(b *testing.B) {
	benchConditional(b, grid.Point(), [2]geostat.StructureType{geostat.Spherical, geostat.Spherical})
}
func BenchmarkConditionalSphExp(b *testing.B) {
	benchConditional(b, grid.Point(), [2]geostat.StructureType{geostat.Spherical, geostat.Exponential})
}
func BenchmarkConditionalBlock2(b *testing.B) {
	benchConditional(b, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, [2]geostat.StructureType{geostat.Spherical, geostat.Spherical})
}

// cpuTime returns the process' user + system CPU time in nanoseconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS returns the process' peak resident set size in bytes (VmHWM).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
