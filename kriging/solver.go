package kriging

import (
	"cmp"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
)

// negativeTolerance is the relative size of a negative kriging variance that
// is accepted as rounding: variances in [−1e-9·V, 0), V the prior variance
// scale of the system, are set to 0 silently; more negative values are also
// set to 0 but counted in Stats.NegativeVariances.
const negativeTolerance = 1e-9

// flushEvery is the number of Solve calls after which a Solver adds its
// counters to its Kriger's Stats.
const flushEvery = 256

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
	k      *Kriger
	cov    *covModel
	search *neighbor.Searcher
	nsub   int

	nb    []int32 // current neighbours: sorted, or in search order (sliding)
	spare []int32 // the other buffer of nb
	fresh []int32 // neighbours not in the previous set
	mark  []uint32
	gen   uint32
	cache *factorCache
	cur   *factor // factorisation of nb (valid after a solved locate)

	// sliding Solvers (Estimate's) derive factorisations from the previous
	// target's by updates (update.go) and keep y and u in them.
	sliding bool
	pk, bk  []float64       // scratch of deleteRow
	unit    []float64       // ones
	removed []int           // rows of the previous factor whose datum left
	search3 geostat.Matrix3 // the search ellipsoid's anisotropy
	ahead   [3]float64      // a target a few steps ahead (see exitOrder)
	score   []float64       // scratch of exitOrder
	pending int             // rows of s.cur staged by slide, to complete
	yv      []float64       // scratch of complete
	vecs    [][]float64     // scratch of complete

	rhs    []float64 // nsub × n right-hand sides
	sub    []float64 // nsub × n sub-point weights
	w      []float64 // n block weights
	kbar   []float64 // n mean right-hand side
	r2     []float64 // n squared distances (scratch of the covariance rows)
	centre []float64 // target centre in each structure's space, 3 per structure

	meanDist float64
	sol      Solution

	calls int
	local Stats
}

// NewSolver returns a Solver with scratch space for the largest system,
// m = min(MaxSamples, number of merged data) neighbours: O(m) floats per
// block sub-point, one uint32 per merged datum, and a cache of
// Params.FactorCache recent factorisations (m(m+1)/2 + O(m) floats each, at
// most 8 MiB), filled as targets are solved.
func (k *Kriger) NewSolver() *Solver { return k.newSolver(false) }

// newSolver returns a Solver; a sliding one (for Estimate) updates
// factorisations from target to target (see update.go).
func (k *Kriger) newSolver(sliding bool) *Solver {
	// No system is larger than the number of data.
	m := min(k.p.Search.MaxSamples, len(k.coords)/3)
	ns := k.nsub
	ordinary := k.p.Method == Ordinary
	vecs := vectors{ones: ordinary && !sliding, y: sliding && k.values != nil, u: sliding && ordinary}
	return &Solver{
		sliding: sliding,
		pk:      make([]float64, m),
		bk:      make([]float64, m),
		unit:    ones(m),
		removed: make([]int, 0, m),
		score:   make([]float64, m),
		yv:      make([]float64, maxStaged),
		vecs:    make([][]float64, 0, maxStaged+1),
		search3: k.search3,
		k:       k,
		cov:     k.cov,
		search:  k.index.NewSearcher(),
		nsub:    ns,
		nb:      make([]int32, 0, m),
		spare:   make([]int32, 0, m),
		fresh:   make([]int32, 0, m),
		mark:    make([]uint32, len(k.coords)/3),
		cache:   newFactorCache(m, vecs, cmp.Or(k.p.FactorCache, DefaultFactorCache)),
		rhs:     make([]float64, ns*m),
		sub:     make([]float64, ns*m),
		w:       make([]float64, m),
		kbar:    make([]float64, m),
		r2:      make([]float64, m),
		centre:  make([]float64, 3*len(k.cov.st)),
	}
}

// status is the outcome of locating a target.
type status int

const (
	unestimated status = iota // too few neighbours, or a failed factorisation
	noData                    // simple kriging without neighbours: the mean
	solved                    // a factorised system with n ≥ 1 neighbours
)

// locate searches the neighbours of (x, y, z), puts them in index order and
// makes the factorisation of their kriging matrix current (s.cur): the
// current one when the set is unchanged, else a cached one of the same set,
// else a new one. It also transforms the target centre into each
// structure's space.
func (s *Solver) locate(x, y, z float64) (status, bool) {
	s.calls++
	if s.calls%flushEvery == 0 {
		s.Flush()
	}
	if math.IsNaN(x+y+z) || math.IsInf(x+y+z, 0) {
		s.local.Unestimated++
		return unestimated, false
	}
	idx, dist := s.search.SearchSet(x, y, z)
	n := len(idx)
	if n < s.k.minimum {
		s.local.Unestimated++
		return unestimated, false
	}
	for st := range s.cov.st {
		s.centre[3*st], s.centre[3*st+1], s.centre[3*st+2] = s.cov.transform(st, x, y, z)
	}
	if n == 0 {
		s.nb = s.nb[:0]
		if s.sliding {
			s.track(nil) // no datum carries the marks of the set before
		}
		s.cur = nil
		s.meanDist = math.NaN()
		return noData, false
	}
	var h uint64
	var same bool
	if s.sliding {
		h, same = s.track(idx)
	} else {
		s.canonical(idx)
		same = s.cur != nil && slices.Equal(s.nb, s.cur.nb)
	}
	s.meanDist = meanDistance(dist)
	s.local.Systems++
	if same && s.cur != nil && s.cur.used {
		s.cur.ref = true
		s.local.Reused++
		return solved, true
	}
	var f *factor
	if s.sliding {
		f = s.cache.lookupMarked(h, n, s.mark, s.gen+1)
	} else {
		h = hashSet(s.nb)
		f = s.cache.lookup(s.nb, h)
	}
	if f != nil {
		s.cur = f
		s.local.Reused++
		return solved, true
	}
	// s.cur, when set, is the factorisation of the previous target's set:
	// the marks of track tell which of its data left.
	from := s.cur
	if s.sliding && from != nil && s.worthSliding(from) {
		// The update is done in place: copying the factorisation to keep
		// the previous set's would cost more than the reuse it brings. The
		// appended rows are solved with the target's right-hand side
		// (complete).
		v := from.slot
		s.cache.unlink(v)
		s.slide(from)
		s.cache.insert(v, nil, h)
		s.cur = from
		s.local.Updated++
		return solved, false
	}
	v, f := s.cache.victim()
	if !s.factorise(f) {
		s.unfactorisable()
		return unestimated, false
	}
	if s.sliding {
		s.cache.insert(v, nil, h)
	} else {
		s.cache.insert(v, s.nb, h)
	}
	s.cur = f
	return solved, false
}

// track replaces s.nb, the previous target's neighbours, by the neighbours
// idx in the search's order (a sliding Solver's systems do not depend on
// the order of the set: see exitOrder). It marks the data of the new set
// with s.gen+1 (in both sets) or s.gen+2 (arrived), s.gen being advanced by
// 3: the previous call's marks, which the data of the previous set still
// carry, are then s.gen−2 and s.gen−1. It lists the arrived data in
// s.fresh and returns the set's order-independent hash (the sum of its
// data's keys) and whether the set is the previous one.
func (s *Solver) track(idx []int32) (uint64, bool) {
	if s.gen > math.MaxUint32-6 { // keep gen+5 from wrapping to the cleared 0
		// Mark the previous set afresh as the previous call's.
		clear(s.mark)
		s.gen = 0
		for _, j := range s.nb {
			s.mark[j] = 1
		}
	}
	prev := s.gen + 1 // the previous call's marks: prev and prev+1
	s.gen += 3
	inBoth := s.gen + 1
	mark, keys := s.mark, s.k.setKeys
	fresh := s.fresh[:0]
	var h uint64
	for _, i := range idx {
		h += keys[i]
		if mark[i]-prev <= 1 {
			mark[i] = inBoth
		} else {
			mark[i] = inBoth + 1
			fresh = append(fresh, i)
		}
	}
	same := len(fresh) == 0 && len(idx) == len(s.nb)
	s.fresh = fresh
	s.nb = append(s.nb[:0], idx...)
	return h, same
}

// distanceUnit is the resolution of meanDistance's fixed-point sum.
const distanceUnit = 1 << 43

// meanDistance returns the mean of the neighbour distances d, the same
// whatever their order: each (at most 1 + neighbor.RadiusTolerance) is
// rounded to a multiple of 2⁻⁴³ (an error below 6e-14) and they are summed
// exactly as integers, which cannot overflow for the at most 2²⁰ neighbours
// neighbor.Params allows.
func meanDistance(d []float64) float64 {
	var sum uint64
	for _, v := range d {
		sum += uint64(int64(v*distanceUnit + 0.5)) // int64 converts in one instruction
	}
	return float64(sum) / distanceUnit / float64(len(d))
}

// unfactorisable records that the current target's system could not be
// factorised even with regularisation: the target is unestimated.
func (s *Solver) unfactorisable() {
	s.cur = nil
	s.local.Systems--
	s.local.Failed++
	s.local.Unestimated++
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

// factorise builds and factorises the kriging matrix of s.nb into f.
//
// Stationary models: K itself. Intrinsic models (a linear structure, only
// with ordinary kriging): K + shift·11ᵀ, which leaves the ordinary kriging
// weights, multiplier and variance unchanged (the constant is absorbed by
// the unbiasedness constraint) and is positive definite for a large enough
// shift because the generalised covariance is conditionally positive
// definite; the shift starts at 2·max|K_ij| + Σ c_linear and grows ×8 up to
// three times. A matrix that is still not factorisable is regularised with a
// ridge δ·I, δ = 1e-9·K_ii growing ×10 (counted in Stats.Regularised); with
// δ ≥ 10·n·K_ii it is diagonally dominant, so only non-finite entries make
// the factorisation fail. The result depends on the neighbour set only.
func (s *Solver) factorise(f *factor) bool {
	f.ord = append(f.ord[:0], s.nb...)
	f.updates, f.swept = 0, 0
	if s.sliding {
		s.exitOrder(f.ord)
	}
	nb := f.ord
	n := len(nb)
	cov := s.cov
	assemble := func(shift, ridge float64) { cov.assemble(f.l, nb, shift, ridge, s.r2) }
	if s.sliding && cov.table != nil {
		assemble = func(shift, ridge float64) { cov.assembleTable(f.l, nb, shift, ridge) }
	}
	shift := 0.0
	if cov.intrinsic {
		assemble(0, 0)
		shift = 2*maxAbsLower(f.l, n) + cov.linearSum
	}
	ridge := 0.0
	shiftTries := 0
	for {
		assemble(shift, ridge)
		if cholesky(f.l, n, f.invd) {
			break
		}
		if cov.intrinsic && shiftTries < 3 {
			shift *= 8
			shiftTries++
			continue
		}
		scale := cov.pointVar + shift
		if !(scale > 0) {
			return false // cannot happen: contributions are positive
		}
		if ridge == 0 {
			ridge = 1e-9 * scale
			s.local.Regularised++
		} else {
			ridge *= 10
		}
		if !(ridge <= 10*float64(n)*scale) {
			return false
		}
	}
	f.shift, f.ridge = shift, ridge
	if s.sliding {
		s.startVectors(f)
	} else if s.k.p.Method == Ordinary {
		b := f.ones[:n]
		for i := range b {
			b[i] = 1
		}
		solveCholesky(f.l, n, f.invd, b)
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
	axpy(-mu, s.cur.ones[:len(a)], a)
	return mu
}

// clampVariance applies the negative-variance rule to v with prior scale
// prior.
func (s *Solver) clampVariance(v, prior float64) float64 {
	if v <= 0 { // also −0 to +0
		if v < -negativeTolerance*math.Abs(prior) {
			s.local.NegativeVariances++
		}
		return 0
	}
	return v
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
		solveCholesky(f.l, n, f.invd, row)
		if s.k.p.Method == Ordinary {
			mu += s.ordinary(row)
		}
		axpy(inv, row, w)
		axpy(inv, s.rhs[p*n:p*n+n], kbar)
	}
	mu *= inv
	prior := s.cov.blockVar + f.shift
	v := prior - dot(w, kbar) - mu
	s.sol.Neighbors = s.nb
	s.sol.SubWeights = s.sub[:np*n]
	s.sol.Weights = w
	s.sol.Variance = s.clampVariance(v, prior)
	s.sol.Lagrange = mu
	return &s.sol, true
}

// estimateOne kriges target t of targets for Estimate (a sliding Solver),
// from the block-average right-hand side k̄ and the vectors y and u of the
// factor (see update.go): one forward substitution v = L⁻¹k̄ per target. It
// writes the requested outputs at index t. end is the end of the chunk of
// targets the Solver goes through (see exitOrder).
func (s *Solver) estimateOne(targets []float64, t, end int, out *Output) {
	k := s.k
	a := 3 * min(t+aheadSteps, end-1)
	s.ahead = [3]float64{targets[a], targets[a+1], targets[a+2]}
	st, _ := s.locate(targets[3*t], targets[3*t+1], targets[3*t+2])
	switch st {
	case unestimated:
		out.set(t, math.NaN(), math.NaN(), 0, math.NaN(), math.NaN(), math.NaN())
		return
	case noData:
		out.set(t, k.p.Mean, s.cov.blockVar, 0, math.NaN(), math.NaN(), 0)
		return
	}
	f := s.cur
	n := len(f.ord)
	v := s.w[:n]
	s.cov.rhs(v, f.ord, s.centre, s.nsub, true, f.shift, s.r2)
	switch {
	case s.pending == 0:
		forward(f.l, n, s.unit, v)
	case !s.complete(f, v):
		// An appended datum is (nearly) redundant: factorise afresh, with
		// regularisation if need be.
		s.local.Updated--
		if !s.factorise(f) {
			s.cache.unlink(f.slot)
			s.unfactorisable()
			out.set(t, math.NaN(), math.NaN(), 0, math.NaN(), math.NaN(), math.NaN())
			return
		}
		s.cov.rhs(v, f.ord, s.centre, s.nsub, true, f.shift, s.r2)
		forward(f.l, n, s.unit, v)
	}
	// λᵀk̄ = vᵀD⁻¹v (simple); λ = K⁻¹(k̄ − μ1), λᵀk̄ = vᵀD⁻¹v − μ vᵀu
	// (ordinary). vᵀD⁻¹v and the estimate's vᵀy in one pass.
	lk, mu, uv, e := 0.0, 0.0, 0.0, 0.0
	iv := f.invd[:len(v)]
	if out.Estimate != nil {
		y := f.y[:len(v)]
		for a, x := range v {
			lk += x * x * iv[a]
			e += x * y[a]
		}
	} else {
		for a, x := range v {
			lk += x * x * iv[a]
		}
	}
	ordinary := k.p.Method == Ordinary
	if ordinary {
		uv = dot(f.u[:n], v)
		mu = (uv - 1) / f.sumOnes
		lk -= mu * uv
	}
	prior := s.cov.blockVar + f.shift
	variance := s.clampVariance(prior-lk-mu, prior)
	est := math.NaN()
	if out.Estimate != nil {
		if ordinary {
			est = e - mu*f.uy
		} else {
			est = k.p.Mean + e
		}
	}
	slope, eff := math.NaN(), math.NaN()
	if !s.cov.intrinsic {
		// Slope = Cov(Z_V, Z*)/Var(Z*) = λᵀk/λᵀKλ with λᵀKλ = λᵀk − μ.
		if d := lk - mu; d != 0 {
			slope = lk / d
		}
		if bv := s.cov.blockVar; bv > 0 {
			eff = (bv - variance) / bv
		}
	}
	out.set(t, est, variance, float64(n), s.meanDist, slope, eff)
}

// Flush adds the Solver's counters to its Kriger's Stats. Solve flushes
// every 256 calls by itself; call Flush when done with a Solver for exact
// totals.
func (s *Solver) Flush() {
	k := s.k
	l := &s.local
	k.systems.Add(l.Systems)
	k.reused.Add(l.Reused)
	k.updated.Add(l.Updated)
	k.regularised.Add(l.Regularised)
	k.unestimated.Add(l.Unestimated)
	k.negative.Add(l.NegativeVariances)
	k.failed.Add(l.Failed)
	*l = Stats{}
}

// resetReuse forgets the cached factorisations, so that reuse counts do not
// depend on which targets this Solver handled before (Estimate calls it at
// the start of every chunk of targets).
func (s *Solver) resetReuse() {
	s.cache.reset()
	s.cur = nil
}
