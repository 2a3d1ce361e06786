package declus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/internal/cputime"
	"github.com/geostat-engine/geostat/neighbor"
)

// The declustering case: 50,000 samples uniform in 1000 × 1000 ×
// 200 (fixed seed) declustered over the 1,000,000 cell centres of a
// 200 × 200 × 25 grid, 16 neighbours within ranges (300, 200, 50), rotation
// (30, 20, 10), the neighbor package's KNN benchmark case. Compare with
// neighbor's BenchmarkMean (cpu-ns/query against cpu-ns/location: CPU time
// is less sensitive than wall time to other load on the machine).
var benchCase struct {
	once    sync.Once
	coords  []float64
	values  []float64
	targets []float64
	params  neighbor.Params
}

func loadBench(b *testing.B) {
	benchCase.once.Do(func() {
		rng := rand.New(rand.NewPCG(2024, 3))
		n := 50000
		benchCase.coords = make([]float64, 3*n)
		benchCase.values = make([]float64, n)
		for i := 0; i < n; i++ {
			benchCase.coords[3*i] = rng.Float64() * 1000
			benchCase.coords[3*i+1] = rng.Float64() * 1000
			benchCase.coords[3*i+2] = rng.Float64() * 200
			benchCase.values[i] = rng.NormFloat64()
		}
		g, err := grid.New([3]float64{0, 0, 0}, [3]int{200, 200, 25}, [3]float64{5, 5, 8}, geostat.Rotation{})
		if err != nil {
			panic(err)
		}
		benchCase.targets = g.CellCentres(nil)
		benchCase.params = neighbor.Params{
			Ellipsoid:  geostat.Ellipsoid{Major: 300, SemiMajor: 200, Minor: 50, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}},
			MaxSamples: 16,
		}
	})
}

func BenchmarkInfluence(b *testing.B) {
	loadBench(b)
	ix, err := neighbor.NewIndex(benchCase.coords, nil, nil, benchCase.params)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"knn", "idw"} {
		for _, procs := range []int{1, runtime.NumCPU()} {
			b.Run(fmt.Sprintf("%s/procs=%d", mode, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				cpu := cputime.Process()
				for b.Loop() {
					var err error
					if mode == "knn" {
						_, err = KNN(context.Background(), ix, benchCase.targets, nil)
					} else {
						_, err = IDW(context.Background(), ix, benchCase.targets, 2, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				q := float64(b.N) * float64(len(benchCase.targets)/3)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/q, "ns/location")
				b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/q, "cpu-ns/location")
			})
		}
	}
}

// BenchmarkCell declusters the 50,000 samples with 11 cell sizes and 5
// origins each.
func BenchmarkCell(b *testing.B) {
	loadBench(b)
	p := CellParams{Sizes: SizeRange(20, 200, 10), AnisZ: 0.2, Offsets: 5}
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for b.Loop() {
				if _, err := Cell(context.Background(), benchCase.coords, benchCase.values, p, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
