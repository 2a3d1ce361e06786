package grid

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// Grid is a regular, possibly rotated, 3D grid.
type Grid struct {
	Origin   [3]float64
	Size     [3]int
	CellSize [3]float64
	Rotation geostat.Rotation

	r geostat.Matrix3 // local → world
}

// Bounds of the geometry New accepts, in world units (metres). They keep
// every coordinate, extent and cell count a grid derives (cell centres,
// bounding boxes, sub-point grids, sizes of the arrays that hold a value per
// cell) finite and representable, and far from float64 precision limits:
// the corners of an accepted grid lie within (1 + √3)·10⁹ of the world
// origin.
const (
	// MaxCoordinate bounds |origin| on every axis.
	MaxCoordinate = 1e9
	// MaxExtent bounds the extent size × cell size along every grid axis.
	MaxExtent = 1e9
	// MaxCellSize bounds every cell size; cell sizes lie in (0, MaxCellSize].
	MaxCellSize = 1e6
	// MaxCells bounds nx·ny·nz (about 1.4·10¹¹: an int on 64-bit systems
	// holds it 729 times over, the largest block discretisation).
	MaxCells = math.MaxInt32 * 64
)

// GeometryError is a grid geometry that New refuses. Member is the member
// of the geoscience object at fault: "origin", "size", "cell_size" or
// "rotation".
type GeometryError struct {
	Member string
	Err    error
}

// Error implements error.
func (e *GeometryError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *GeometryError) Unwrap() error { return e.Err }

func geometryError(member, format string, args ...any) error {
	return &GeometryError{Member: member, Err: fmt.Errorf(format, args...)}
}

// New validates the geometry and returns a grid: sizes ≥ 1, cell sizes in
// (0, MaxCellSize], |origin| ≤ MaxCoordinate, extents (size × cell size) at
// most MaxExtent, at most MaxCells cells and a valid rotation (finite angles
// within the rotation schema's ranges). Every error is a *GeometryError
// naming the member.
func New(origin [3]float64, size [3]int, cellSize [3]float64, rot geostat.Rotation) (*Grid, error) {
	axes := [3]string{"x", "y", "z"}
	n := 1
	for a := 0; a < 3; a++ {
		if math.IsNaN(origin[a]) || math.IsInf(origin[a], 0) {
			return nil, geometryError("origin", "origin[%d]: %v is not finite", a, origin[a])
		}
		if math.Abs(origin[a]) > MaxCoordinate {
			return nil, geometryError("origin", "origin[%d]: %v is beyond ±%g", a, origin[a], float64(MaxCoordinate))
		}
		if size[a] < 1 {
			return nil, geometryError("size", "size[%d]: n%s = %d must be at least 1", a, axes[a], size[a])
		}
		if math.IsNaN(cellSize[a]) || math.IsInf(cellSize[a], 0) || cellSize[a] <= 0 {
			return nil, geometryError("cell_size", "cell_size[%d]: %v must be a positive finite number", a, cellSize[a])
		}
		if cellSize[a] > MaxCellSize {
			return nil, geometryError("cell_size", "cell_size[%d]: %v is larger than %g", a, cellSize[a], float64(MaxCellSize))
		}
		if ext := float64(size[a]) * cellSize[a]; ext > MaxExtent {
			return nil, geometryError("cell_size", "size[%d] × cell_size[%d]: the extent %g along %s is larger than %g", a, a, ext, axes[a], float64(MaxExtent))
		}
		if n > MaxCells/size[a] {
			return nil, geometryError("size", "size: %v cells are more than %d", size, int64(MaxCells))
		}
		n *= size[a]
	}
	if err := rot.Validate(); err != nil {
		return nil, &GeometryError{Member: "rotation", Err: err}
	}
	return &Grid{Origin: origin, Size: size, CellSize: cellSize, Rotation: rot, r: rot.Matrix()}, nil
}

// NumCells returns nx·ny·nz.
func (g *Grid) NumCells() int { return g.Size[0] * g.Size[1] * g.Size[2] }

// Index returns the flat index i + nx·(j + ny·k). It does not check bounds.
func (g *Grid) Index(i, j, k int) int { return i + g.Size[0]*(j+g.Size[1]*k) }

// IJK returns the cell indices of a flat index.
func (g *Grid) IJK(index int) (i, j, k int) {
	nx, ny := g.Size[0], g.Size[1]
	i = index % nx
	j = (index / nx) % ny
	k = index / (nx * ny)
	return
}

// Contains reports whether (i, j, k) is a cell of the grid.
func (g *Grid) Contains(i, j, k int) bool {
	return i >= 0 && j >= 0 && k >= 0 && i < g.Size[0] && j < g.Size[1] && k < g.Size[2]
}

// Matrix returns the local-to-world rotation matrix of the grid axes.
func (g *Grid) Matrix() geostat.Matrix3 { return g.r }

// LocalToWorld maps a point in the grid's local frame (origin at the grid
// corner, axes along the grid) to world coordinates.
func (g *Grid) LocalToWorld(u, v, w float64) [3]float64 {
	x, y, z := g.r.Apply(u, v, w)
	return [3]float64{g.Origin[0] + x, g.Origin[1] + y, g.Origin[2] + z}
}

// WorldToLocal maps a world point into the grid's local frame.
func (g *Grid) WorldToLocal(p [3]float64) [3]float64 {
	rt := g.r.Transpose()
	u, v, w := rt.Apply(p[0]-g.Origin[0], p[1]-g.Origin[1], p[2]-g.Origin[2])
	return [3]float64{u, v, w}
}

// CellCentre returns the world coordinates of the centre of cell (i, j, k).
func (g *Grid) CellCentre(i, j, k int) [3]float64 {
	return g.LocalToWorld((float64(i)+0.5)*g.CellSize[0], (float64(j)+0.5)*g.CellSize[1], (float64(k)+0.5)*g.CellSize[2])
}

// CellCentres writes the world centres of all cells in flat-index order as
// flat xyz into dst (grown if too short) and returns it.
func (g *Grid) CellCentres(dst []float64) []float64 {
	n := g.NumCells()
	if cap(dst) < 3*n {
		dst = make([]float64, 3*n)
	}
	dst = dst[:3*n]
	c := 0
	for k := 0; k < g.Size[2]; k++ {
		for j := 0; j < g.Size[1]; j++ {
			for i := 0; i < g.Size[0]; i++ {
				p := g.CellCentre(i, j, k)
				dst[c], dst[c+1], dst[c+2] = p[0], p[1], p[2]
				c += 3
			}
		}
	}
	return dst
}

// Step returns the world displacement of one cell along grid axis a (0, 1,
// 2): the a-th column of the rotation scaled by the cell size.
func (g *Grid) Step(a int) [3]float64 {
	d := g.CellSize[a]
	return [3]float64{g.r[a] * d, g.r[3+a] * d, g.r[6+a] * d}
}

// BoundingBox returns the world-axis-aligned box of the grid's eight corners.
func (g *Grid) BoundingBox() (min, max [3]float64) {
	ext := [3]float64{float64(g.Size[0]) * g.CellSize[0], float64(g.Size[1]) * g.CellSize[1], float64(g.Size[2]) * g.CellSize[2]}
	for a := 0; a < 3; a++ {
		min[a], max[a] = math.Inf(1), math.Inf(-1)
	}
	for c := 0; c < 8; c++ {
		p := g.LocalToWorld(float64(c&1)*ext[0], float64(c>>1&1)*ext[1], float64(c>>2&1)*ext[2])
		for a := 0; a < 3; a++ {
			min[a] = math.Min(min[a], p[a])
			max[a] = math.Max(max[a], p[a])
		}
	}
	return min, max
}
