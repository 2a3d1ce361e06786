package blockmodel

import (
	"fmt"
	"math/bits"
	"sort"
)

// SubID identifies a sub-block within its parent: by sidx (the index of
// its minimum-corner sub-cell, the identity of the fully-sub-blocked and
// octree kinds) or, when HasCorners, by its corners Start (inclusive) and
// End (exclusive) on the parent's sub-cell grid (the identity of the
// flexible kind). The zero value is sidx 0: the only row of a regular
// parent, and a whole sub-blocked parent.
type SubID struct {
	Sidx       uint32
	Start, End [3]uint8
	HasCorners bool
}

// SidxID returns the identity of the sub-block whose minimum-corner cell is
// sidx.
func SidxID(sidx uint32) SubID { return SubID{Sidx: sidx} }

// CornersID returns the identity of the sub-block covering start to end.
func CornersID(start, end [3]uint8) SubID { return SubID{Start: start, End: end, HasCorners: true} }

// Locator maps row identities and centroids to row indices in canonical
// order; *Blocks implements it. The update-file reader (bmwire) matches the
// rows of a file with it.
type Locator interface {
	// NumRows returns the number of rows (row indices are 0…NumRows()−1).
	NumRows() int64
	// Locate returns the row of parent (i, j, k) and sub-block sub.
	Locate(i, j, k uint32, sub SubID) (row int64, ok bool)
	// LocateXYZ returns the row whose centroid (and, sub-blocked, extent)
	// matches within MatchTolerance, and its parent indices, so that a
	// caller learns the parent of a coordinate-form row without a second
	// lookup; a regular model ignores dx, dy, dz.
	LocateXYZ(x, y, z, dx, dy, dz float64) (row int64, ijk [3]uint32, ok bool)
}

// Blocks is the set of rows of a model version: its geometry and, for the
// sub-blocked kinds, which sub-blocks each parent is split into, as flat
// columns in canonical order (per row: the flat parent index and the
// corners). A regular model, and the initial state of a sub-blocked one,
// has every parent whole and needs no columns. Blocks is immutable and safe
// for concurrent use.
type Blocks struct {
	g      *Geometry
	whole  bool
	parent []uint32 // flat parent index per row
	start  []uint8  // 3 per row: si, sj, sk
	end    []uint8  // 3 per row: ei, ej, ek (exclusive)
	n      int64
}

var _ Locator = (*Blocks)(nil)

// WholeBlocks returns the rows of g with every parent whole: one row per
// parent, row index = flat parent index. It is the only state of a regular
// model and version 1 of a sub-blocked one.
func (g *Geometry) WholeBlocks() *Blocks {
	return &Blocks{g: g, whole: true, n: g.NumParents()}
}

// InvalidBlocksError is a sub-block set NewBlocks refuses: the first row at
// fault and why.
type InvalidBlocksError struct {
	Row    int64
	Reason string
}

// Error names the row.
func (e *InvalidBlocksError) Error() string {
	return fmt.Sprintf("sub-block row %d: %s", e.Row, e.Reason)
}

// NewBlocks returns the rows of a sub-blocked model given as columns: per
// row the flat parent index (i + nx·(j + ny·k)) and the corners start (3 per
// row, inclusive) and end (3 per row, exclusive). The slices are kept, not
// copied: the caller must not change them afterwards. The rows must be in
// canonical order (parent ascending, then sidx ascending; see
// CanonicalPermutation), every parent must appear, and each parent's
// sub-blocks must be valid for the kind (A.2.4): fully-sub-blocked, one
// whole row or exactly nsx·nsy·nsz unit rows; flexible, cuboids that tile
// the parent exactly; variable-octree, cuboids of n/2^m sub-cells per axis
// at starts that are multiples of their extent, tiling the parent. The
// error is an *InvalidBlocksError naming the first row at fault. A regular
// model has no sub-blocks: use WholeBlocks.
func NewBlocks(g *Geometry, parent []uint32, start, end []uint8) (*Blocks, error) {
	if g.kind == Regular {
		return nil, &InvalidBlocksError{Row: 0, Reason: "a regular model has no sub-blocks"}
	}
	n := int64(len(parent))
	if int64(len(start)) != 3*n || int64(len(end)) != 3*n {
		return nil, &InvalidBlocksError{Row: 0, Reason: fmt.Sprintf("%d parents need %d start and end values, got %d and %d", n, 3*n, len(start), len(end))}
	}
	b := &Blocks{g: g, parent: parent, start: start, end: end, n: n}
	if err := b.validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// validate checks order, coverage and per-kind validity.
func (b *Blocks) validate() error {
	g := b.g
	np := g.NumParents()
	cells := g.SubCells()
	var paint []bool // reused across parents for large sets
	var want int64   // next parent expected
	for r := int64(0); r < b.n; {
		p := int64(b.parent[r])
		if p != want {
			if p < want {
				return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("parent %d comes after parent %d: rows must be in canonical order", p, want-1)}
			}
			if p >= np {
				return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("parent index %d is outside the model's %d parents", p, np)}
			}
			i, j, k := g.ParentIJK(want)
			return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("parent (%d, %d, %d) has no sub-blocks", i, j, k)}
		}
		e := r + 1
		for e < b.n && int64(b.parent[e]) == p {
			e++
		}
		if err := b.validateParent(r, e, cells, &paint); err != nil {
			return err
		}
		want = p + 1
		r = e
	}
	if want != np {
		i, j, k := g.ParentIJK(want)
		return &InvalidBlocksError{Row: b.n, Reason: fmt.Sprintf("parent (%d, %d, %d) has no sub-blocks", i, j, k)}
	}
	return nil
}

// validateParent checks the rows [r0, r1) of one parent.
func (b *Blocks) validateParent(r0, r1 int64, cells int, paint *[]bool) error {
	g := b.g
	var volume int64
	prev := int64(-1)
	for r := r0; r < r1; r++ {
		s, e := b.Corners(r)
		for a := 0; a < 3; a++ {
			if !(s[a] < e[a] && int(e[a]) <= g.nsub[a]) {
				return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("corners %v → %v: each axis needs 0 ≤ start < end ≤ %v", s, e, g.nsub)}
			}
		}
		sidx := int64(g.Sidx(s))
		if sidx <= prev {
			return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("sidx %d follows sidx %d in its parent: sub-blocks must be in ascending sidx", sidx, prev)}
		}
		prev = sidx
		ext := [3]int{int(e[0] - s[0]), int(e[1] - s[1]), int(e[2] - s[2])}
		switch g.kind {
		case FullySubBlocked:
			whole := ext == g.nsub
			if (r1-r0 == 1) != whole || (!whole && ext != [3]int{1, 1, 1}) {
				return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("corners %v → %v: a fully-sub-blocked parent is one whole row or %d unit sub-blocks", s, e, cells)}
			}
		case VariableOctree:
			for a := 0; a < 3; a++ {
				if bits.OnesCount(uint(ext[a])) != 1 || int(s[a])%ext[a] != 0 {
					return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("corners %v → %v: an octree sub-block spans n/2^m sub-cells per axis from a multiple of its extent", s, e)}
				}
			}
		}
		volume += int64(ext[0] * ext[1] * ext[2])
	}
	if volume != int64(cells) {
		return &InvalidBlocksError{Row: r0, Reason: fmt.Sprintf("the sub-blocks of the parent cover %d of its %d sub-cells", volume, cells)}
	}
	// Equal volume and no overlap is an exact tiling. Pairwise checks cost
	// rows², painting costs the parent's cells: take the cheaper.
	rows := r1 - r0
	if rows == 1 {
		return nil
	}
	if rows*rows <= int64(cells) {
		for r := r0; r < r1; r++ {
			s1, e1 := b.Corners(r)
			for q := r0; q < r; q++ {
				s2, e2 := b.Corners(q)
				if s1[0] < e2[0] && s2[0] < e1[0] && s1[1] < e2[1] && s2[1] < e1[1] && s1[2] < e2[2] && s2[2] < e1[2] {
					return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("sub-block %v → %v overlaps row %d", s1, e1, q)}
				}
			}
		}
		return nil
	}
	if len(*paint) < cells {
		*paint = make([]bool, cells)
	}
	cover := (*paint)[:cells]
	clear(cover)
	nx, ny := g.nsub[0], g.nsub[1]
	for r := r0; r < r1; r++ {
		s, e := b.Corners(r)
		for z := int(s[2]); z < int(e[2]); z++ {
			for y := int(s[1]); y < int(e[1]); y++ {
				for x := int(s[0]); x < int(e[0]); x++ {
					c := x + nx*(y+ny*z)
					if cover[c] {
						return &InvalidBlocksError{Row: r, Reason: fmt.Sprintf("sub-block %v → %v overlaps another sub-block of its parent", s, e)}
					}
					cover[c] = true
				}
			}
		}
	}
	return nil
}

// CanonicalPermutation returns the row order that sorts columns given in
// any order into canonical order: perm[n] is the input row that goes to row
// n (parent ascending, then sidx ascending; stable for equal keys).
func CanonicalPermutation(g *Geometry, parent []uint32, start []uint8) []int {
	perm := make([]int, len(parent))
	for n := range perm {
		perm[n] = n
	}
	key := func(r int) uint64 {
		var s [3]uint8
		copy(s[:], start[3*r:3*r+3])
		return uint64(parent[r])*uint64(g.SubCells()) + uint64(g.Sidx(s))
	}
	sort.SliceStable(perm, func(a, b int) bool { return key(perm[a]) < key(perm[b]) })
	return perm
}

// Geometry returns the model geometry.
func (b *Blocks) Geometry() *Geometry { return b.g }

// NumRows returns the number of rows.
func (b *Blocks) NumRows() int64 { return b.n }

// Whole reports whether every parent is whole (one row per parent, no
// columns held).
func (b *Blocks) Whole() bool { return b.whole }

// Columns returns the columns NewBlocks was given (parent, start, end); nil
// slices when the rows are WholeBlocks.
func (b *Blocks) Columns() (parent []uint32, start, end []uint8) {
	return b.parent, b.start, b.end
}

// Parent returns the flat parent index of a row.
func (b *Blocks) Parent(row int64) int64 {
	if b.whole {
		return row
	}
	return int64(b.parent[row])
}

// Corners returns the sub-cell corners of a row: start inclusive, end
// exclusive ((0,0,0) → n_subblocks_per_parent for a whole parent).
func (b *Blocks) Corners(row int64) (start, end [3]uint8) {
	if b.whole {
		return b.g.WholeCorners()
	}
	return [3]uint8{b.start[3*row], b.start[3*row+1], b.start[3*row+2]},
		[3]uint8{b.end[3*row], b.end[3*row+1], b.end[3*row+2]}
}

// Identity returns the parent indices and sub-block identity (sidx and
// corners) of a row.
func (b *Blocks) Identity(row int64) (i, j, k uint32, sub SubID) {
	i, j, k = b.g.ParentIJK(b.Parent(row))
	s, e := b.Corners(row)
	return i, j, k, SubID{Sidx: b.g.Sidx(s), Start: s, End: e, HasCorners: true}
}

// Centroid returns the world centroid of a row.
func (b *Blocks) Centroid(row int64) [3]float64 {
	i, j, k := b.g.ParentIJK(b.Parent(row))
	if b.whole {
		return b.g.ParentCentroid(i, j, k)
	}
	s, e := b.Corners(row)
	return b.g.SubCentroid(i, j, k, s, e)
}

// Extent returns the extent (dx, dy, dz) of a row along the model axes.
func (b *Blocks) Extent(row int64) [3]float64 {
	if b.whole {
		return b.g.size
	}
	s, e := b.Corners(row)
	return b.g.SubExtent(s, e)
}

// Locate returns the row of parent (i, j, k) and sub-block sub: O(1) for
// whole parents, O(log rows) otherwise, without allocating. A regular
// model's (and a whole parent's) only row has sidx 0; a sub-block given by
// corners matches only when both corners match. ok is false when there is
// no such row.
func (b *Blocks) Locate(i, j, k uint32, sub SubID) (int64, bool) {
	g := b.g
	if !g.ContainsParent(i, j, k) {
		return 0, false
	}
	p := g.ParentIndex(i, j, k)
	sidx := sub.Sidx
	if sub.HasCorners {
		for a := 0; a < 3; a++ {
			if int(sub.End[a]) > g.nsub[a] {
				return 0, false
			}
		}
		sidx = g.Sidx(sub.Start)
	}
	var row int64
	if b.whole {
		if sidx != 0 {
			return 0, false
		}
		row = p
	} else {
		cells := uint64(g.SubCells())
		key := uint64(p)*cells + uint64(sidx)
		lo, hi := int64(0), b.n
		for lo < hi {
			r := lo + (hi-lo)/2
			var s [3]uint8
			copy(s[:], b.start[3*r:3*r+3])
			if uint64(b.parent[r])*cells+uint64(g.Sidx(s)) < key {
				lo = r + 1
			} else {
				hi = r
			}
		}
		if lo == b.n || uint64(b.parent[lo]) != uint64(p) {
			return 0, false
		}
		var s [3]uint8
		copy(s[:], b.start[3*lo:3*lo+3])
		if g.Sidx(s) != sidx {
			return 0, false
		}
		row = lo
	}
	if sub.HasCorners {
		s, e := b.Corners(row)
		if s != sub.Start || e != sub.End {
			return 0, false
		}
	}
	return row, true
}

// LocateNear is Locate, with the same result, for identities that mostly
// come in row order (an update file, a query's output): it tries row hint
// (the row after the previous identity's, say) before the binary search.
func (b *Blocks) LocateNear(hint int64, i, j, k uint32, sub SubID) (int64, bool) {
	g := b.g
	if b.whole || hint < 0 || hint >= b.n || !g.ContainsParent(i, j, k) || int64(b.parent[hint]) != g.ParentIndex(i, j, k) {
		return b.Locate(i, j, k, sub)
	}
	s := [3]uint8{b.start[3*hint], b.start[3*hint+1], b.start[3*hint+2]}
	sidx := sub.Sidx
	if sub.HasCorners {
		if sub.Start != s {
			return b.Locate(i, j, k, sub)
		}
		sidx = g.Sidx(sub.Start)
	}
	if g.Sidx(s) != sidx {
		return b.Locate(i, j, k, sub)
	}
	// Rows are unique by parent and sidx: Locate would find hint.
	if sub.HasCorners {
		if e := [3]uint8{b.end[3*hint], b.end[3*hint+1], b.end[3*hint+2]}; e != sub.End {
			return 0, false
		}
	}
	return hint, true
}

// LocateXYZ returns the row whose centroid is (x, y, z) and, for the
// sub-blocked kinds, whose extent is (dx, dy, dz), each within
// MatchTolerance of the (sub-)block size per axis (ResolveXYZ, then
// Locate), and the row's parent indices. A regular model ignores dx, dy,
// dz.
func (b *Blocks) LocateXYZ(x, y, z, dx, dy, dz float64) (int64, [3]uint32, bool) {
	i, j, k, s, e, ok := b.g.ResolveXYZ(x, y, z, dx, dy, dz)
	if !ok {
		return 0, [3]uint32{}, false
	}
	sub := CornersID(s, e)
	if b.g.kind == Regular {
		sub = SubID{}
	}
	row, ok := b.Locate(i, j, k, sub)
	if !ok {
		return 0, [3]uint32{}, false
	}
	return row, [3]uint32{i, j, k}, true
}
