package tbsim

import (
	"math"

	"github.com/geostat-engine/geostat/kriging"
)

// tileWorker is the per-goroutine state of the tile computation.
type tileWorker struct {
	s      *sim
	ws     *workspace
	solver *kriging.Solver
	rows   []gridRow // fine rows of the tile
	rowOff []int     // per coarse row of the tile: offset of its first fine row
	u      []float64 // unconditional values: realisation r at u[r·nFine + node]
	nFine  int
	y      []float64 // conditioned Gaussian values of one sub-point, per realisation
	z      []float64 // their back-transforms
	bsum   []float64 // per realisation: sums over sub-points (data units)
	gsum   []float64 // per realisation: sums over sub-points (Gaussian)

	simulated, unconditioned, tiles int
}

func (s *sim) newTileWorker() *tileWorker {
	tw := &tileWorker{s: s, ws: newWorkspace(),
		y: make([]float64, s.R), z: make([]float64, s.R), bsum: make([]float64, s.R), gsum: make([]float64, s.R)}
	if s.kr != nil {
		tw.solver = s.kr.NewSolver()
	}
	return tw
}

// grow returns b with length n, reallocating when needed.
func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// compute simulates the cells of one tile. When tw.ws.done is closed it
// returns early with an incomplete tile, which the caller discards.
func (tw *tileWorker) compute(t tileSpan, buf *tileBuffers) Tile {
	s := tw.s
	R := s.R
	d := s.p.Discretisation
	bx, by, bz := d.NX, d.NY, d.NZ
	m := t.hi - t.lo
	tile := Tile{Lo: t.lo, Hi: t.hi, Realisations: R}
	buf.block = grow(buf.block, m*R)
	tile.Block = buf.block
	if s.p.SaveGaussian {
		buf.blockG, buf.point, buf.pointG = grow(buf.blockG, m*R), grow(buf.point, m*R), grow(buf.pointG, m*R)
		tile.BlockGaussian, tile.Point, tile.PointGaussian = buf.blockG, buf.point, buf.pointG
	}
	for _, o := range [][]float64{tile.Block, tile.BlockGaussian, tile.Point, tile.PointGaussian} {
		for i := range o {
			o[i] = math.NaN()
		}
	}
	tw.tiles++

	// Fine rows of the wanted spans: coarse row q holds by·bz fine rows of
	// span (ci1 − ci0)·bx nodes, fine row (b, c) at rowOff[q] + (c·by + b)·span.
	tw.rows = tw.rows[:0]
	tw.rowOff = tw.rowOff[:0]
	off := 0
	for q := t.r0; q < t.r1; q++ {
		ri := &s.rows[q]
		tw.rowOff = append(tw.rowOff, off)
		span := (ri.ci1 - ri.ci0) * bx
		if span == 0 {
			continue
		}
		for c := 0; c < bz; c++ {
			for b := 0; b < by; b++ {
				tw.rows = append(tw.rows, gridRow{j: ri.j*by + b, k: ri.k*bz + c, i0: ri.ci0 * bx, i1: ri.ci1 * bx, off: off})
				off += span
			}
		}
	}
	tw.nFine = off
	if off == 0 {
		return tile
	}
	tw.u = grow(tw.u, R*off)
	clear(tw.u)
	for r := 0; r < R && !tw.ws.stopped(); r++ {
		s.field.addRows(s.r0+r, &s.fine, tw.rows, tw.u[r*off:(r+1)*off], tw.ws)
	}

	var active []int
	if s.masked != nil {
		active = s.masked.ActiveCells()
	}
	nx := s.g.Size[0]
	for q := t.r0; q < t.r1 && !tw.ws.stopped(); q++ {
		ri := &s.rows[q]
		span := (ri.ci1 - ri.ci0) * bx
		base := nx * (ri.j + s.g.Size[1]*ri.k)
		for c := ri.lo; c < ri.hi; c++ {
			if !s.wanted(c) {
				continue
			}
			i := c - base
			if active != nil {
				i = active[c] - base
			}
			// Node of sub-point (a, b, cz) of this cell in u.
			cellOff := tw.rowOff[q-t.r0] + (i-ri.ci0)*bx
			tw.cell(i, ri.j, ri.k, c-t.lo, m, cellOff, span, &tile)
		}
	}
	return tile
}

// cell conditions, back-transforms and averages the sub-points of one cell
// and writes its outputs at tile position pos.
func (tw *tileWorker) cell(i, j, k, pos, m, cellOff, span int, tile *Tile) {
	s := tw.s
	R := s.R
	d := s.p.Discretisation
	bx, by := d.NX, d.NY
	tw.simulated++
	var sol *kriging.Solution
	if tw.solver != nil {
		cc := s.g.CellCentre(i, j, k)
		var ok bool
		sol, ok = tw.solver.Solve(cc[0], cc[1], cc[2])
		if !ok || len(sol.Neighbors) == 0 {
			sol = nil
		}
	}
	if sol == nil {
		tw.unconditioned++
	}
	clear(tw.bsum)
	clear(tw.gsum)
	y := tw.y
	nsub := s.nsub
	for sp := 0; sp < nsub; sp++ {
		a, b, cz := sp%bx, (sp/bx)%by, sp/(bx*by)
		node := cellOff + (cz*by+b)*span + a
		for r := 0; r < R; r++ {
			y[r] = tw.u[r*tw.nFine+node]
		}
		if sol != nil {
			n := len(sol.Neighbors)
			applyWeights(y, sol.SubWeights[sp*n:(sp+1)*n], sol.Neighbors, s.res)
		}
		zs := y
		if s.bt != nil {
			s.bt.transform(tw.z, y)
			zs = tw.z
		}
		for r, v := range y {
			tw.gsum[r] += v
			z := zs[r]
			tw.bsum[r] += z
			if sp == s.nearest && tile.Point != nil {
				tile.Point[pos+r*m] = z
				tile.PointGaussian[pos+r*m] = v
			}
		}
	}
	inv := 1 / float64(nsub)
	for r := 0; r < R; r++ {
		tile.Block[pos+r*m] = tw.bsum[r] * inv
		if tile.BlockGaussian != nil {
			tile.BlockGaussian[pos+r*m] = tw.gsum[r] * inv
		}
	}
}

// applyWeights adds Σ_j w_j·res_{nb_j} to y for every realisation r:
// y[r] += w[j]·res[nb[j]·R + r] for j in order, R = len(y). Four, then two
// realisations at a time are kept in registers over the neighbours; every
// y[r] still sums its terms in neighbour order.
func applyWeights(y, w []float64, nb []int32, res []float64) {
	R := len(y)
	w = w[:len(nb)]
	r := 0
	for ; r+4 <= R; r += 4 {
		y4 := (*[4]float64)(y[r : r+4])
		y0, y1, y2, y3 := y4[0], y4[1], y4[2], y4[3]
		for j, i := range nb {
			o := int(i)*R + r
			rr := (*[4]float64)(res[o : o+4])
			wj := w[j]
			y0 += wj * rr[0]
			y1 += wj * rr[1]
			y2 += wj * rr[2]
			y3 += wj * rr[3]
		}
		y4[0], y4[1], y4[2], y4[3] = y0, y1, y2, y3
	}
	for ; r+2 <= R; r += 2 {
		y0, y1 := y[r], y[r+1]
		for j, i := range nb {
			o := int(i)*R + r
			rr := (*[2]float64)(res[o : o+2])
			wj := w[j]
			y0 += wj * rr[0]
			y1 += wj * rr[1]
		}
		y[r], y[r+1] = y0, y1
	}
	for ; r < R; r++ {
		y0 := y[r]
		for j, i := range nb {
			y0 += w[j] * res[int(i)*R+r]
		}
		y[r] = y0
	}
}
