package ties_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
)

// benchData returns 10⁶ values on a 100×100×100 lattice (1 m cells), 30 %
// of them tied in groups of about 300 (1000 distinct tied values), the
// rest distinct.
func benchData() (values, coords []float64) {
	const side = 100
	n := side * side * side
	rng := rand.New(rand.NewPCG(1, 2))
	values = make([]float64, n)
	coords = make([]float64, 3*n)
	for i := range n {
		coords[3*i] = float64(i%side) + 0.5
		coords[3*i+1] = float64(i/side%side) + 0.5
		coords[3*i+2] = float64(i/(side*side)) + 0.5
		if rng.Float64() < 0.3 {
			values[i] = float64(rng.IntN(1000)) // tied
		} else {
			values[i] = rng.Float64() * 1000 // distinct with probability ≈ 1
		}
	}
	return values, coords
}

func benchmarkBreak(b *testing.B, p *neighbor.Params) {
	values, coords := benchData()
	if p == nil {
		coords = nil
	}
	out, err := ties.Break(context.Background(), values, coords, p, ties.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	s := slices.Clone(out)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(values) {
		b.Fatal("ties remain")
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ties.Break(context.Background(), values, coords, p, ties.Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBreakRandom: 10⁶ values, 30 % ties, no neighbourhood.
func BenchmarkBreakRandom(b *testing.B) { benchmarkBreak(b, nil) }

// BenchmarkBreakLocalMean: 10⁶ values on a 100³ lattice, 30 % ties, local
// means over the 8 nearest within 2.5 cells.
func BenchmarkBreakLocalMean(b *testing.B) {
	benchmarkBreak(b, &neighbor.Params{
		Ellipsoid:  geostat.Ellipsoid{Major: 2.5, SemiMajor: 2.5, Minor: 2.5},
		MaxSamples: 8,
	})
}
