package neighbor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/internal/cputime"
)

// The benchmark case: 50,000 sources uniform in 1000 × 1000 × 200
// (fixed seed), the 1,000,000 cell centres of a 200 × 200 × 25 grid over the
// same box, k = 16, ranges (300, 200, 50), rotation (30, 20, 10).
var benchData struct {
	once    sync.Once
	coords  []float64
	values  []float64
	targets []float64
	params  Params
}

func loadBench(b *testing.B) {
	benchData.once.Do(func() {
		rng := rand.New(rand.NewPCG(2024, 3))
		benchData.coords = uniformCloud(rng, 50000, [3]float64{1000, 1000, 200})
		benchData.values = make([]float64, 50000)
		for i := range benchData.values {
			benchData.values[i] = rng.NormFloat64()
		}
		g, err := grid.New([3]float64{0, 0, 0}, [3]int{200, 200, 25}, [3]float64{5, 5, 8}, geostat.Rotation{})
		if err != nil {
			panic(err)
		}
		benchData.targets = g.CellCentres(nil)
		benchData.params = Params{
			Ellipsoid:  ellipsoid(300, 200, 50, geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}),
			MaxSamples: 16,
		}
	})
}

// benchIndex builds the index and checks a sample of targets against brute
// force before anything is timed.
func benchIndex(b *testing.B) *Index {
	loadBench(b)
	ix, err := NewIndex(benchData.coords, nil, nil, benchData.params)
	if err != nil {
		b.Fatal(err)
	}
	o := newOracle(benchData.coords, nil, nil, benchData.params, ix.Origin())
	s := ix.NewSearcher()
	for q := 0; q < len(benchData.targets)/3; q += 9973 {
		t := benchData.targets[3*q : 3*q+3]
		want, _ := o.search(t[0], t[1], t[2])
		got, _ := s.Search(t[0], t[1], t[2])
		if fmt.Sprint(want) != fmt.Sprint(got) || len(got) != 16 {
			b.Fatalf("target %d: got %v, want %v", q, got, want)
		}
	}
	return ix
}

func BenchmarkNewIndex(b *testing.B) {
	loadBench(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewIndex(benchData.coords, nil, nil, benchData.params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchAll times the 1,000,000 queries of the case, on one
// core and on all of them.
func BenchmarkSearchAll(b *testing.B) {
	ix := benchIndex(b)
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := ix.SearchAll(context.Background(), benchData.targets, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportPerQuery(b, cputime.Process()-cpu, len(benchData.targets)/3)
		})
	}
}

// BenchmarkMean times the KNN estimate of the case.
func BenchmarkMean(b *testing.B) {
	ix := benchIndex(b)
	out := make([]float64, len(benchData.targets)/3)
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			cpu := cputime.Process()
			for b.Loop() {
				if err := ix.Mean(context.Background(), benchData.values, benchData.targets, out, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportPerQuery(b, cputime.Process()-cpu, len(benchData.targets)/3)
		})
	}
}

// BenchmarkIDW times the inverse-distance estimate (power 2 and a general
// power) of the case, to compare with BenchmarkMean.
func BenchmarkIDW(b *testing.B) {
	ix := benchIndex(b)
	out := make([]float64, len(benchData.targets)/3)
	for _, power := range []float64{2, 2.5} {
		for _, procs := range []int{1, runtime.NumCPU()} {
			b.Run(fmt.Sprintf("power=%g/procs=%d", power, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				cpu := cputime.Process()
				for b.Loop() {
					if err := ix.IDW(context.Background(), benchData.values, power, benchData.targets, out, nil); err != nil {
						b.Fatal(err)
					}
				}
				reportPerQuery(b, cputime.Process()-cpu, len(benchData.targets)/3)
			})
		}
	}
}

// BenchmarkSearch times single queries walking the grid targets in order
// (each query seeded by the previous one, as in a batch) and checks that
// they do not allocate.
func BenchmarkSearch(b *testing.B) {
	ix := benchIndex(b)
	for _, seed := range []bool{true, false} {
		b.Run(fmt.Sprintf("seed=%v", seed), func(b *testing.B) {
			s := ix.NewSearcher()
			s.seed = seed
			benchQueries(b, s)
		})
	}
}

// BenchmarkSearchConstrained times single queries with octant and hole
// quotas (holes: 1,000 random ids).
func BenchmarkSearchConstrained(b *testing.B) {
	loadBench(b)
	holes := make([]int32, 50000)
	for i := range holes {
		holes[i] = int32(i % 1000)
	}
	p := benchData.params
	p.MaxPerOctant, p.MaxPerHole = 2, 2
	ix, err := NewIndex(benchData.coords, nil, holes, p)
	if err != nil {
		b.Fatal(err)
	}
	benchQueries(b, ix.NewSearcher())
}

// benchQueries times single queries of s walking the grid targets in order,
// reporting allocations and wall and CPU time per query.
func benchQueries(b *testing.B, s *Searcher) {
	t := benchData.targets
	q := 0
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		s.Search(t[q], t[q+1], t[q+2])
		q += 3
		if q == len(t) {
			q = 0
		}
	}
	reportPerQuery(b, cputime.Process()-cpu, 1)
}

// reportPerQuery reports wall and process CPU nanoseconds per query for b.N
// operations of perOp queries each. On a loaded machine cpu-ns/query is the
// steadier figure of the single-core cost.
func reportPerQuery(b *testing.B, cpu time.Duration, perOp int) {
	q := float64(b.N) * float64(perOp)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/q, "ns/query")
	b.ReportMetric(float64(cpu.Nanoseconds())/q, "cpu-ns/query")
}
