package bmwire

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

type benchRow struct {
	I  uint32  `parquet:"i"`
	J  uint32  `parquet:"j"`
	K  uint32  `parquet:"k"`
	Cu float64 `parquet:"cu"`
}

// BenchmarkReadParquet10M reads a 10,000,000-row file of i, j, k (uint32)
// and one Float64 column into a Collector; it reports MB/s of column data
// (20 bytes a row), the bytes allocated beyond the result buffers and the
// heap's peak growth.
func BenchmarkReadParquet10M(b *testing.B) {
	const n = 10_000_000
	g := regular{n: [3]uint32{1000, 100, 100}}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[benchRow](&buf)
	chunk := make([]benchRow, 0, 65536)
	for r := range n {
		chunk = append(chunk, benchRow{uint32(r % 1000), uint32(r / 1000 % 100), uint32(r / 100000), float64(r)})
		if len(chunk) == cap(chunk) || r == n-1 {
			if _, err := w.Write(chunk); err != nil {
				b.Fatal(err)
			}
			chunk = chunk[:0]
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	file := bytes.NewReader(buf.Bytes())
	b.SetBytes(n * 20)
	b.ResetTimer()
	for range b.N {
		c := NewCollector(cuSpec.Columns)
		var peak uint64
		done := make(chan struct{})
		sampled := make(chan struct{})
		go func() { // sample the heap while reading
			defer close(sampled)
			var ms runtime.MemStats
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		}()
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		sum, err := Read(file, file.Size(), cuSpec, g, c)
		close(done)
		<-sampled
		if err != nil {
			b.Fatal(err)
		}
		if sum.Rows != n || c.Values[0].Float[n-1] != float64(c.Rows[n-1]) {
			b.Fatalf("read %d rows, last %v at row %d", sum.Rows, c.Values[0].Float[n-1], c.Rows[n-1])
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		result := int64(n * 16) // row numbers and values
		// Everything the read allocated besides the result: a bound on
		// the memory it holds beyond the result, whatever the GC does.
		b.ReportMetric(float64(int64(after.TotalAlloc-before.TotalAlloc)-result)/(1<<20), "alloc-MiB-beyond-result")
		// The heap's peak over its level before the read, result and
		// uncollected garbage included (GOGC lets it reach twice the live
		// heap, the file included).
		b.ReportMetric(float64(int64(peak)-int64(before.HeapInuse))/(1<<20), "peak-heap-growth-MiB")
	}
}
