package grid

import "fmt"

// MaxDiscretisation is the largest number of sub-points per axis.
const MaxDiscretisation = 9

// BlockDiscretisation is the number of sub-points of a block along each of
// the grid's axes (each 1..9). Sub-point (a, b, c) of a cell of size
// (dx, dy, dz) sits at the local offset (((a + ½)/nx − ½)·dx, …) from the
// cell centre, so the sub-points of all cells form a regular finer grid.
type BlockDiscretisation struct {
	NX int `json:"nx"`
	NY int `json:"ny"`
	NZ int `json:"nz"`
}

// Point returns the discretisation of a point support: one sub-point, the
// centre.
func Point() BlockDiscretisation { return BlockDiscretisation{1, 1, 1} }

// Validate checks that each count is in 1..9; the error names the field.
func (b BlockDiscretisation) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"nx", b.NX}, {"ny", b.NY}, {"nz", b.NZ}} {
		if f.v < 1 || f.v > MaxDiscretisation {
			return fmt.Errorf("block_discretization.%s: %d must be between 1 and %d", f.name, f.v, MaxDiscretisation)
		}
	}
	return nil
}

// Count returns nx·ny·nz, the number of sub-points of a block.
func (b BlockDiscretisation) Count() int { return b.NX * b.NY * b.NZ }

// LocalOffsets returns the sub-point offsets from the cell centre in the
// grid's local frame for cells of the given size, flat xyz with the x index
// fastest.
func (b BlockDiscretisation) LocalOffsets(cellSize [3]float64) []float64 {
	out := make([]float64, 0, 3*b.Count())
	for c := 0; c < b.NZ; c++ {
		for bb := 0; bb < b.NY; bb++ {
			for a := 0; a < b.NX; a++ {
				out = append(out,
					((float64(a)+0.5)/float64(b.NX)-0.5)*cellSize[0],
					((float64(bb)+0.5)/float64(b.NY)-0.5)*cellSize[1],
					((float64(c)+0.5)/float64(b.NZ)-0.5)*cellSize[2])
			}
		}
	}
	return out
}

// Offsets returns the world-frame offsets of the sub-points of a cell of g
// from its centre (LocalOffsets rotated by the grid's rotation), flat xyz.
func (b BlockDiscretisation) Offsets(g *Grid) []float64 {
	out := b.LocalOffsets(g.CellSize)
	r := g.Matrix()
	for i := 0; i < len(out); i += 3 {
		out[i], out[i+1], out[i+2] = r.Apply(out[i], out[i+1], out[i+2])
	}
	return out
}

// Nearest returns the index of the sub-point nearest the cell centre (the
// lowest index on ties), the "point" of a block.
func (b BlockDiscretisation) Nearest() int {
	best, bestD := 0, -1.0
	for c := 0; c < b.NZ; c++ {
		for bb := 0; bb < b.NY; bb++ {
			for a := 0; a < b.NX; a++ {
				dx := (float64(a)+0.5)/float64(b.NX) - 0.5
				dy := (float64(bb)+0.5)/float64(b.NY) - 0.5
				dz := (float64(c)+0.5)/float64(b.NZ) - 0.5
				d := dx*dx + dy*dy + dz*dz
				if bestD < 0 || d < bestD {
					best, bestD = a+b.NX*(bb+b.NY*c), d
				}
			}
		}
	}
	return best
}

// Fine returns the grid of all sub-points of g: the same origin and
// rotation, size (nx·NX, ny·NY, nz·NZ) and cell size divided accordingly. Its
// cell centres are the sub-points of g's cells.
func (b BlockDiscretisation) Fine(g *Grid) *Grid {
	f := *g
	f.Size = [3]int{g.Size[0] * b.NX, g.Size[1] * b.NY, g.Size[2] * b.NZ}
	f.CellSize = [3]float64{g.CellSize[0] / float64(b.NX), g.CellSize[1] / float64(b.NY), g.CellSize[2] / float64(b.NZ)}
	return &f
}
