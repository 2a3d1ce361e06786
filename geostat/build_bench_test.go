package geostat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkBuildDistribution builds the weighted table of 50,000 values.
func BenchmarkBuildDistribution(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := make([]float64, 50000)
	weights := make([]float64, len(values))
	for i := range values {
		values[i] = math.Exp(rng.NormFloat64())
		weights[i] = 0.5 + rng.Float64()
	}
	for b.Loop() {
		if _, err := BuildDistribution(values, weights, Tail{}, Tail{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNormalScoresAll transforms 1,000,000 values forward and back
// through a table of 50,000 nodes.
func BenchmarkNormalScoresAll(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	table := make([]float64, 50000)
	for i := range table {
		table[i] = math.Exp(rng.NormFloat64())
	}
	d, err := BuildDistribution(table, nil, Tail{Bound: 0, Power: 2}, Tail{Bound: 1000, Power: 0.5})
	if err != nil {
		b.Fatal(err)
	}
	values := make([]float64, 1000000)
	for i := range values {
		values[i] = math.Exp(rng.NormFloat64())
	}
	out := make([]float64, len(values))
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("forward/procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for b.Loop() {
				if err := d.NormalScoresAll(context.Background(), out, values, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("backward/procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for b.Loop() {
				if err := d.BackTransformsAll(context.Background(), out, values, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
