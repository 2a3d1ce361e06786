package variogram

import (
	"math"
	"slices"
)

// cylinderPass visits, for one direction, the pairs whose separation lies
// within r of the direction's line and whose length is at most the largest
// lag distance: the points are projected on the plane across the line and
// sorted into square cells of side r there, and by their coordinate t along
// the line inside a cell. A pair within r of the line is in the same or a
// neighbouring cell, and its |Δt| ≤ |h|, so each point is paired with the
// points of the 3 × 3 cells around it inside a window of t; every candidate
// then gets the exact test of the direction.
func cylinderPass(xs, ys, zs, vs, ws []float64, t *dirTest, di int, r float64, lags *lagSet, nb int) pass {
	n := len(xs)
	u := [3]float64{t.ux * t.ch, t.uy * t.ch, t.cz}
	// e1, e2 complete u to an orthonormal frame.
	e1 := cross(u, [3]float64{0, 0, 1})
	if l := math.Sqrt(dot(e1, e1)); l > 1e-6 {
		e1 = [3]float64{e1[0] / l, e1[1] / l, e1[2] / l}
	} else {
		e1 = [3]float64{1, 0, 0}
	}
	e2 := cross(u, e1)
	o := [3]float64{xs[0], ys[0], zs[0]}
	ts, ps, qs := make([]float64, n), make([]float64, n), make([]float64, n)
	ext := 0.0
	pmin, pmax, qmin, qmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		d := [3]float64{xs[i] - o[0], ys[i] - o[1], zs[i] - o[2]}
		ts[i], ps[i], qs[i] = dot(d, u), dot(d, e1), dot(d, e2)
		pmin, pmax = math.Min(pmin, ps[i]), math.Max(pmax, ps[i])
		qmin, qmax = math.Min(qmin, qs[i]), math.Max(qmax, qs[i])
		ext = math.Max(ext, math.Abs(d[0])+math.Abs(d[1])+math.Abs(d[2]))
	}
	// Projections are rounded: widen the cells and the window a little.
	margin := 1e-9 * (ext + r + lags.maxDist)
	size := r + margin
	var np, nq int
	for {
		np = int((pmax-pmin)/size) + 1
		nq = int((qmax-qmin)/size) + 1
		if float64(np)*float64(nq) <= float64(2*n+16) {
			break
		}
		size *= 1.5
	}
	ncell := np * nq
	cell := make([]int32, n)
	start := make([]int32, ncell+1)
	for i := 0; i < n; i++ {
		ip := min(int((ps[i]-pmin)/size), np-1)
		iq := min(int((qs[i]-qmin)/size), nq-1)
		cell[i] = int32(ip + np*iq)
		start[cell[i]+1]++
	}
	for c := 0; c < ncell; c++ {
		start[c+1] += start[c]
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if cell[a] != cell[b] {
			return int(cell[a]) - int(cell[b])
		}
		switch {
		case ts[a] < ts[b]:
			return -1
		case ts[a] > ts[b]:
			return 1
		}
		return 0
	})
	w := &pairWorker{x: make([]float64, n), y: make([]float64, n), z: make([]float64, n),
		v: make([]float64, n), w: make([]float64, n), tests: []dirTest{*t}, dirs: []int{0}, lags: lags, nb: nb}
	tt := make([]float64, n)
	for k, i := range order {
		w.x[k], w.y[k], w.z[k], w.v[k], w.w[k], tt[k] = xs[i], ys[i], zs[i], vs[i], ws[i], ts[i]
	}
	window := lags.maxDist + margin
	// Forward neighbours: each unordered pair of cells once.
	fwd := [4][2]int{{1, 0}, {-1, 1}, {0, 1}, {1, 1}}
	chunks := chunksOf(ncell, func(c int) int { return int(start[c+1] - start[c]) })
	return pass{chunks: len(chunks) - 1, run: func(ci int, acc accumulator) {
		pw := *w
		pw.acc = acc[di*nb : (di+1)*nb] // the worker's direction 0 is di
		for c := chunks[ci]; c < chunks[ci+1]; c++ {
			a0, a1 := int(start[c]), int(start[c+1])
			if a0 == a1 {
				continue
			}
			// Same cell: j after i while t_j − t_i ≤ window.
			end := a0
			for i := a0; i < a1; i++ {
				end = max(end, i+1)
				for end < a1 && tt[end]-tt[i] <= window {
					end++
				}
				pw.pairs(i, i+1, end)
			}
			ip, iq := c%np, c/np
			for _, f := range fwd {
				jp, jq := ip+f[0], iq+f[1]
				if jp < 0 || jp >= np || jq >= nq {
					continue
				}
				d := jp + np*jq
				b0, b1 := int(start[d]), int(start[d+1])
				if b0 == b1 {
					continue
				}
				lo, hi := b0, b0
				for i := a0; i < a1; i++ {
					for lo < b1 && tt[lo] < tt[i]-window {
						lo++
					}
					hi = max(hi, lo)
					for hi < b1 && tt[hi] <= tt[i]+window {
						hi++
					}
					pw.pairs(i, lo, hi)
				}
			}
		}
	}}
}
