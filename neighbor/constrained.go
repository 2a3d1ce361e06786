package neighbor

import "math"

// Octant masks (bit o for octant o): the octants whose component along axis
// d is ≥ 0 (bit d of the octant number clear) and those where it is < 0.
const (
	posSide0, posSide1, posSide2 = 0b01010101, 0b00110011, 0b00001111
	negSide0, negSide1, negSide2 = 0b10101010, 0b11001100, 0b11110000
)

// searchConstrained applies octant and hole quotas. It visits the tree best
// first (Hjaltason and Samet's incremental nearest neighbour): a min-heap of
// nodes keyed by their box distance and a min-heap of points keyed by
// (d², index) yield the candidates exactly in (distance, index) order, and
// the greedy selection stops as soon as MaxSamples are accepted, however many
// candidates it had to skip. Points of full octants or holes are never
// queued, and neither are nodes whose box only meets full octants, so the
// search does not wade through the candidates of octants already served.
// It writes the accepted neighbours to s.idx and s.dist.
func (s *Searcher) searchConstrained() int {
	ix := s.ix
	p := &ix.p
	t := &ix.tree
	useOct, useHole := p.MaxPerOctant > 0, p.MaxPerHole > 0
	maxOct, maxHole := int32(p.MaxPerOctant), int32(p.MaxPerHole)
	var oct [8]int32
	open := uint8(0xff) // octants with room
	s.n, s.k, s.list = 0, 0, false
	s.nodes = s.nodes[:0]
	root := nodeEntry{node: 0, box: t.box}
	root.lb = s.boxDist2(&root.box)
	s.pushNode(root)
	m := 0
	firstLeaf := 1<<t.depth - 1
	for m < p.MaxSamples {
		if len(s.nodes) > 0 && (s.n == 0 || s.nodes[0].lb <= s.hd[0]) {
			e := s.popNode()
			// Descend to a leaf along the nearer children, queueing the
			// farther ones (half the heap traffic of queueing both).
			for e.node < firstLeaf {
				if useOct && s.boxOctants(&e.box)&open == 0 {
					break
				}
				nd := &t.nodes[e.node]
				left, right := e, e
				left.node, right.node = 2*e.node+1, 2*e.node+2
				left.box[3+nd.dim] = nd.lo
				right.box[nd.dim] = nd.hi
				left.lb, right.lb = s.boxDist2(&left.box), s.boxDist2(&right.box)
				if right.lb < left.lb {
					left, right = right, left
				}
				s.pushNode(right)
				e = left
			}
			if e.node < firstLeaf || e.lb > radius2 || useOct && s.boxOctants(&e.box)&open == 0 {
				continue
			}
			s.queueLeaf(e.node-firstLeaf, useOct, useHole, open)
			continue
		}
		if s.n == 0 {
			break
		}
		d2, pos := s.popPoint()
		o := 0
		if useOct {
			o = s.octant(pos)
			if oct[o] >= maxOct {
				continue
			}
		}
		if useHole {
			h := ix.hole[pos]
			if s.holeCount[h] >= maxHole {
				continue
			}
			s.holeCount[h]++
		}
		if oct[o]++; useOct && oct[o] == maxOct {
			open &^= 1 << o
		}
		s.idx[m] = ix.orig[pos]
		s.dist[m] = math.Sqrt(d2)
		s.acc[m] = pos
		m++
		if useOct && open == 0 {
			break
		}
	}
	if useHole {
		for _, pos := range s.acc[:m] {
			s.holeCount[ix.hole[pos]]--
		}
	}
	return m
}

// octant returns the octant of the point at tree position pos relative to
// the target (see Search).
func (s *Searcher) octant(pos int32) int {
	pts := &s.ix.pts[pos]
	o := 0
	if pts[0]-s.q[0] < 0 {
		o |= 1
	}
	if pts[1]-s.q[1] < 0 {
		o |= 2
	}
	if pts[2]-s.q[2] < 0 {
		o |= 4
	}
	return o
}

// boxOctants returns the octants (bit o for octant o) that the box meets,
// with the sign rule of octant (subtraction is monotone, so the signs of the
// box corners bound the signs of every point inside).
func (s *Searcher) boxOctants(b *[6]float64) uint8 {
	posSide := [3]uint8{posSide0, posSide1, posSide2}
	negSide := [3]uint8{negSide0, negSide1, negSide2}
	mask := uint8(0xff)
	for d := 0; d < 3; d++ {
		side := uint8(0)
		if b[d]-s.q[d] < 0 {
			side |= negSide[d]
		}
		if b[3+d]-s.q[d] >= 0 {
			side |= posSide[d]
		}
		mask &= side
	}
	return mask
}

// queueLeaf queues the points of leaf j that are within the radius and whose
// octant and hole have room.
func (s *Searcher) queueLeaf(j int, useOct, useHole bool, open uint8) {
	ix := s.ix
	t := &ix.tree
	a, b := int(t.leaf[j]), int(t.leaf[j+1])
	pts := ix.pts[a:b]
	qx, qy, qz := s.q[0], s.q[1], s.q[2]
	maxHole := int32(ix.p.MaxPerHole)
	for q := range pts {
		p, pos := &pts[q], int32(a+q)
		d2 := dist2(p[0]-qx, p[1]-qy, p[2]-qz)
		if d2 > radius2 {
			continue
		}
		if useOct && open&(1<<s.octant(pos)) == 0 {
			continue
		}
		if useHole && s.holeCount[ix.hole[pos]] >= maxHole {
			continue
		}
		s.pushPoint(d2, pos)
	}
}

// boxDist2 returns the squared distance from the target to box b. It is
// formed like a point's squared distance, and rounding is monotone, so it
// never exceeds the squared distance of a point inside the box: a node is
// always expanded before a point that ties with one of its own, and ties are
// resolved in index order.
func (s *Searcher) boxDist2(b *[6]float64) float64 {
	var o [3]float64
	for d := 0; d < 3; d++ {
		if v := s.q[d]; v < b[d] {
			o[d] = b[d] - v
		} else if v > b[3+d] {
			o[d] = v - b[3+d]
		}
	}
	return dist2(o[0], o[1], o[2])
}

// pushNode queues a node unless its box is beyond the radius.
func (s *Searcher) pushNode(e nodeEntry) {
	if e.lb > radius2 {
		return
	}
	s.nodes = append(s.nodes, e)
	h := s.nodes
	i := len(h) - 1
	for i > 0 {
		par := (i - 1) >> 1
		if h[par].lb <= e.lb {
			break
		}
		h[i] = h[par]
		i = par
	}
	h[i] = e
}

// popNode removes and returns the nearest queued node.
func (s *Searcher) popNode() nodeEntry {
	h := s.nodes
	top := h[0]
	n := len(h) - 1
	e := h[n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].lb < h[c].lb {
			c = r
		}
		if h[c].lb >= e.lb {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = e
	}
	s.nodes = h
	return top
}

// pushPoint queues a candidate in the min-heap of points ordered by (d²,
// original index), growing it as needed.
func (s *Searcher) pushPoint(d2 float64, p int32) {
	if s.n == len(s.hd) || s.n == len(s.hp) {
		c := max(64, 2*s.n)
		hd, hp := make([]float64, c), make([]int32, c)
		copy(hd, s.hd[:s.n])
		copy(hp, s.hp[:s.n])
		s.hd, s.hp = hd, hp
	}
	hd, hp, orig := s.hd, s.hp, s.ix.orig
	i := s.n
	s.n++
	for i > 0 {
		par := (i - 1) >> 1
		if hd[par] < d2 || hd[par] == d2 && orig[hp[par]] < orig[p] {
			break
		}
		hd[i], hp[i] = hd[par], hp[par]
		i = par
	}
	hd[i], hp[i] = d2, p
}

// popPoint removes and returns the first queued candidate in (d², index)
// order.
func (s *Searcher) popPoint() (float64, int32) {
	hd, hp, orig := s.hd, s.hp, s.ix.orig
	d0, p0 := hd[0], hp[0]
	s.n--
	n := s.n
	d2, p := hd[n], hp[n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && (hd[r] < hd[c] || hd[r] == hd[c] && orig[hp[r]] < orig[hp[c]]) {
			c = r
		}
		if hd[c] > d2 || hd[c] == d2 && orig[hp[c]] > orig[p] {
			break
		}
		hd[i], hp[i] = hd[c], hp[c]
		i = c
	}
	hd[i], hp[i] = d2, p
	return d0, p0
}
