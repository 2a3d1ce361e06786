package synthetic

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/grid"
)

// OrebodyMask returns a mask over the cells of g (flat order, true = active)
// shaped like an orebody: cells inside an ellipsoid centred in the grid's
// bounding box, elongated along the model's 30° azimuth (half-axes 45 %, 30 %
// and 40 % of the box's x, y and z extents) and below a gently undulating
// erosion surface. The undulation's phases come from the seed.
func OrebodyMask(seed uint64, g *grid.Grid) []bool {
	lo, hi := g.BoundingBox()
	var c, half [3]float64
	for a := 0; a < 3; a++ {
		c[a] = 0.5 * (lo[a] + hi[a])
		half[a] = 0.5 * (hi[a] - lo[a])
	}
	ax, ay, az := 0.9*half[0], 0.6*half[1], 0.8*half[2]
	r := stream(seed, purposeMask, 0)
	p1, p2 := 2*math.Pi*r.Float64(), 2*math.Pi*r.Float64()
	sinA, cosA := math.Sincos(30 * math.Pi / 180)
	mask := make([]bool, g.NumCells())
	nx, ny, nz := g.Size[0], g.Size[1], g.Size[2]
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			for i := 0; i < nx; i++ {
				p := g.CellCentre(i, j, k)
				dx, dy, dz := p[0]-c[0], p[1]-c[1], p[2]-c[2]
				// Local axes: u along azimuth 30° (clockwise from north), v across.
				u := dx*sinA + dy*cosA
				v := dx*cosA - dy*sinA
				inside := (u/ax)*(u/ax)+(v/ay)*(v/ay)+(dz/az)*(dz/az) <= 1
				top := hi[2] - half[2]*(0.3+0.15*math.Sin(2*math.Pi*dx/(hi[0]-lo[0])+p1)*math.Cos(2*math.Pi*dy/(hi[1]-lo[1])+p2))
				mask[g.Index(i, j, k)] = inside && p[2] <= top
			}
		}
	}
	return mask
}

// MaskedGrid returns g masked by OrebodyMask.
func MaskedGrid(seed uint64, g *grid.Grid) (*grid.Masked, error) {
	m, err := grid.NewMasked(g, OrebodyMask(seed, g))
	if err != nil {
		return nil, fmt.Errorf("cases: masked grid: %w", err)
	}
	return m, nil
}
