package objects_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/objects"
)

// An ensemble of 4 cells × 3 realisations stored as a Parquet blob (one
// column per realisation) is streamed through the location-wise statistics
// without being read whole.
func ExampleNewEnsembleReader() {
	reals := [][]float64{{1, 2, 3, 4}, {2, 4, 6, 8}, {3, 6, 9, 12}}
	data, _, err := objects.EncodeFloat64(reals, objects.EnsembleColumnNames("grade", 3), nil)
	if err != nil {
		panic(err)
	}
	spec := objects.Float64Spec("cell_attributes[0].values", 3, 4)
	er, err := objects.NewEnsembleReader(bytes.NewReader(data), int64(len(data)), spec, nil, 2)
	if err != nil {
		panic(err)
	}
	defer er.Close()
	st, err := ensemble.Compute(context.Background(), er, ensemble.Operations{Summary: true, ProbabilityAbove: []float64{5}})
	if err != nil {
		panic(err)
	}
	fmt.Println("tile:", er.MaxTile(), "cells")
	fmt.Println("mean:", st.Mean)
	fmt.Println("P(X > 5):", st.ProbabilityAbove[0])
	// Output:
	// tile: 2 cells
	// mean: [2 4 6 8]
	// P(X > 5): [0 0.3333333333333333 0.6666666666666666 0.6666666666666666]
}
