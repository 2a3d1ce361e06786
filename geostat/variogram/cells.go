package variogram

import "math"

// maxCellsPerPoint bounds the number of cells of the pair index relative to the
// number of points.
const maxCellsPerPoint = 2

// cellGrid is a flat grid of cubic cells over the points' bounding box, with
// the points sorted by cell (x fastest) and stored as structure of arrays.
type cellGrid struct {
	n       [3]int
	ncell   int
	start   []int32 // points of cell c are [start[c], start[c+1])
	x, y, z []float64
	v, w    []float64
	// offsets are the forward neighbour cells (linear offset > 0) whose
	// nearest points may be within reach.
	offsets [][3]int
}

// newCellGrid sorts the points (and their values and weights when vs is not
// nil) into cells about reach/4 wide (wider when
// that would make more than maxCellsPerPoint cells per point).
func newCellGrid(xs, ys, zs, vs, ws []float64, reach float64) *cellGrid {
	n := len(xs)
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := 0; i < n; i++ {
		p := [3]float64{xs[i], ys[i], zs[i]}
		for a := range 3 {
			lo[a] = math.Min(lo[a], p[a])
			hi[a] = math.Max(hi[a], p[a])
		}
	}
	size := reach / 4
	count := func(s float64) (c [3]int, total float64) {
		total = 1
		for a := range 3 {
			c[a] = max(1, int(math.Floor((hi[a]-lo[a])/s))+1)
			total *= float64(c[a])
		}
		return c, total
	}
	cn, total := count(size)
	for total > float64(maxCellsPerPoint*n+8) {
		size *= 1.5
		cn, total = count(size)
	}
	g := &cellGrid{n: cn, ncell: cn[0] * cn[1] * cn[2]}
	cellOf := make([]int32, n)
	g.start = make([]int32, g.ncell+1)
	for i := 0; i < n; i++ {
		p := [3]float64{xs[i], ys[i], zs[i]}
		var c [3]int
		for a := range 3 {
			c[a] = min(int((p[a]-lo[a])/size), cn[a]-1)
		}
		id := c[0] + cn[0]*(c[1]+cn[1]*c[2])
		cellOf[i] = int32(id)
		g.start[id+1]++
	}
	for c := 0; c < g.ncell; c++ {
		g.start[c+1] += g.start[c]
	}
	fill := make([]int32, g.ncell)
	copy(fill, g.start[:g.ncell])
	g.x, g.y, g.z = make([]float64, n), make([]float64, n), make([]float64, n)
	if vs != nil {
		g.v, g.w = make([]float64, n), make([]float64, n)
	}
	for i := 0; i < n; i++ { // stable: points keep their input order in a cell
		c := cellOf[i]
		k := fill[c]
		fill[c]++
		g.x[k], g.y[k], g.z[k] = xs[i], ys[i], zs[i]
		if vs != nil {
			g.v[k], g.w[k] = vs[i], ws[i]
		}
	}
	// Forward offsets within reach: a cell offset o can hold a pair closer
	// than reach only if Σ (max(|o_a| − 1, 0)·size)² ≤ reach².
	m := [3]int{}
	for a := range 3 {
		m[a] = min(int(math.Ceil(reach/size)), cn[a]-1)
	}
	for oz := -m[2]; oz <= m[2]; oz++ {
		for oy := -m[1]; oy <= m[1]; oy++ {
			for ox := -m[0]; ox <= m[0]; ox++ {
				if oz < 0 || (oz == 0 && (oy < 0 || (oy == 0 && ox <= 0))) {
					continue // backward or the cell itself
				}
				d2 := 0.0
				for _, o := range [3]int{ox, oy, oz} {
					g := math.Max(float64(abs(o)-1), 0) * size
					d2 += g * g
				}
				if d2 <= reach*reach*(1+1e-12) {
					g.offsets = append(g.offsets, [3]int{ox, oy, oz})
				}
			}
		}
	}
	return g
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
