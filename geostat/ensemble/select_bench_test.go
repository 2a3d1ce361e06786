package ensemble

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSelectRanks times the selection of the three quantile ranks of
// the bench workload (levels 0.1, 0.5, 0.9) in cells of 100 exponential
// values, the part of the location-wise statistics that costs most.
func BenchmarkSelectRanks(b *testing.B) {
	const cells, n = 4096, 100
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]float64, cells*n)
	for i := range src {
		src[i] = rng.ExpFloat64()
	}
	work := make([]float64, n)
	ranks := quantileRanks(nil, []float64{0.1, 0.5, 0.9}, n)
	b.ResetTimer()
	for b.Loop() {
		for c := range cells {
			copy(work, src[c*n:(c+1)*n])
			selectRanks(work, ranks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cells, "ns/cell")
}
