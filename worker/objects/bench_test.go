package objects_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
)

// BenchmarkTableWriter streams an ensemble (width realisations of n cells)
// into a zstd Parquet file in tiles of 64k rows, checking its own output.
func BenchmarkTableWriter(b *testing.B) {
	for _, c := range []struct{ n, width int }{{1 << 20, 1}, {1 << 18, 16}} {
		b.Run(fmt.Sprintf("rows=%d/width=%d", c.n, c.width), func(b *testing.B) {
			cols := make([][]float64, c.width)
			for r := range cols {
				cols[r] = make([]float64, c.n)
				for i := range cols[r] {
					cols[r][i] = float64(i%1000)*0.001 + float64(r)
				}
			}
			const tile = 1 << 16
			b.SetBytes(int64(8 * c.n * c.width))
			b.ResetTimer()
			for b.Loop() {
				tw, err := objects.NewTableWriter(io.Discard, objects.Float64Types(c.width), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				block := make([][]float64, c.width)
				for from := 0; from < c.n; from += tile {
					for r := range block {
						block[r] = cols[r][from:min(c.n, from+tile)]
					}
					if err := tw.WriteFloat64Columns(block); err != nil {
						b.Fatal(err)
					}
				}
				blob, err := tw.Close()
				if err != nil || blob.Rows != int64(c.n) {
					b.Fatal(err, blob.Rows)
				}
			}
		})
	}
}

// BenchmarkReadTable decodes a 1M-row float64 column.
func BenchmarkReadTable(b *testing.B) {
	const n = 1 << 20
	col := make([]float64, n)
	for i := range col {
		col[i] = float64(i%1000) * 0.001
	}
	data, _, err := objects.EncodeFloat64([][]float64{col}, []string{"v"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	spec := objects.Float64Spec("v", 1, n)
	b.SetBytes(8 * n)
	b.ResetTimer()
	for b.Loop() {
		tab, err := objects.ReadTable(bytes.NewReader(data), int64(len(data)), spec)
		if err != nil || tab.Columns[0].Float64[n-1] != col[n-1] {
			b.Fatal(err)
		}
	}
}
