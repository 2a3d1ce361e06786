package neighbor

import "math"

// pruneSlack widens the pruning test of the depth-first walk by a relative
// 1e-9: its incremental box distance is a sum of squares formed in another
// order than a point's own squared distance, so without slack rounding could
// prune a subtree holding a point whose distance ties the current k-th one
// exactly, and the (distance, index) order of ties would be lost.
const pruneSlack = 1 + 1e-9

// listLimit is the largest k kept in a sorted insertion list (or, for
// unsorted results, in a buffer); larger k use a bounded max-heap. For small
// k the list moves fewer entries than the heap's sift operations plus the
// final heap sort, and appending candidates to a buffer and selecting the k
// nearest now and then costs less than keeping them ordered as they come.
const listLimit = 32

// bufferFactor sets the buffer of the list mode: bufferFactor·k entries
// (and room for k plus a leaf). When a leaf does not fit, the k nearest are
// selected and the pruning bound drops to the k-th distance.
const bufferFactor = 4

// Searcher answers neighbourhood queries on an Index. It holds the scratch
// memory of a query, so a Searcher must not be used by two goroutines at
// once; make one per goroutine with Index.NewSearcher. After the first few
// queries a Searcher does not allocate.
type Searcher struct {
	ix *Index

	// q is the target in isotropic space; off[d] is the squared distance
	// along axis d from q to the box of the node being visited. Both have a
	// fourth, unused entry so that indexing with d&3 needs no bounds check.
	q, off [4]float64
	// worst is the pruning bound: the squared radius, the seed bound, or the
	// squared distance of the k-th best candidate once k are held.
	worst float64
	// The candidates: squared distances in hd and tree positions in hp.
	// When buffered is set, an unordered buffer of n ≤ max(bufferFactor·k,
	// k + leafSize) entries (all of them within worst); otherwise n ≤ k entries ordered
	// by (d², original index): a sorted list when list is set, else a
	// max-heap (unconstrained search) or a min-heap (constrained search).
	k, n     int
	list     bool
	buffered bool
	hd       []float64
	hp       []int32
	// nodes is the min-heap of tree nodes of the constrained (best-first)
	// search.
	nodes []nodeEntry
	// stack holds the deferred far children of the depth-first walk.
	stack []stackEntry

	// idx and dist are the accepted neighbours returned by Search; acc are
	// their tree positions.
	idx  []int32
	dist []float64
	acc  []int32
	// holeCount counts accepted neighbours per dense hole id during a
	// constrained search; it is all zero between queries.
	holeCount []int32

	// prev are the tree positions of the neighbours found by the last
	// unconstrained query, which seed the next query's bound.
	prev []int32
	seed bool
	// local is the candidate list of the unconstrained search; noLocal
	// (set by tests) searches without one.
	local   localList
	noLocal bool
	// collecting is set while a walk builds the local list.
	collecting bool
}

// nodeEntry is a tree node queued by the best-first search with its bounding
// box (min x y z, max x y z) and the squared distance from the target to it.
type nodeEntry struct {
	lb   float64
	node int
	box  [6]float64
}

// NewSearcher returns a Searcher of the index. Searchers of one Index may run
// concurrently.
func (ix *Index) NewSearcher() *Searcher {
	p := ix.p
	k := min(p.MaxSamples, len(ix.orig))
	return &Searcher{
		ix:        ix,
		hd:        make([]float64, k),
		hp:        make([]int32, k),
		idx:       make([]int32, p.MaxSamples),
		dist:      make([]float64, p.MaxSamples),
		acc:       make([]int32, p.MaxSamples),
		holeCount: make([]int32, ix.nHoles),
		prev:      make([]int32, 0, k),
		stack:     make([]stackEntry, 0, ix.tree.depth+1),
		seed:      true,
	}
}

// Search returns the accepted neighbours of the target (x, y, z), world
// coordinates: the original source indices (positions in the coords given to
// NewIndex) and the anisotropic distances, sorted by (distance, index).
//
// The candidates are the indexed sources within anisotropic distance 1 (see
// RadiusTolerance), taken in (distance, index) order. Without constraints the
// first MaxSamples are accepted. With MaxPerOctant m, a candidate is skipped
// when its octant already holds m accepted neighbours; with MaxPerHole m, when
// its hole does. The octant of a source is given by the signs of its offset
// from the target in the ellipsoid's local frame (major, semi-major, minor),
// computed in isotropic space, which only scales the local axes: bit 0 is set
// when the major component is negative, bit 1 the semi-major, bit 2 the minor;
// a zero component counts as positive, so a source at the target's position
// is in octant 0.
//
// When fewer than MinSamples are accepted, or the target has a non-finite
// coordinate, the result is empty. The returned slices belong to the
// Searcher and are valid until its next Search.
func (s *Searcher) Search(x, y, z float64) (idx []int32, dist []float64) {
	return s.search(x, y, z, true)
}

// SearchSet returns the same neighbours and distances as Search in no
// particular order (it may depend on the Searcher's earlier queries), for
// callers that impose their own order: it saves sorting them.
func (s *Searcher) SearchSet(x, y, z float64) (idx []int32, dist []float64) {
	return s.search(x, y, z, false)
}

// search is Search, sorting the neighbours when sorted is set.
func (s *Searcher) search(x, y, z float64, sorted bool) (idx []int32, dist []float64) {
	ix := s.ix
	p := &ix.p
	qx, qy, qz := ix.iso(x, y, z)
	if len(ix.orig) == 0 || math.IsNaN(qx+qy+qz) || math.IsInf(qx+qy+qz, 0) {
		return s.idx[:0], s.dist[:0]
	}
	s.q = [4]float64{qx, qy, qz, 0}
	var m int
	if p.constrained() {
		m = s.searchConstrained()
	} else {
		m = s.searchNearest(sorted)
	}
	if m < p.MinSamples {
		m = 0
	}
	return s.idx[:m], s.dist[:m]
}

// iso maps a world point into isotropic space. The explicit float64
// conversions forbid fused multiply-adds, so the images are bit-identical on
// every platform and between sources and targets.
func (ix *Index) iso(x, y, z float64) (float64, float64, float64) {
	x, y, z = x-ix.origin[0], y-ix.origin[1], z-ix.origin[2]
	m := &ix.aniso.M
	return float64(m[0]*x) + float64(m[1]*y) + float64(m[2]*z),
		float64(m[3]*x) + float64(m[4]*y) + float64(m[5]*z),
		float64(m[6]*x) + float64(m[7]*y) + float64(m[8]*z)
}

// dist2 is the squared distance between two points of isotropic space, the
// one formula of the package (no fused multiply-adds, fixed order).
func dist2(dx, dy, dz float64) float64 {
	return float64(dx*dx) + float64(dy*dy) + float64(dz*dz)
}

// searchNearest finds the MaxSamples nearest within the radius by a
// depth-first walk of the tree and writes them to s.idx and s.dist, sorted
// by (distance, index) when sorted is set or the heap was used.
func (s *Searcher) searchNearest(sorted bool) int {
	ix := s.ix
	k := min(ix.p.MaxSamples, len(ix.orig))
	if b := s.seedBound(k); s.noLocal || !s.localSearch(k, b, !sorted) {
		s.knn(k, b, !sorted)
	}
	switch {
	case s.buffered:
		if s.n > k {
			s.cut()
		}
	case !s.list:
		s.sortHeap()
	}
	m := s.n
	hd, hp, orig := s.hd[:m], s.hp[:m], ix.orig
	idx, dist := s.idx[:m], s.dist[:m]
	for i, pos := range hp {
		idx[i] = orig[pos]
		dist[i] = math.Sqrt(hd[i])
	}
	s.prev = append(s.prev[:0], hp...)
	return m
}

// seedBound returns an upper bound of the k-th smallest squared distance
// within the radius: the largest squared distance from the new target to the
// k neighbours of the previous query (any k points bound the k-th nearest),
// capped at the squared radius. Consecutive targets of a batch are usually
// close, so the bound is tight and the walk offers few candidates.
func (s *Searcher) seedBound(k int) float64 {
	if !s.seed || len(s.prev) < k {
		return radius2
	}
	pts := s.ix.pts
	qx, qy, qz := s.q[0], s.q[1], s.q[2]
	// The largest of non-negative floats is the largest of their bits.
	var b uint64
	for _, pos := range s.prev[:k] {
		p := &pts[pos]
		b = max(b, math.Float64bits(dist2(p[0]-qx, p[1]-qy, p[2]-qz)))
	}
	return min(math.Float64frombits(b), radius2)
}

// knn collects the k nearest indexed points (in (d², index) order unless
// buffered is set and k ≤ listLimit) whose squared distance is at most
// bound, which must be ≥ the k-th smallest squared distance within the
// radius, or the squared radius. Buffered results are left for the caller
// to cut to k.
func (s *Searcher) knn(k int, bound float64, buffered bool) {
	s.begin(k, bound, buffered)
	s.descend()
}

// descend walks the tree from the root for the target s.q with the bound
// s.worst, unless the root's box is beyond it.
func (s *Searcher) descend() {
	t := &s.ix.tree
	md := 0.0
	for d := 0; d < 3; d++ {
		v, o := s.q[d], 0.0
		if v < t.box[d] {
			o = (t.box[d] - v) * (t.box[d] - v)
		} else if v > t.box[3+d] {
			o = (v - t.box[3+d]) * (v - t.box[3+d])
		}
		s.off[d] = o
		md += o
	}
	if md <= s.worst*pruneSlack {
		s.walk(md)
	}
}

// begin empties the candidates of a k-nearest search with squared-distance
// bound, in buffered mode when buffered is set and k ≤ listLimit.
func (s *Searcher) begin(k int, bound float64, buffered bool) {
	size := k
	s.buffered = buffered && k <= listLimit
	if s.buffered {
		size = max(bufferFactor*k, k+leafSize)
	}
	if cap(s.hd) < size {
		s.hd = make([]float64, size)
		s.hp = make([]int32, size)
	}
	s.hd, s.hp = s.hd[:size], s.hp[:size]
	s.k, s.n, s.worst, s.list = k, 0, bound, k <= listLimit && !s.buffered
}

// stackEntry is a deferred far child of the depth-first walk: the node, the
// lower bound of its squared distance and the per-axis terms of that bound.
type stackEntry struct {
	node int
	md   float64
	off  [4]float64
}

// walk is the depth-first search without recursion: it descends to a leaf
// along the nearer children, stacking each farther child whose bound is
// within the current k-th distance, and rechecks the bound when it unstacks
// one (the k-th distance only shrinks).
func (s *Searcher) walk(md float64) {
	t := &s.ix.tree
	nodes := t.nodes
	firstLeaf := len(nodes)
	stack := s.stack[:0]
	node, off := 0, s.off
	for {
		if md <= s.worst*pruneSlack {
			for node < firstLeaf {
				nd := &nodes[node]
				dim := nd.dim & 3
				v := off[dim]
				q := s.q[dim]
				dlo := q - nd.lo
				dhi := q - nd.hi
				near := 2*node + 1
				cut := dhi * dhi
				if dlo+dhi >= 0 {
					near++
					cut = dlo * dlo
				}
				if fmd := md - v + cut; fmd <= s.worst*pruneSlack {
					e := stackEntry{node: 4*node + 3 - near, md: fmd, off: off}
					e.off[dim] = cut
					stack = append(stack, e)
				}
				node = near
			}
			s.scanLeaf(node - firstLeaf)
		}
		if len(stack) == 0 {
			break
		}
		e := &stack[len(stack)-1]
		node, md, off = e.node, e.md, e.off
		stack = stack[:len(stack)-1]
	}
	s.stack = stack
}

// scanLeaf offers the points of leaf j to the candidates (or to the local
// list being built).
func (s *Searcher) scanLeaf(j int) {
	t := &s.ix.tree
	a, b := int(t.leaf[j]), int(t.leaf[j+1])
	switch {
	case s.collecting:
		s.collectLeaf(a, b)
		return
	case s.buffered:
		s.scanBuffered(a, b)
		return
	}
	pts := s.ix.pts[a:b]
	qx, qy, qz := s.q[0], s.q[1], s.q[2]
	for q := range pts {
		p := &pts[q]
		if d2 := dist2(p[0]-qx, p[1]-qy, p[2]-qz); d2 <= s.worst {
			s.accept(d2, int32(a+q))
		}
	}
}

// accept adds the point at tree position pos, at squared distance
// d2 ≤ s.worst, to the ordered candidates: the sorted list or the heap.
func (s *Searcher) accept(d2 float64, pos int32) {
	if s.list {
		s.insert(d2, pos)
	} else {
		s.push(d2, pos)
	}
}

// scanBuffered appends the points at tree positions a..b−1 that are within
// s.worst to the buffer of candidates, first cutting the buffer to the k
// nearest (which lowers s.worst to the k-th distance) when the leaf might
// not fit. Every point is written at the end of the buffer and kept by
// advancing the count by the sign of worst − d²: no branch to mispredict
// on the candidates that about a fifth of the points are.
func (s *Searcher) scanBuffered(a, b int) {
	if s.n+(b-a) > len(s.hd) {
		s.cut()
	}
	pts := s.ix.pts[a:b]
	qx, qy, qz := s.q[0], s.q[1], s.q[2]
	hd, hp := s.hd, s.hp
	n, w := s.n, s.worst
	for q := range pts {
		p := &pts[q]
		d2 := dist2(p[0]-qx, p[1]-qy, p[2]-qz)
		hd[n], hp[n] = d2, int32(a+q)
		// w − d² ≥ 0 (+0 on a tie) has a clear sign bit.
		n += 1 - int(math.Float64bits(w-d2)>>63)
	}
	s.n = n
}

// cut reduces the s.n > s.k buffered candidates to the k nearest and lowers
// s.worst to the k-th squared distance.
func (s *Searcher) cut() {
	k := s.k
	w, ok := s.selectNearest(k)
	if !ok {
		s.nearestFirst(k)
	}
	s.n = k
	s.worst = w
}

// selectNearest reorders the s.n > k buffered candidates so that the first k
// hold the k smallest squared distances, by a quickselect whose partition
// has no data-dependent branch: the distances compare as their bits
// (non-negative floats order as their bits) and the count of smaller ones
// advances by the sign of a difference. It reports false when a kept
// distance equals a dropped one: the (d², original index) order must then
// decide, and the caller selects again (the buffer is only permuted). It
// returns the k-th smallest squared distance either way.
func (s *Searcher) selectNearest(k int) (float64, bool) {
	n := s.n
	hd, hp := s.hd[:n], s.hp[:n]
	lo, hi := 0, n // the k-th smallest lies in [lo, hi)
	for hi-lo > 1 {
		// Median of three as pivot, moved to hi−1.
		m := lo + (hi-lo)/2
		if hd[m] < hd[lo] {
			hd[m], hd[lo] = hd[lo], hd[m]
			hp[m], hp[lo] = hp[lo], hp[m]
		}
		if hd[hi-1] < hd[lo] {
			hd[hi-1], hd[lo] = hd[lo], hd[hi-1]
			hp[hi-1], hp[lo] = hp[lo], hp[hi-1]
		}
		if hd[m] < hd[hi-1] {
			hd[m], hd[hi-1] = hd[hi-1], hd[m]
			hp[m], hp[hi-1] = hp[hi-1], hp[m]
		}
		pv := math.Float64bits(hd[hi-1])
		// Lomuto: [lo, j) below the pivot, [j, i) at or above it.
		j := lo
		for i := lo; i < hi-1; i++ {
			x, xp := hd[i], hp[i]
			hd[i], hp[i] = hd[j], hp[j]
			hd[j], hp[j] = x, xp
			j += int((math.Float64bits(x) - pv) >> 63)
		}
		hd[j], hd[hi-1] = hd[hi-1], hd[j]
		hp[j], hp[hi-1] = hp[hi-1], hp[j]
		switch {
		case k < j:
			hi = j
		case k > j+1:
			lo = j + 1
		default: // [0, k) holds the k smallest
			lo, hi = 0, 0
		}
	}
	var kept uint64
	dropped := uint64(math.MaxUint64)
	for _, d := range hd[:k] {
		kept = max(kept, math.Float64bits(d))
	}
	for _, d := range hd[k:] {
		dropped = min(dropped, math.Float64bits(d))
	}
	return math.Float64frombits(kept), kept < dropped
}

// before reports whether buffer entry a precedes entry b in (d², original
// index) order, a strict total order.
func (s *Searcher) before(a, b int) bool {
	da, db := s.hd[a], s.hd[b]
	return da < db || da == db && s.ix.orig[s.hp[a]] < s.ix.orig[s.hp[b]]
}

// swap exchanges buffer entries a and b.
func (s *Searcher) swap(a, b int) {
	s.hd[a], s.hd[b] = s.hd[b], s.hd[a]
	s.hp[a], s.hp[b] = s.hp[b], s.hp[a]
}

// nearestFirst reorders the s.n buffered candidates so that the first k
// (k < s.n) are the k first in (d², original index) order (Hoare's
// quickselect with a median-of-three pivot).
func (s *Searcher) nearestFirst(k int) {
	lo, hi := 0, s.n-1
	for hi > lo {
		m := lo + (hi-lo)/2
		if s.before(m, lo) {
			s.swap(m, lo)
		}
		if s.before(hi, lo) {
			s.swap(hi, lo)
		}
		if s.before(hi, m) {
			s.swap(hi, m)
		}
		pd, po := s.hd[m], s.ix.orig[s.hp[m]]
		i, j := lo, hi
		for i <= j {
			for {
				d := s.hd[i]
				if !(d < pd || d == pd && s.ix.orig[s.hp[i]] < po) {
					break
				}
				i++
			}
			for {
				d := s.hd[j]
				if !(pd < d || pd == d && po < s.ix.orig[s.hp[j]]) {
					break
				}
				j--
			}
			if i <= j {
				s.swap(i, j)
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// insert puts the point at tree position p, with squared distance d2 ≤
// s.worst, into the sorted list of at most k candidates.
func (s *Searcher) insert(d2 float64, p int32) {
	hd, hp, orig := s.hd, s.hp, s.ix.orig
	i := s.n
	if i == s.k {
		i--
		if d2 == hd[i] && orig[p] > orig[hp[i]] {
			return
		}
	} else {
		s.n++
	}
	for i > 0 && (hd[i-1] > d2 || hd[i-1] == d2 && orig[hp[i-1]] > orig[p]) {
		hd[i], hp[i] = hd[i-1], hp[i-1]
		i--
	}
	hd[i], hp[i] = d2, p
	if s.n == s.k {
		s.worst = hd[s.k-1]
	}
}

// push puts the point at tree position p, with squared distance d2 ≤
// s.worst, into the bounded max-heap of at most k candidates.
func (s *Searcher) push(d2 float64, p int32) {
	hd, hp, orig := s.hd, s.hp, s.ix.orig
	if s.n < s.k {
		i := s.n
		s.n++
		for i > 0 {
			par := (i - 1) >> 1
			if hd[par] > d2 || hd[par] == d2 && orig[hp[par]] > orig[p] {
				break
			}
			hd[i], hp[i] = hd[par], hp[par]
			i = par
		}
		hd[i], hp[i] = d2, p
		if s.n == s.k {
			s.worst = hd[0]
		}
		return
	}
	if d2 == hd[0] && orig[p] > orig[hp[0]] {
		return
	}
	s.siftDown(d2, p, s.n)
	s.worst = hd[0]
}

// siftDown places (d2, p) at the root of the max-heap of size n, moving
// larger children up.
func (s *Searcher) siftDown(d2 float64, p int32, n int) {
	hd, hp, orig := s.hd, s.hp, s.ix.orig
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && (hd[r] > hd[c] || hd[r] == hd[c] && orig[hp[r]] > orig[hp[c]]) {
			c = r
		}
		if hd[c] < d2 || hd[c] == d2 && orig[hp[c]] < orig[p] {
			break
		}
		hd[i], hp[i] = hd[c], hp[c]
		i = c
	}
	hd[i], hp[i] = d2, p
}

// sortHeap turns the max-heap into a list sorted by (d², original index).
func (s *Searcher) sortHeap() {
	for end := s.n - 1; end > 0; end-- {
		d2, p := s.hd[end], s.hp[end]
		s.hd[end], s.hp[end] = s.hd[0], s.hp[0]
		s.siftDown(d2, p, end)
	}
}
