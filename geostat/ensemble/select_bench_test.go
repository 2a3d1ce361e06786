package ensemble

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkOrderStatistics times the placing of the order statistics of
// the bench workload (levels 0.1, 0.5, 0.9) in cells of 100 values, the part
// of the location-wise statistics that costs most: exponential values (the
// bench's), and zero-inflated ones (half the values 0, a grade below the
// detection limit: one bucket of many equal values).
func BenchmarkOrderStatistics(b *testing.B) {
	for _, c := range []struct {
		name string
		draw func(*rand.Rand) float64
	}{
		{"exponential", func(rng *rand.Rand) float64 { return rng.ExpFloat64() }},
		{"zero-inflated", func(rng *rand.Rand) float64 {
			if rng.IntN(2) == 0 {
				return 0
			}
			return rng.ExpFloat64()
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			const cells, n = 4096, 100
			rng := rand.New(rand.NewPCG(5, 6))
			src := make([]float64, cells*n)
			for i := range src {
				src[i] = c.draw(rng)
			}
			var s quantScratch
			pos := wantedPositions(nil, []float64{0.1, 0.5, 0.9}, n)
			lo, hi := make([]float64, cells), make([]float64, cells)
			for c := range cells {
				lo[c], hi[c] = firstExtremes(src[c*n : (c+1)*n])
			}
			b.ResetTimer()
			for b.Loop() {
				for c := range cells {
					orderStatistics(src[c*n:(c+1)*n], lo[c], hi[c], pos, &s)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cells, "ns/cell")
		})
	}
}
