package neighbor

import (
	"math"
	"runtime"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
)

// leafSize is the largest number of points in a leaf bucket.
const leafSize = 16

// kdTree is a static, balanced kd-tree in implicit array layout over points
// stored x y z consecutively and reordered so that every leaf bucket is a
// contiguous run.
//
// Node 0 is the root; the children of node i are 2i+1 and 2i+2. Every leaf is
// at the same depth, so internal nodes are 0..2^depth−2 and leaf j is node
// 2^depth−1+j. Each split is at the count median along the axis of largest
// extent, so the leaves hold ⌊n/2^depth⌋ or ⌈n/2^depth⌉ points.
//
// Per internal node the tree keeps the split axis, the largest coordinate of
// its left child along that axis (lo) and the smallest of its right child
// (hi): the gap between lo and hi makes the far-child bound of the search
// tighter than the split value alone (the "cut" bounds of Arya and Mount's
// incremental distance computation, as in nanoflann).
type kdTree struct {
	depth int
	// nodes are the internal nodes.
	nodes []kdNode
	// leaf j holds the tree positions leaf[j] .. leaf[j+1]−1.
	leaf []int32
	// box is the bounding box of all points: min x y z then max x y z.
	box [6]float64
	// done, while build runs, stops it when closed.
	done <-chan struct{}
}

// kdNode is an internal node: its split axis, the largest coordinate of its
// left child along that axis and the smallest of its right child.
type kdNode struct {
	lo, hi float64
	dim    int
}

// build reorders pts, orig and hole (nil or one per point)
// into leaf order and fills the tree. It stops early and reports false
// when done is closed (nil: never), the tree then unusable.
func (t *kdTree) build(done <-chan struct{}, pts [][3]float64, orig []int32, hole []int32) bool {
	n := len(orig)
	t.depth = 0
	for (n+(1<<t.depth)-1)>>t.depth > leafSize {
		t.depth++
	}
	nInternal := 1<<t.depth - 1
	t.nodes = make([]kdNode, nInternal)
	t.leaf = make([]int32, 1<<t.depth+1)
	t.leaf[1<<t.depth] = int32(n)
	b := bounds(pts, 0, n)
	t.box = b
	if n == 0 {
		t.box = [6]float64{}
	}
	// The two halves of a split are independent (disjoint points and
	// nodes), so the top levels build them concurrently; the tree does not
	// depend on the scheduling.
	par := 0
	for 1<<par < runtime.GOMAXPROCS(0) {
		par++
	}
	if n < 1<<16 {
		par = -1 // small trees build faster on one goroutine
	}
	t.done = done
	t.split(pts, orig, hole, 0, 0, 0, n, b, par)
	t.done = nil
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// stopped reports whether the build was cancelled.
func (t *kdTree) stopped() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// bounds returns the bounding box (min then max) of points lo..hi−1.
func bounds(pts [][3]float64, lo, hi int) [6]float64 {
	b := [6]float64{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := lo; i < hi; i++ {
		for d := 0; d < 3; d++ {
			c := pts[i][d]
			if c < b[d] {
				b[d] = c
			}
			if c > b[3+d] {
				b[3+d] = c
			}
		}
	}
	return b
}

// split builds node (at the given level) over points lo..hi−1 whose bounding
// box is b.
// Levels up to par build their two children concurrently.
func (t *kdTree) split(pts [][3]float64, orig, hole []int32, node, level, lo, hi int, b [6]float64, par int) {
	if level == t.depth {
		t.leaf[node-(1<<t.depth-1)] = int32(lo)
		return
	}
	if hi-lo >= 1<<12 && t.stopped() { // the large nodes: a check per ~4096 points
		return
	}
	dim := 0
	for d := 1; d < 3; d++ {
		if b[3+d]-b[d] > b[3+dim]-b[dim] {
			dim = d
		}
	}
	mid := lo + (hi-lo)/2
	selectNth(pts, orig, hole, lo, hi, mid, dim)
	// After selection every point left of mid is ≤ pts[mid] along dim and
	// every point from mid on is ≥ it. Neither child is empty: build chose the
	// depth so that every leaf receives more than leafSize/2 points.
	lb, rb := bounds(pts, lo, mid), bounds(pts, mid, hi)
	t.nodes[node] = kdNode{lo: lb[3+dim], hi: rb[dim], dim: dim}
	if level <= par {
		var wg sync.WaitGroup
		var child geostat.Panics
		wg.Go(func() {
			// A panic is handed on to the building goroutine, whose
			// caller recovers it, instead of crashing the process.
			defer child.Recover(nil)
			t.split(pts, orig, hole, 2*node+1, level+1, lo, mid, lb, par)
		})
		t.split(pts, orig, hole, 2*node+2, level+1, mid, hi, rb, par)
		wg.Wait()
		if err := child.Err(); err != nil {
			panic(err) // the *geostat.PanicError, stack kept
		}
		return
	}
	t.split(pts, orig, hole, 2*node+1, level+1, lo, mid, lb, par)
	t.split(pts, orig, hole, 2*node+2, level+1, mid, hi, rb, par)
}

// selectNth partially sorts points lo..hi−1 along dim so that the point at
// position nth is the one a full sort would put there, with no larger point
// before it and no smaller point after it (Hoare's quickselect with a
// median-of-three pivot; deterministic).
func selectNth(pts [][3]float64, orig, hole []int32, lo, hi, nth, dim int) {
	hi-- // inclusive
	for hi > lo {
		m := lo + (hi-lo)/2
		// median of three into position m
		if pts[m][dim] < pts[lo][dim] {
			swapPoints(pts, orig, hole, m, lo)
		}
		if pts[hi][dim] < pts[lo][dim] {
			swapPoints(pts, orig, hole, hi, lo)
		}
		if pts[hi][dim] < pts[m][dim] {
			swapPoints(pts, orig, hole, hi, m)
		}
		pivot := pts[m][dim]
		i, j := lo, hi
		for i <= j {
			for pts[i][dim] < pivot {
				i++
			}
			for pts[j][dim] > pivot {
				j--
			}
			if i <= j {
				swapPoints(pts, orig, hole, i, j)
				i++
				j--
			}
		}
		// Now lo..j ≤ pivot, i..hi ≥ pivot, and j < i.
		switch {
		case nth <= j:
			hi = j
		case nth >= i:
			lo = i
		default:
			return
		}
	}
}

func swapPoints(pts [][3]float64, orig, hole []int32, a, b int) {
	pts[a], pts[b] = pts[b], pts[a]
	orig[a], orig[b] = orig[b], orig[a]
	if hole != nil {
		hole[a], hole[b] = hole[b], hole[a]
	}
}
