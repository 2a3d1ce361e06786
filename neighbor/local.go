package neighbor

import (
	"math"
	"slices"
)

// Local candidate lists. Consecutive targets of a batch (grid cells row by
// row, points along a drill hole) are close, so the unconstrained search
// keeps the points around the recent targets in a short contiguous list and
// offers them all to each target: scanning 50–100 contiguous points costs
// less than walking the tree from the root (and for SearchSet, which keeps
// candidates without a branch, mispredicts nothing). The
// result is the same as the walk's (the same candidates within the bound are
// offered, and the selection depends on the candidate set only).

// localMargin is the relative widening of a local list: a list built for a
// target whose k-th neighbour bound is r holds every point within
// (1 + localMargin)·r of its centre, and serves the following targets as
// long as their own bound, widened by their distance from the centre, stays
// inside that radius. Wider lists serve more targets but cost more to scan;
// 0.3 is near the optimum of operation counts on grid rows.
const localMargin = 0.3

// localAhead is the fraction of the margin by which a new list's centre is
// put ahead of the target, along the target's last step: targets of a batch
// mostly keep going the same way, and a list they cross from back to front
// serves more of them than one centred on the target. It must stay below 1, so that the list
// covers the target it is built for.
const localAhead = 0.8

// localSlack shrinks the radius a list is trusted with by a relative 1e-9,
// so that rounding in the distances to the centre cannot drop a point that
// lies exactly on the boundary of a later target's bound.
const localSlack = 1 - 1e-9

// localPause is the number of targets searched by the tree walk alone after
// two lists in a row did not pay for themselves (targets not in a coherent
// order, or steps long compared with the neighbourhood; see paid), before
// lists are tried again. The pause doubles, up to 32 times, every time lists
// fail again right after one.
const localPause = 32

// localList is a candidate list of the unconstrained search: every indexed
// point within radius of centre, in tree order.
type localList struct {
	valid  bool
	centre [3]float64
	radius float64
	pts    []localPoint
	// last is the previous target the list was offered to.
	last [3]float64
	// hits counts the targets the list served; poor the lists in a row that
	// did not pay for themselves; pause the targets left to search without
	// a list and strikes the pauses in a row; served and paused count the
	// targets served by lists and searched during pauses (for tests).
	hits, poor, pause, strikes int
	served, paused             int
	// tested is the number of points the walk that built the list examined.
	tested int
}

// localPoint is a point of a local list: its isotropic coordinates and tree
// position.
type localPoint struct {
	x, y, z float64
	pos     int32
}

// paid reports whether the list cost less than walks would have, counting
// points examined: its build examined l.tested points and each target it
// served scans all its points, while the walk of one target examines about
// l.tested/(1 + localMargin)² (the build is a walk over a ball wider by the
// margin, and the leaves it meets grow about like the ball's cross-section
// around drill holes and grid rows).
func (l *localList) paid() bool {
	walk := float64(l.tested) / ((1 + localMargin) * (1 + localMargin))
	return float64(l.hits)*(walk-float64(len(l.pts))) > float64(l.tested)
}

// covers reports whether the list holds every point within squared distance
// bound of the target q.
func (l *localList) covers(q *[4]float64, bound float64) bool {
	if !l.valid {
		return false
	}
	dx, dy, dz := q[0]-l.centre[0], q[1]-l.centre[1], q[2]-l.centre[2]
	e := math.Sqrt(dist2(dx, dy, dz))
	return math.Sqrt(bound)+e <= l.radius*localSlack
}

// localSearch offers the points of a local list to the k-nearest search with
// squared-distance bound (≥ the k-th smallest within the radius), after
// rebuilding the list when the current one does not cover the bound. It
// returns false, having done nothing, when the bound is the search radius
// itself (no seed: the list would hold too many points) or while lists are
// paused.
func (s *Searcher) localSearch(k int, bound float64, buffered bool) bool {
	l := &s.local
	if bound >= radius2 {
		return false
	}
	if l.pause > 0 {
		l.pause--
		l.paused++
		return false
	}
	if !l.covers(&s.q, bound) {
		switch {
		case !l.valid:
		case !l.paid():
			l.poor++
		default:
			l.poor, l.strikes = 0, 0
		}
		if l.poor >= 2 {
			l.valid, l.poor, l.pause = false, 0, localPause<<min(l.strikes, 5)
			l.strikes++
			return false
		}
		sb := math.Sqrt(bound)
		c := [3]float64{s.q[0], s.q[1], s.q[2]}
		dx, dy, dz := s.q[0]-l.last[0], s.q[1]-l.last[1], s.q[2]-l.last[2]
		if step := math.Sqrt(dist2(dx, dy, dz)); step > 0 && step < sb {
			f := localAhead * localMargin * sb / step
			c[0], c[1], c[2] = c[0]+f*dx, c[1]+f*dy, c[2]+f*dz
		}
		s.buildLocal(c, sb*(1+localMargin))
		if !l.covers(&s.q, bound) { // cannot happen with localAhead < 1
			l.valid = false
			return false
		}
	}
	l.last = [3]float64{s.q[0], s.q[1], s.q[2]}
	l.hits++
	l.served++
	s.begin(k, bound, buffered)
	if s.buffered {
		s.scanListBuffered(l.pts)
		return true
	}
	qx, qy, qz := s.q[0], s.q[1], s.q[2]
	for _, p := range l.pts {
		if d2 := dist2(p.x-qx, p.y-qy, p.z-qz); d2 <= s.worst {
			s.accept(d2, p.pos)
		}
	}
	return true
}

// scanListBuffered is scanBuffered over a list of points: each goes to the
// end of the buffer and is kept by the sign of worst − d², the buffer being
// cut to the k nearest whenever the rest of the list might not fit.
func (s *Searcher) scanListBuffered(pts []localPoint) {
	for len(pts) > 0 {
		room := len(s.hd) - s.n
		if room < leafSize {
			s.cut()
			room = len(s.hd) - s.n
		}
		m := min(room, len(pts))
		hd, hp := s.hd, s.hp
		n, w := s.n, s.worst
		qx, qy, qz := s.q[0], s.q[1], s.q[2]
		for _, p := range pts[:m] {
			d2 := dist2(p.x-qx, p.y-qy, p.z-qz)
			hd[n], hp[n] = d2, p.pos
			n += 1 - int(math.Float64bits(w-d2)>>63)
		}
		s.n = n
		pts = pts[m:]
	}
}

// buildLocal replaces the local list by the points within radius r of c,
// collected by the depth-first walk of the tree centred on c with bound r²
// (see collectLeaf).
func (s *Searcher) buildLocal(c [3]float64, r float64) {
	l := &s.local
	l.valid, l.centre, l.radius = true, c, r
	l.pts = l.pts[:0]
	l.hits, l.tested = 0, 0
	q, worst := s.q, s.worst
	s.q, s.worst, s.collecting = [4]float64{c[0], c[1], c[2], 0}, r*r, true
	s.descend()
	s.q, s.worst, s.collecting = q, worst, false
}

// collectLeaf appends the points at tree positions a..b−1 within the bound
// s.worst of s.q to the local list. Every point is written after the list
// and kept by the sign of worst − d² (no branch to mispredict).
func (s *Searcher) collectLeaf(a, b int) {
	l := &s.local
	l.tested += b - a
	m := len(l.pts)
	lp := slices.Grow(l.pts, b-a)[:m+b-a]
	pts := s.ix.pts
	qx, qy, qz, r2 := s.q[0], s.q[1], s.q[2], s.worst
	for pos := a; pos < b; pos++ {
		p := &pts[pos]
		x, y, z := p[0], p[1], p[2]
		lp[m] = localPoint{x, y, z, int32(pos)}
		m += 1 - int(math.Float64bits(r2-dist2(x-qx, y-qy, z-qz))>>63)
	}
	l.pts = lp[:m]
}
