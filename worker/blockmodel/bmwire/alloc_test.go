package bmwire

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// countSink counts rows without keeping them.
type countSink struct{ rows int64 }

func (s *countSink) Start(int64) error    { return nil }
func (s *countSink) Batch(b *Batch) error { s.rows += int64(len(b.Rows)); return nil }

// TestReadDoesNotAllocatePerRow reads a 100,000-row file into a sink that
// keeps nothing: the allocations are per page and batch, not per row (a
// row's indices once escaped to the heap: one allocation a row, a fifth
// of the time of an update of a 10,000,000-block model).
func TestReadDoesNotAllocatePerRow(t *testing.T) {
	const n = 100_000
	g := regular{n: [3]uint32{100, 100, 10}}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[benchRow](&buf)
	rows := make([]benchRow, n)
	for r := range rows {
		rows[r] = benchRow{uint32(r % 100), uint32(r / 100 % 100), uint32(r / 10000), float64(r)}
	}
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	file := bytes.NewReader(buf.Bytes())
	allocs := testing.AllocsPerRun(2, func() {
		s := &countSink{}
		sum, err := Read(file, file.Size(), cuSpec, g, s)
		require.NoError(t, err)
		require.Equal(t, int64(n), sum.Rows)
		require.Equal(t, int64(n), s.rows)
	})
	require.Less(t, allocs, float64(n/10), "allocations of a read of %d rows", n)
}
