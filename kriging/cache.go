package kriging

import "github.com/geostat-engine/geostat/internal/linalg"

// factorCacheBudget bounds the memory of an engine's factorisation cache:
// at most this many bytes of entries, whatever Params.FactorCache asks. It
// binds only for large systems (from about 90 neighbours at the default 256
// entries) and keeps one cache per core within half a GiB on 64 cores.
const factorCacheBudget = 8 << 20

// factorBytes is the size charged to one cache entry of a system of at
// most m neighbours carrying extra vectors of length m beside the factor:
// the packed factor, 1/D, the neighbour lists and the bookkeeping.
func factorBytes(m, extra int) int { return 8*linalg.PackedLen(m) + 16*m + 96 + 8*m*extra }

// cacheCapacity returns the number of entries of entryBytes bytes a cache
// holds when want are asked for: at most factorCacheBudget bytes, at least
// one entry.
func cacheCapacity(entryBytes, want int) int {
	return max(1, min(want, factorCacheBudget/max(1, entryBytes)))
}

// cacheEntry is one slot of a factorCache: a factorisation and its links.
type cacheEntry[F any] struct {
	f     F
	hash  uint64
	next  int32 // next entry of the same hash bucket, −1 at the end
	used  bool  // holds a valid factorisation
	ref   bool  // hit since the clock hand last passed (second chance)
	ready bool  // the buffers of f are allocated
}

// factorCache keeps recently used factorisations of one engine (a Solver
// or Estimate's slider), looked up by a hash of their neighbour set
// through a chained hash table and replaced by the clock (second chance)
// approximation of least-recently-used order. The entries' buffers are
// allocated (by alloc) on first use and then recycled. The cache does not
// know what a factorisation is: its engine hashes the sets and tells
// whether an entry of the right hash holds the set it looks for.
type factorCache[F any] struct {
	slots []cacheEntry[F]
	heads []int32 // hash bucket → first entry, −1 when empty
	mask  uint64
	clock int        // next slot to replace
	alloc func(f *F) // allocates the buffers of an entry
}

// newFactorCache returns an empty cache of capacity entries.
func newFactorCache[F any](capacity int, alloc func(f *F)) *factorCache[F] {
	buckets := 1
	for buckets < 2*capacity {
		buckets *= 2
	}
	c := &factorCache[F]{slots: make([]cacheEntry[F], capacity), heads: make([]int32, buckets),
		mask: uint64(buckets - 1), alloc: alloc}
	c.reset()
	return c
}

// reset forgets every entry (the buffers are kept).
func (c *factorCache[F]) reset() {
	for i := range c.heads {
		c.heads[i] = -1
	}
	for i := range c.slots {
		c.slots[i].used, c.slots[i].ref = false, false
	}
	c.clock = 0
}

// lookup returns the entry of hash h for which match is true, and its
// index, or −1 and nil.
func (c *factorCache[F]) lookup(h uint64, match func(f *F) bool) (int32, *F) {
	for e := c.heads[h&c.mask]; e >= 0; {
		s := &c.slots[e]
		if s.hash == h && match(&s.f) {
			s.ref = true
			return e, &s.f
		}
		e = s.next
	}
	return -1, nil
}

// touch marks entry v as hit (it gets a second chance).
func (c *factorCache[F]) touch(v int32) { c.slots[v].ref = true }

// victim unlinks and returns the slot to fill next and its index, with its
// buffers allocated: the first slot from the clock hand on that is free or
// was not hit since the hand last passed (clearing the hit marks it
// passes). The caller fills it and calls insert, or leaves it unused.
func (c *factorCache[F]) victim() (int32, *F) {
	var v int
	for {
		v = c.clock
		c.clock++
		if c.clock == len(c.slots) {
			c.clock = 0
		}
		if s := &c.slots[v]; s.used && s.ref {
			s.ref = false
			continue
		}
		break
	}
	s := &c.slots[v]
	c.unlink(int32(v))
	if !s.ready {
		c.alloc(&s.f)
		s.ready = true
	}
	return int32(v), &s.f
}

// unlink removes entry v, if used, from its hash bucket and marks it
// unused; its contents are kept.
func (c *factorCache[F]) unlink(v int32) {
	s := &c.slots[v]
	if !s.used {
		return
	}
	b := s.hash & c.mask
	if c.heads[b] == v {
		c.heads[b] = s.next
	} else {
		for e := c.heads[b]; e >= 0; e = c.slots[e].next {
			if c.slots[e].next == v {
				c.slots[e].next = s.next
				break
			}
		}
	}
	s.used = false
}

// insert links the filled entry v under hash h.
func (c *factorCache[F]) insert(v int32, h uint64) {
	s := &c.slots[v]
	s.hash = h
	b := h & c.mask
	s.next = c.heads[b]
	c.heads[b] = v
	s.used, s.ref = true, false
}
