package synthetic

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// Box is an axis-aligned box in world coordinates (metres).
type Box struct {
	// Min and Max are the lowest and highest corners.
	Min [3]float64
	Max [3]float64
}

// Extent returns the box's side lengths.
func (b Box) Extent() [3]float64 {
	return [3]float64{b.Max[0] - b.Min[0], b.Max[1] - b.Min[1], b.Max[2] - b.Min[2]}
}

// Contains reports whether (x, y, z) lies in the closed box.
func (b Box) Contains(x, y, z float64) bool {
	return x >= b.Min[0] && x <= b.Max[0] && y >= b.Min[1] && y <= b.Max[1] && z >= b.Min[2] && z <= b.Max[2]
}

// Validate checks that the box is finite and has positive extent.
func (b Box) Validate() error {
	for a := 0; a < 3; a++ {
		if math.IsNaN(b.Min[a]) || math.IsInf(b.Min[a], 0) || math.IsNaN(b.Max[a]) || math.IsInf(b.Max[a], 0) {
			return fmt.Errorf("box: axis %d bounds (%v, %v) are not finite", a, b.Min[a], b.Max[a])
		}
		if !(b.Max[a] > b.Min[a]) {
			return fmt.Errorf("box: axis %d has no extent (%v, %v)", a, b.Min[a], b.Max[a])
		}
	}
	return nil
}

// Grid returns the unrotated regular grid of size cells that tiles the box
// exactly: origin at b.Min, cell size = extent / size.
func (b Box) Grid(size [3]int) (*grid.Grid, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	ext := b.Extent()
	var cell [3]float64
	for a := 0; a < 3; a++ {
		if size[a] < 1 {
			return nil, fmt.Errorf("cases: grid size[%d] = %d must be at least 1", a, size[a])
		}
		cell[a] = ext[a] / float64(size[a])
	}
	g, err := grid.New(b.Min, size, cell, geostat.Rotation{})
	if err != nil {
		return nil, fmt.Errorf("cases: grid over the box: %w", err)
	}
	return g, nil
}

// UniformPoints returns n points uniform in the box as flat xyz, from the
// seed's "uniform" stream.
func UniformPoints(seed uint64, b Box, n int) []float64 {
	r := stream(seed, purposeUniform, 0)
	ext := b.Extent()
	out := make([]float64, 3*n)
	for i := 0; i < n; i++ {
		for a := 0; a < 3; a++ {
			out[3*i+a] = b.Min[a] + ext[a]*r.Float64()
		}
	}
	return out
}
