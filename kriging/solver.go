package kriging

import (
	"cmp"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/internal/linalg"
)

// Solution is the kriging system of one target: neighbours and weights. It
// is owned by the Solver that returned it and valid until its next Solve.
type Solution struct {
	// Neighbors are the merged-data indices (see Kriger.Data) of the n
	// neighbours, in increasing order.
	Neighbors []int32
	// SubWeights are the weights of each block sub-point, NSub × n
	// row-major (point kriging: NSub = 1, equal to Weights).
	SubWeights []float64
	// Weights are the block (or point) weights: the mean of the SubWeights
	// rows.
	Weights []float64
	// Variance is the kriging variance of the point or block, clamped ≥ 0.
	Variance float64
	// Lagrange is the ordinary kriging multiplier μ of the block (mean of
	// the sub-points' multipliers; 0 for simple kriging), in the convention
	// K·λ + μ·1 = k.
	Lagrange float64
	// Reused reports that a factorisation computed by an earlier Solve of
	// this Solver for the same neighbour set was reused.
	Reused bool
}

// Solver solves kriging systems for one goroutine. It keeps the
// factorisations of recent neighbour sets (Params.FactorCache of them,
// looked up by set, replaced in about least recently used order): a target whose
// neighbours were met before reuses the factorisation, the previous
// target's most often and, on grids, a cell of the previous row's. Since the
// neighbours are put in increasing index order before the system is built
// and a factorisation depends on the set alone, the weights are a function
// of the neighbour set and the target only, bit for bit, whatever the
// Solver solved before.
type Solver struct {
	targetSearch
	setState // nb increasing (see canonical)

	spare []int32 // the other buffer of nb
	cache *factorCache[cholFactor]
	cur   *cholFactor // factorisation of nb (valid after a solved locate)
	slot  int32       // cur's cache entry

	rhs  []float64 // nsub × n right-hand sides
	sub  []float64 // nsub × n sub-point weights
	w    []float64 // n block weights
	kbar []float64 // n mean right-hand side
	sol  Solution
}

// cholFactor is the Cholesky factorisation of the kriging matrix of one
// neighbour set, a function of the set alone.
type cholFactor struct {
	nb      []int32   // neighbour set, increasing: the rows of l
	l       []float64 // packed Cholesky factor of K (+ shift·11ᵀ + ridge·I)
	invd    []float64 // 1/L_jj
	ones    []float64 // K⁻¹1 (ordinary kriging)
	sumOnes float64   // 1ᵀK⁻¹1 (ordinary kriging)
	shift   float64   // constant added to the generalised covariance (intrinsic models)
}

// NewSolver returns a Solver with scratch space for the largest system,
// m = min(MaxSamples, number of merged data) neighbours: O(m) floats per
// block sub-point, one uint32 per merged datum, and a cache of
// Params.FactorCache recent factorisations (m(m+1)/2 + O(m) floats each, at
// most 8 MiB), filled as targets are solved.
func (k *Kriger) NewSolver() *Solver {
	m := k.maxSystem()
	ns := k.nsub
	ordinary := k.p.Method == Ordinary
	extra := 0
	if ordinary {
		extra = 1
	}
	capacity := cacheCapacity(factorBytes(m, extra), cmp.Or(k.p.FactorCache, DefaultFactorCache))
	return &Solver{
		targetSearch: k.newTargetSearch(m),
		setState:     k.newSetState(m),
		spare:        make([]int32, 0, m),
		cache: newFactorCache(capacity, func(f *cholFactor) {
			f.nb = make([]int32, 0, m)
			f.l, f.invd = newPacked(m)
			if ordinary {
				f.ones = make([]float64, m)
			}
		}),
		rhs:  make([]float64, ns*m),
		sub:  make([]float64, ns*m),
		w:    make([]float64, m),
		kbar: make([]float64, m),
	}
}

// locate searches the neighbours of (x, y, z), puts them in index order and
// makes the factorisation of their kriging matrix current (s.cur): the
// current one when the set is unchanged, else a cached one of the same set,
// else a new one. It also transforms the target centre into each
// structure's space.
func (s *Solver) locate(x, y, z float64) (status, bool) {
	idx, st := s.find(x, y, z)
	switch st {
	case unestimated:
		return unestimated, false
	case noData:
		s.nb = s.nb[:0]
		s.cur = nil
		return noData, false
	}
	s.canonical(idx)
	if s.cur != nil && slices.Equal(s.nb, s.cur.nb) {
		s.cache.touch(s.slot)
		s.local.Systems++
		s.local.Reused++
		return solved, true
	}
	h := hashSet(s.nb)
	if v, f := s.cache.lookup(h, s.sameSet); f != nil {
		s.cur, s.slot = f, v
		s.local.Systems++
		s.local.Reused++
		return solved, true
	}
	v, f := s.cache.victim()
	if !s.factorise(f) {
		s.cur = nil
		s.failed()
		return unestimated, false
	}
	s.cache.insert(v, h)
	s.cur, s.slot = f, v
	s.local.Systems++
	return solved, false
}

// sameSet reports whether f is the factorisation of s.nb.
func (s *Solver) sameSet(f *cholFactor) bool { return slices.Equal(f.nb, s.nb) }

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

// canonical replaces s.nb, the previous target's neighbours in increasing
// order, by the neighbours idx in increasing order. Consecutive targets
// share most neighbours, so it merges the previous list (minus the
// neighbours that left, found with generation marks per datum) with the
// few new ones sorted by insertion.
func (s *Solver) canonical(idx []int32) {
	if s.gen > math.MaxUint32-4 { // keep gen+3 from wrapping to the cleared 0
		clear(s.mark)
		s.gen = 0
	}
	s.gen += 2
	inPrev, inBoth := s.gen, s.gen+1
	mark := s.mark
	for _, j := range s.nb {
		mark[j] = inPrev
	}
	fresh := s.fresh[:0]
	for _, i := range idx {
		if mark[i] == inPrev {
			mark[i] = inBoth
		} else {
			fresh = append(fresh, i)
		}
	}
	for a := 1; a < len(fresh); a++ {
		v := fresh[a]
		b := a - 1
		for ; b >= 0 && fresh[b] > v; b-- {
			fresh[b+1] = fresh[b]
		}
		fresh[b+1] = v
	}
	out := s.spare[:0]
	f := 0
	for _, j := range s.nb {
		if mark[j] != inBoth {
			continue
		}
		for f < len(fresh) && fresh[f] < j {
			out = append(out, fresh[f])
			f++
		}
		out = append(out, j)
	}
	out = append(out, fresh[f:]...)
	s.fresh = fresh
	s.spare, s.nb = s.nb, out
}

// factorise builds and factorises the kriging matrix of s.nb into f (see
// targetSearch.factorise) and, for ordinary kriging, solves K⁻¹1. The
// result depends on the neighbour set only.
func (s *Solver) factorise(f *cholFactor) bool {
	f.nb = append(f.nb[:0], s.nb...)
	n := len(f.nb)
	shift, _, ok := s.targetSearch.factorise(f.l, f.invd, f.nb, false)
	if !ok {
		return false
	}
	f.shift = shift
	if s.k.p.Method == Ordinary {
		b := f.ones[:n]
		for i := range b {
			b[i] = 1
		}
		linalg.SolveCholesky(f.l, n, f.invd, b)
		sum := 0.0
		for _, v := range b {
			sum += v
		}
		f.sumOnes = sum
	}
	return true
}

// ordinary turns a = K⁻¹k (in place) into the ordinary kriging weights
// λ = a − μ·b, b = K⁻¹1, and returns μ = (1ᵀa − 1)/(1ᵀb).
func (s *Solver) ordinary(a []float64) float64 {
	sum := 0.0
	for _, v := range a {
		sum += v
	}
	mu := (sum - 1) / s.cur.sumOnes
	linalg.Axpy(-mu, s.cur.ones[:len(a)], a)
	return mu
}

// Solve kriges the target (x, y, z), the block centre for block kriging:
// all sub-points share the neighbours found around it and one
// factorisation. ok is false when the target has fewer than MinSamples
// neighbours (ordinary kriging: fewer than max(1, MinSamples)), when a
// coordinate is not finite or, exceptionally, when the system cannot be
// factorised; sol then has no neighbours and a NaN variance. Simple kriging
// with MinSamples = 0 and no neighbour is ok with no weights: the estimate
// is the mean and the variance the prior variance.
func (s *Solver) Solve(x, y, z float64) (sol *Solution, ok bool) {
	st, reused := s.locate(x, y, z)
	s.sol = Solution{Reused: reused}
	switch st {
	case unestimated:
		s.sol.Variance = math.NaN()
		return &s.sol, false
	case noData:
		s.sol.Neighbors = s.nb[:0]
		s.sol.SubWeights = s.sub[:0]
		s.sol.Weights = s.w[:0]
		s.sol.Variance = s.cov.blockVar
		return &s.sol, true
	}
	n, np := len(s.nb), s.nsub
	f := s.cur
	s.cov.rhs(s.rhs, s.nb, s.centre, np, false, f.shift, s.r2)
	copy(s.sub[:np*n], s.rhs[:np*n])
	w, kbar := s.w[:n], s.kbar[:n]
	clear(w)
	clear(kbar)
	mu := 0.0
	inv := 1 / float64(np)
	for p := 0; p < np; p++ {
		row := s.sub[p*n : p*n+n]
		linalg.SolveCholesky(f.l, n, f.invd, row)
		if s.k.p.Method == Ordinary {
			mu += s.ordinary(row)
		}
		linalg.Axpy(inv, row, w)
		linalg.Axpy(inv, s.rhs[p*n:p*n+n], kbar)
	}
	mu *= inv
	prior := s.cov.blockVar + f.shift
	v := prior - linalg.Dot(w, kbar) - mu
	s.sol.Neighbors = s.nb
	s.sol.SubWeights = s.sub[:np*n]
	s.sol.Weights = w
	s.sol.Variance = s.clampVariance(v, prior)
	s.sol.Lagrange = mu
	return &s.sol, true
}

// Flush adds the Solver's counters to its Kriger's Stats. Solve flushes
// every 256 calls by itself; call Flush when done with a Solver for exact
// totals.
func (s *Solver) Flush() { s.flush() }
