package bmwire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// discard is a Sink that keeps nothing.
type discard struct{}

func (discard) Start(int64) error  { return nil }
func (discard) Batch(*Batch) error { return nil }

// TestReadAllocationsDoNotGrowWithRows: matching a row allocates nothing
// (a 10,000,000-row update once made 10,000,000 allocations, the parent
// indices of every row escaping to the heap for an error message).
func TestReadAllocationsDoNotGrowWithRows(t *testing.T) {
	type row struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	g := regular{n: [3]uint32{50, 40, 10}}
	allocs := func(n int) float64 {
		rows := make([]row, 0, n)
		for p := range n {
			rows = append(rows, row{uint32(p % 50), uint32(p / 50 % 40), uint32(p / 2000), float64(p)})
		}
		r := writeParquet(t, rows)
		return testing.AllocsPerRun(3, func() {
			_, err := Read(r, r.Size(), cuSpec, g, discard{})
			require.NoError(t, err)
		})
	}
	small, large := allocs(2000), allocs(20000)
	require.Less(t, large-small, 2000.0, "allocations for 2,000 rows %v, for 20,000 rows %v", small, large)
}
