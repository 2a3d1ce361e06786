package bmstore

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// benchRows is 10,000,000 unless BMSTORE_BENCH_ROWS says otherwise (100,000
// with -short).
func benchRows(b *testing.B) int64 {
	if v, err := strconv.ParseInt(os.Getenv("BMSTORE_BENCH_ROWS"), 10, 64); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 100_000
	}
	return 10_000_000
}

// BenchmarkAddFloat64Column commits a new blockmodel.Float64 column to an
// N-row model from batches of 100,000 rows, then queries it to a Parquet
// file, for three kinds of values (compression is most of the time and
// depends on them): "sequence", r·0.37 (very compressible: zstd finds long
// matches, slowly); "assays", lognormal rounded to three decimals with 2 %
// nulls (a few thousand distinct values: compressible); "estimates",
// full-precision normal values (incompressible, as interpolated grades are).
// It reports MB/s of column data of the add and of the query and the heap's
// peak above its level before each.
func BenchmarkAddFloat64Column(b *testing.B) {
	b.Run("sequence", func(b *testing.B) {
		benchAddFloat64(b, func(_ *rand.Rand, r int64) float64 { return float64(r) * 0.37 })
	})
	b.Run("assays", func(b *testing.B) {
		benchAddFloat64(b, func(rng *rand.Rand, _ int64) float64 {
			if rng.IntN(50) == 0 {
				return math.NaN()
			}
			return math.Round(math.Exp(0.8*rng.NormFloat64())*1000) / 1000
		})
	})
	b.Run("estimates", func(b *testing.B) {
		benchAddFloat64(b, func(rng *rand.Rand, _ int64) float64 { return 1.5 + 0.4*rng.NormFloat64() })
	})
}

func benchAddFloat64(b *testing.B, value func(rng *rand.Rand, r int64) float64) {
	n := benchRows(b)
	// Values come from a pool made before the timing (generating them
	// costs more than storing them); rows repeat it every 2^20 rows, far
	// beyond what a compressed page can refer to.
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([]float64, 1<<20)
	for r := range pool {
		pool[r] = value(rng, int64(r))
	}
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tx, err := s.Create(Model{ID: "m"}, n)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(Meta{}); err != nil {
		b.Fatal(err)
	}
	batch := Column{Type: blockmodel.Float64, Floats: make([]float64, batchRows)}
	for b.Loop() {
		var ver *Version
		addStart := nowSeconds()
		var asecs float64
		addPeak := harness.HeapPeak(func() {
			tx, err := s.Begin("m")
			if err != nil {
				b.Fatal(err)
			}
			w, err := tx.AddColumn(ColumnMeta{Title: NewUUID()[:8], DataType: blockmodel.Float64})
			if err != nil {
				b.Fatal(err)
			}
			for lo := int64(0); lo < n; lo += batchRows {
				k := min(n-lo, batchRows)
				for r := range k {
					batch.Floats[r] = pool[(lo+r)&(1<<20-1)]
				}
				if err := w.Write(Column{Type: blockmodel.Float64, Floats: batch.Floats[:k]}); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			if ver, err = tx.Commit(Meta{}); err != nil {
				b.Fatal(err)
			}
			asecs = nowSeconds() - addStart
		})
		col := ver.Columns[len(ver.Columns)-1]
		f, err := os.CreateTemp(b.TempDir(), "query-*.parquet")
		if err != nil {
			b.Fatal(err)
		}
		var qsecs float64
		qPeak := harness.HeapPeak(func() {
			start := nowSeconds()
			sc, err := s.Scan("m", ver.VersionID, []string{col.ColID}, 0, n, 0)
			if err != nil {
				b.Fatal(err)
			}
			q, err := NewQueryWriter(f, []string{col.Title}, []DataType{blockmodel.Float64}, QueryOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for {
				cols, err := sc.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := q.Write(cols); err != nil {
					b.Fatal(err)
				}
			}
			if err := q.Close(); err != nil {
				b.Fatal(err)
			}
			sc.Close()
			qsecs = nowSeconds() - start
		})
		f.Close()
		b.ReportMetric(float64(addPeak)/(1<<20), "add-peak-MiB")
		b.ReportMetric(float64(qPeak)/(1<<20), "query-peak-MiB")
		b.ReportMetric(float64(n*8)/1e6/qsecs, "query-MB/s")
		b.ReportMetric(float64(n*8)/1e6/asecs, "add-MB/s")
	}
	b.SetBytes(n * 8)
}

func nowSeconds() float64 { return float64(timeNow().UnixNano()) / 1e9 }

var timeNow = time.Now
