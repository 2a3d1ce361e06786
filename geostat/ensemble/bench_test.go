package ensemble

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
)

// benchOps is the location-wise workload of the bench command: summary,
// three quantiles, probability and mean above two cutoffs.
var benchOps = Operations{Summary: true, Quantiles: []float64{0.1, 0.5, 0.9},
	ProbabilityAbove: []float64{1, 3}, MeanAbove: []float64{1, 3}}

// benchEnsemble is cells × R lognormal-like values (no missing ones).
func benchEnsemble(cells, R int) [][]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	cols := make([][]float64, R)
	for r := range cols {
		cols[r] = make([]float64, cells)
		for i := range cols[r] {
			cols[r][i] = rng.ExpFloat64() * 2
		}
	}
	return cols
}

// BenchmarkLocationWise times one tile of 65536 cells through ProcessTile
// (transposition, summary, 3 quantiles, 2 × 2 cutoffs), after checking a
// spread of cells against the brute-force oracle.
func BenchmarkLocationWise(b *testing.B) {
	for _, R := range []int{20, 100} {
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("R=%d/workers=%d", R, workers), func(b *testing.B) {
				const cells = 1 << 16
				cols := benchEnsemble(cells, R)
				l, err := NewLocationWise(benchOps, cells, R)
				if err != nil {
					b.Fatal(err)
				}
				ctx := geostat.WithWorkers(context.Background(), workers)
				tile := Tile{Columns: cols}
				if err := ProcessTile(ctx, tile, l); err != nil {
					b.Fatal(err)
				}
				checkAgainstOracle(b, cols, l)
				b.SetBytes(int64(cells * R * 8))
				b.ResetTimer()
				for b.Loop() {
					if err := ProcessTile(ctx, tile, l); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cells, "ns/cell")
			})
		}
	}
}

// BenchmarkClassify times the loss classification of 65536 blocks into 3
// categories.
func BenchmarkClassify(b *testing.B) {
	const cells, R = 1 << 16, 100
	cols := benchEnsemble(cells, R)
	cl, err := NewClassifier(MinimiseLoss, testEconomics(), cells, R)
	if err != nil {
		b.Fatal(err)
	}
	ctx := geostat.WithWorkers(context.Background(), 1)
	if err := ProcessTile(ctx, Tile{Columns: cols}, cl); err != nil {
		b.Fatal(err)
	}
	z := make([]float64, R)
	for c := 0; c < cells; c += 997 {
		for r := range z {
			z[r] = cols[r][c]
		}
		if got, want := cl.Keys()[c], Classify(MinimiseLoss, testEconomics(), z); got != want {
			b.Fatalf("cell %d: key %d, Classify gives %d", c, got, want)
		}
	}
	b.SetBytes(int64(cells * R * 8))
	b.ResetTimer()
	for b.Loop() {
		if err := ProcessTile(ctx, Tile{Columns: cols}, cl); err != nil {
			b.Fatal(err)
		}
	}
}

func checkAgainstOracle(b *testing.B, cols [][]float64, l *LocationWise) {
	b.Helper()
	z := make([]float64, len(cols))
	st := l.Statistics()
	for c := 0; c < len(cols[0]); c += 997 {
		for r := range z {
			z[r] = cols[r][c]
		}
		o := bruteForce(z, benchOps)
		for k := range benchOps.Quantiles {
			if !approx(o.q[k], st.Quantiles[k][c], 1e-12) {
				b.Fatalf("cell %d quantile %d: %v, brute force %v", c, k, st.Quantiles[k][c], o.q[k])
			}
		}
		if !approx(o.variance, st.Variance[c], 1e-12) || !approx(o.m[1], st.MeanAbove[1][c], 1e-12) {
			b.Fatalf("cell %d: variance %v mean above %v, brute force %v %v", c, st.Variance[c], st.MeanAbove[1][c], o.variance, o.m[1])
		}
	}
}
