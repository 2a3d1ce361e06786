package lwjob_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
)

// A compute worker computes the statistics of one tile (here cells 2 and 3
// of three realisations) from the tile's input alone: the values those
// cells get from the whole ensemble.
func ExampleStatistics() {
	cols := [][]float64{{1, 2, 3, 4}, {2, 4, 6, math.NaN()}, {3, 6, 9, 12}}
	tile := ensemble.Tile{Lo: 2, Columns: [][]float64{cols[0][2:], cols[1][2:], cols[2][2:]}}
	ops := ensemble.Operations{Summary: true}

	b, _ := lwjob.Statistics(context.Background(), ops, 3, 2, lwjob.EncodeTile(nil, tile))
	mean := func(cell int) float64 { // output 2 (mean) of the tile's cell
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*(2*2+cell):]))
	}
	fmt.Println("tile means:", mean(0), mean(1))

	lw, _ := ensemble.NewLocationWise(ops, 4, 3)
	_ = ensemble.Process(context.Background(), ensemble.NewColumnsSource(cols, 4), lw)
	fmt.Println("whole ensemble:", lw.Outputs()[2].Values[2:])
	// Output:
	// tile means: 6 8
	// whole ensemble: [6 8]
}
