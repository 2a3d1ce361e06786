package blockmodel_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// A regular 4 × 3 × 2 model of 10 × 20 × 5 blocks, rotated 90° clockwise
// about the vertical: the centroids of its first blocks in canonical order
// (i fastest), and the row of block (1, 2, 0).
func Example() {
	g, err := blockmodel.NewGeometry(
		blockmodel.XYZ{X: 1000, Y: 2000, Z: 300},
		[]blockmodel.RotationItem{{Axis: "z", Angle: 90}},
		blockmodel.RegularSize(blockmodel.Size3D{NX: 4, NY: 3, NZ: 2}, blockmodel.XYZ{X: 10, Y: 20, Z: 5}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("normalized_rotation:", g.NormalizedRotation())
	b := g.WholeBlocks()
	var batch blockmodel.SystemBatch
	if err := b.FillSystem(0, 3, &batch); err != nil {
		fmt.Println(err)
		return
	}
	for r := range batch.X {
		fmt.Printf("(%d, %d, %d) at (%g, %g, %g)\n", batch.I[r], batch.J[r], batch.K[r], batch.X[r], batch.Y[r], batch.Z[r])
	}
	row, _ := b.Locate(1, 2, 0, blockmodel.SubID{})
	fmt.Println("row of (1, 2, 0):", row, "centroid", b.Centroid(row))
	// Output:
	// normalized_rotation: [90 0 0]
	// (0, 0, 0) at (1010, 1995, 302.5)
	// (1, 0, 0) at (1010, 1985, 302.5)
	// (2, 0, 0) at (1010, 1975, 302.5)
	// row of (1, 2, 0): 9 centroid [1050 1985 302.5]
}
