package variogram

import (
	"math"

	"github.com/geostat-engine/geostat/grid"
)

// Lattice returns the experimental semivariogram of a field on a
// regular grid for the integer lag vector lag = (p, q, s) cells,
//
//	γ̂(h) = 1/(2N(h)) Σ (Y(x + h) − Y(x))²
//
// over the N(h) pairs of cells x, x + h that are both inside the grid and
// both hold a value (docs/math.md section 7.3; no mean is subtracted, so the
// estimator is unbiased for a stationary field). field has one value per
// cell of the full grid in x-fastest order, NaN where there is none (masked
// or missing cells). With no pair gamma is NaN.
func Lattice(field []float64, size [3]int, lag [3]int) (gamma float64, pairs int) {
	nx, ny, nz := size[0], size[1], size[2]
	if len(field) != nx*ny*nz {
		panic("variogram: Lattice: field length does not match the grid size")
	}
	p, q, s := lag[0], lag[1], lag[2]
	off := p + nx*(q+ny*s)
	i0, i1 := max(0, -p), min(nx, nx-p)
	j0, j1 := max(0, -q), min(ny, ny-q)
	k0, k1 := max(0, -s), min(nz, nz-s)
	sum := 0.0
	for k := k0; k < k1; k++ {
		for j := j0; j < j1; j++ {
			row := nx * (j + ny*k)
			a := field[row+i0 : row+i1]
			b := field[row+i0+off : row+i1+off]
			for i, x := range a {
				d := b[i] - x
				if d == d { // neither is NaN
					sum += d * d
					pairs++
				}
			}
		}
	}
	if pairs == 0 {
		return math.NaN(), 0
	}
	return sum / float64(2*pairs), pairs
}

// AxisLags returns the lattice lag vectors (in cells) along the world unit
// direction dir on grid g: for k = 1, 2, …, the integer vector nearest to
// k·u, u being dir in cell units scaled so that its largest component is 1
// (each step advances one cell along the dominant grid axis). It stops before
// a lag exceeds maxDist (world units) or reaches half the grid along an axis,
// and keeps at most maxLags lags, thinning by a constant stride when more
// would fit. The model must be evaluated at these actual lattice vectors,
// not at the nominal k·u.
func AxisLags(g *grid.Grid, dir [3]float64, maxDist float64, maxLags int) [][3]int {
	m := g.Matrix()
	t := m.Transpose()
	lx, ly, lz := t.Apply(dir[0], dir[1], dir[2])
	u := [3]float64{lx / g.CellSize[0], ly / g.CellSize[1], lz / g.CellSize[2]}
	big := math.Max(math.Abs(u[0]), math.Max(math.Abs(u[1]), math.Abs(u[2])))
	if big == 0 || maxLags < 1 {
		return nil
	}
	for a := range u {
		u[a] /= big
	}
	var all [][3]int
	for k := 1; ; k++ {
		var h [3]int
		inside := true
		for a := range h {
			h[a] = int(math.Round(float64(k) * u[a]))
			if abs(h[a]) > max(1, g.Size[a]/2) || abs(h[a]) >= g.Size[a] {
				inside = false
			}
		}
		if !inside || LagLength(g, h) > maxDist {
			break
		}
		all = append(all, h)
	}
	if len(all) <= maxLags {
		return all
	}
	stride := (len(all) + maxLags - 1) / maxLags
	var out [][3]int
	for i := stride - 1; i < len(all); i += stride {
		out = append(out, all[i])
	}
	return out
}

// LagVector returns the world vector of the lattice lag h on grid g.
func LagVector(g *grid.Grid, h [3]int) [3]float64 {
	var w [3]float64
	for a := range 3 {
		s := g.Step(a)
		for c := range 3 {
			w[c] += float64(h[a]) * s[c]
		}
	}
	return w
}

// LagLength returns the world length of the lattice lag h on grid g.
func LagLength(g *grid.Grid, h [3]int) float64 {
	w := LagVector(g, h)
	return math.Sqrt(w[0]*w[0] + w[1]*w[1] + w[2]*w[2])
}
