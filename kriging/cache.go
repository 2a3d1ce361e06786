package kriging

import "slices"

// factorCacheBudget bounds the memory of a Solver's factorisation cache:
// at most this many bytes of entries, whatever Params.FactorCache asks.
const factorCacheBudget = 8 << 20

// factor is one factorised kriging system: the neighbour set (increasing
// merged-data indices) and what is derived from it alone.
type factor struct {
	nb      []int32   // neighbour set, sorted
	ord     []int32   // the neighbours in the order of the rows of l
	l       []float64 // packed factor of K (+ shift·11ᵀ + ridge·I): Cholesky (Solve) or L D Lᵀ (Estimate)
	invd    []float64 // 1/L_jj (Solve) or 1/D_j (Estimate)
	ones    []float64 // K⁻¹1 (ordinary kriging, Solve)
	sumOnes float64   // 1ᵀK⁻¹1
	shift   float64   // constant added to the generalised covariance (intrinsic models)
	ridge   float64   // ridge added to the diagonal (0 unless regularised)

	// Estimate only (see update.go).
	y       []float64 // D⁻¹L⁻¹(z − m) (simple) or D⁻¹L⁻¹z (ordinary), when the values are known
	u       []float64 // D⁻¹L⁻¹1 (ordinary)
	uy      float64   // 1ᵀK⁻¹z
	updates int       // successive updates since the last fresh factorisation
	swept   int       // deletion work since the last fresh factorisation (see worthSliding)

	hash uint64
	slot int32 // index of the entry in the cache
	next int32 // next entry of the same hash bucket, −1 at the end
	used bool  // holds a valid factorisation
	ref  bool  // hit since the clock hand last passed (second chance)
}

// factorCache keeps recently used factorisations of a Solver, looked up by
// neighbour set through a chained hash table and replaced by the clock
// (second chance) approximation of least-recently-used order. For Solve
// every entry is a function of its neighbour set only, so a hit gives bit
// for bit the factorisation a fresh computation would; Estimate's entries
// may be updated ones (see update.go). Entry buffers are allocated on first
// use and then recycled.
type factorCache struct {
	slots  []factor
	heads  []int32 // hash bucket → first entry, −1 when empty
	mask   uint64
	clock  int // next slot to replace
	m      int // largest system size
	vecs   vectors
	filled int // slots with allocated buffers
}

// vectors says which vectors of length m the entries of a factorCache hold
// beside the factor.
type vectors struct {
	ones bool // factor.ones
	y    bool // factor.y
	u    bool // factor.u
}

// newFactorCache returns an empty cache of want entries (at most
// factorCacheBudget bytes, at least one entry) for systems of at most m
// neighbours.
func newFactorCache(m int, vecs vectors, want int) *factorCache {
	entry := 8*packedLen(m) + 8*m + 8*m + 96
	for _, v := range []bool{vecs.ones, vecs.y, vecs.u} {
		if v {
			entry += 8 * m
		}
	}
	capacity := max(1, min(want, factorCacheBudget/max(1, entry)))
	buckets := 1
	for buckets < 2*capacity {
		buckets *= 2
	}
	c := &factorCache{slots: make([]factor, capacity), heads: make([]int32, buckets),
		mask: uint64(buckets - 1), m: m, vecs: vecs}
	c.reset()
	return c
}

// reset forgets every entry (the buffers are kept).
func (c *factorCache) reset() {
	for i := range c.heads {
		c.heads[i] = -1
	}
	for i := range c.slots {
		c.slots[i].used, c.slots[i].ref = false, false
	}
	c.clock = 0
}

// hashSet returns a hash of the sorted neighbour set nb.
func hashSet(nb []int32) uint64 {
	h := uint64(len(nb)) * 0x9e3779b97f4a7c15
	for _, i := range nb {
		h = (h ^ uint64(uint32(i))) * 0x100000001b3
		h ^= h >> 29
	}
	h ^= h >> 32
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 31
	return h
}

// lookup returns the entry holding the factorisation of nb (hash h), or nil.
func (c *factorCache) lookup(nb []int32, h uint64) *factor {
	for e := c.heads[h&c.mask]; e >= 0; {
		f := &c.slots[e]
		if f.hash == h && slices.Equal(f.nb, nb) {
			f.ref = true
			return f
		}
		e = f.next
	}
	return nil
}

// lookupMarked returns the entry of a sliding Solver (hash h) whose set is
// the n data marked in or in+1 in mark, or nil.
func (c *factorCache) lookupMarked(h uint64, n int, mark []uint32, in uint32) *factor {
	for e := c.heads[h&c.mask]; e >= 0; {
		f := &c.slots[e]
		if f.hash == h && len(f.ord) == n && allMarked(f.ord, mark, in) {
			f.ref = true
			return f
		}
		e = f.next
	}
	return nil
}

// allMarked reports whether every datum of ord is marked in or in+1.
func allMarked(ord []int32, mark []uint32, in uint32) bool {
	for _, i := range ord {
		if mark[i]-in > 1 {
			return false
		}
	}
	return true
}

// victim unlinks and returns the slot to fill next and its index, with its
// buffers allocated: the first slot from the clock hand on that is free or
// was not hit since the hand last passed (clearing the hit marks it
// passes). The caller fills it and calls insert, or leaves it unused.
func (c *factorCache) victim() (int32, *factor) {
	var v int
	for {
		v = c.clock
		c.clock++
		if c.clock == len(c.slots) {
			c.clock = 0
		}
		if f := &c.slots[v]; f.used && f.ref {
			f.ref = false
			continue
		}
		break
	}
	f := &c.slots[v]
	c.unlink(int32(v))
	if f.l == nil {
		m := c.m
		f.slot = int32(v)
		f.nb = make([]int32, 0, m)
		f.ord = make([]int32, 0, m)
		f.l = make([]float64, packedLen(m))
		f.invd = make([]float64, m)
		if c.vecs.ones {
			f.ones = make([]float64, m)
		}
		if c.vecs.y {
			f.y = make([]float64, m)
		}
		if c.vecs.u {
			f.u = make([]float64, m)
		}
		c.filled++
	}
	return int32(v), f
}

// unlink removes entry v, if used, from its hash bucket and marks it
// unused; its contents are kept.
func (c *factorCache) unlink(v int32) {
	f := &c.slots[v]
	if !f.used {
		return
	}
	b := f.hash & c.mask
	if c.heads[b] == v {
		c.heads[b] = f.next
	} else {
		for e := c.heads[b]; e >= 0; e = c.slots[e].next {
			if c.slots[e].next == v {
				c.slots[e].next = f.next
				break
			}
		}
	}
	f.used = false
}

// insert links the filled entry v for neighbour set nb (hash h). A sliding
// Solver passes nil: its entries are found by lookupMarked, from their
// factor's rows.
func (c *factorCache) insert(v int32, nb []int32, h uint64) {
	f := &c.slots[v]
	f.nb = append(f.nb[:0], nb...)
	f.hash = h
	b := h & c.mask
	f.next = c.heads[b]
	c.heads[b] = v
	f.used, f.ref = true, false
}
