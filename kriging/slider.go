package kriging

import (
	"cmp"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/internal/linalg"
)

// Estimate's engine: factorisations updated from target to target.
//
// Consecutive targets of a grid row mostly differ by one to three
// neighbours. Estimate's slider therefore derives a target's factorisation
// from the previous target's instead of factorising anew: a neighbour that
// left is deleted from the factor, a neighbour that arrived is appended
// (linalg.DeleteRow and linalg.AppendRows, on the packed L D Lᵀ form). The rows
// of a factor are in its own order (ldlFactor.ord): a fresh factorisation
// orders them by distance to a target a few steps ahead (exitOrder), so
// that the neighbours about to leave are in the last rows, where deleting
// them is cheap.
//
// The factor also carries y = D⁻¹L⁻¹(z − m) (simple) or D⁻¹L⁻¹z
// (ordinary) and, for ordinary kriging, u = D⁻¹L⁻¹1: they are the last
// row of the factor of K bordered by the values (or ones), so deletions
// update them as one more row and appends extend them. A target then needs
// one forward substitution L v = k and no back substitution, with
// kᵀK⁻¹k = vᵀD⁻¹v, kᵀK⁻¹(z − m) = vᵀy, 1ᵀK⁻¹k = vᵀu, 1ᵀK⁻¹1 = uᵀDu and
// 1ᵀK⁻¹z = uᵀDy: simple kriging gives z* = m + vᵀy and σ² = C(0) − vᵀD⁻¹v;
// ordinary kriging μ = (vᵀu − 1)/(uᵀDu), z* = vᵀy − μ uᵀDy and
// σ² = C(0) − (vᵀD⁻¹v − μ vᵀu) − μ.
//
// An updated factor differs from a fresh factorisation of the same system by
// rounding only, but it depends on the targets before it: Estimate restarts
// every chunk of targets from fresh factorisations, so its output is still a
// function of the request alone, and a factor is refactorised after
// maxUpdates successive updates so that rounding does not build up.

// maxUpdates is the number of successive updates after which a factor is
// computed anew, a guard against the build-up of rounding (each update adds
// rounding of the order of ε·cond(K)); on grid rows the swept-work rule of
// worthSliding usually refactorises earlier.
const maxUpdates = 32

// sweepRow is the overhead of sweeping one row of a deletion, in
// multiply-adds (worthSliding's cost model): the loads, stores and the
// division of growPivot, about twenty multiply-adds' worth of time per row.
const sweepRow = 20

// maxStaged is the largest number of neighbours an update appends: each
// costs a forward substitution of O(m²), so more than 16 cost about as much
// as a fresh factorisation (O(m³/6)) of the typical 32-neighbour system.
const maxStaged = 16

// aheadSteps is how many targets ahead of the current one a slider looks to
// order the rows of its factorisations (see exitOrder): about the number of
// targets a neighbourhood of a grid row keeps most of its data for.
const aheadSteps = 4

// slider kriges Estimate's targets in order for one goroutine, updating the
// previous target's factorisation (see above). It keeps recent
// factorisations in a cache found by an order-independent hash of the set.
type slider struct {
	targetSearch
	setState // nb in the search's order (see track)

	cache   *factorCache[ldlFactor]
	cur     *ldlFactor // factorisation of nb (valid after a solved locate)
	slot    int32      // cur's cache entry
	pending int        // rows of cur staged by slide, to complete

	pk, bk  []float64       // scratch of linalg.DeleteRow
	unit    []float64       // ones
	removed []int           // rows of the previous factor whose datum left
	search3 geostat.Matrix3 // the search ellipsoid's anisotropy
	ahead   [3]float64      // a target a few steps ahead (see exitOrder)
	score   []float64       // scratch of exitOrder
	yv      []float64       // scratch of complete
	vecs    [][]float64     // scratch of complete
	v       []float64       // the target's right-hand side
}

// ldlFactor is a factorisation K = L D Lᵀ of a slider, fresh or updated,
// and the vectors carried with it.
type ldlFactor struct {
	ord   []int32   // the neighbours in the order of the rows of l
	l     []float64 // packed L D Lᵀ factor of K (+ shift·11ᵀ + ridge·I), D on the diagonal
	invd  []float64 // 1/D_j
	y     []float64 // D⁻¹L⁻¹(z − m) (simple) or D⁻¹L⁻¹z (ordinary), when the values are known
	u     []float64 // D⁻¹L⁻¹1 (ordinary)
	uu    float64   // uᵀDu = 1ᵀK⁻¹1
	uy    float64   // uᵀDy = 1ᵀK⁻¹z
	shift float64   // constant added to the generalised covariance (intrinsic models)
	ridge float64   // ridge added to the diagonal (0 unless regularised)

	updates int // successive updates since the last fresh factorisation
	swept   int // deletion work since the last fresh factorisation (see worthSliding)
}

// newSlider returns Estimate's engine with scratch space for the largest
// system.
func (k *Kriger) newSlider() *slider {
	m := k.maxSystem()
	withY, withU := k.values != nil, k.p.Method == Ordinary
	extra := 0
	for _, v := range []bool{withY, withU} {
		if v {
			extra++
		}
	}
	capacity := cacheCapacity(factorBytes(m, extra), cmp.Or(k.p.FactorCache, DefaultFactorCache))
	return &slider{
		targetSearch: k.newTargetSearch(m),
		setState:     k.newSetState(m),
		cache: newFactorCache(capacity, func(f *ldlFactor) {
			f.ord = make([]int32, 0, m)
			f.l, f.invd = newPacked(m)
			if withY {
				f.y = make([]float64, m)
			}
			if withU {
				f.u = make([]float64, m)
			}
		}),
		pk:      make([]float64, m),
		bk:      make([]float64, m),
		unit:    linalg.Ones(m),
		removed: make([]int, 0, m),
		search3: k.search3,
		score:   make([]float64, m),
		yv:      make([]float64, maxStaged),
		vecs:    make([][]float64, 0, maxStaged+1),
		v:       make([]float64, m),
	}
}

// reset forgets the cached factorisations, so that the results and the
// reuse counts do not depend on which targets this slider handled before
// (Estimate calls it at the start of every chunk of targets).
func (s *slider) reset() {
	s.cache.reset()
	s.cur = nil
}

// locate searches the neighbours of (x, y, z) and makes a factorisation
// of their kriging matrix current (s.cur): the current one when the set is
// unchanged, else a cached one of the same set, else the previous one
// updated (slid, with s.pending rows left for complete), else a new one.
func (s *slider) locate(x, y, z float64) (st status, slid bool) {
	idx, found := s.find(x, y, z)
	switch found {
	case unestimated:
		return unestimated, false
	case noData:
		s.track(nil) // no datum carries the marks of the set before
		s.cur = nil
		return noData, false
	}
	h, same := s.track(idx)
	if same && s.cur != nil {
		s.cache.touch(s.slot)
		s.local.Reused++
		return solved, false
	}
	inSet := s.gen + 1
	if v, f := s.cache.lookup(h, func(f *ldlFactor) bool { return len(f.ord) == len(idx) && allMarked(f.ord, s.mark, inSet) }); f != nil {
		s.cur, s.slot = f, v
		s.local.Reused++
		return solved, false
	}
	// s.cur, when set, is the factorisation of the previous target's set:
	// the marks of track tell which of its data left.
	if from := s.cur; from != nil && s.worthSliding(from) {
		// The update is done in place: copying the factorisation to keep
		// the previous set's would cost more than the reuse it brings. The
		// appended rows are solved with the target's right-hand side
		// (complete).
		s.cache.unlink(s.slot)
		s.slide(from)
		s.cache.insert(s.slot, h)
		return solved, true
	}
	v, f := s.cache.victim()
	if !s.factorise(f, s.nb) {
		s.cur = nil
		s.failed()
		return unestimated, false
	}
	s.cache.insert(v, h)
	s.cur, s.slot = f, v
	return solved, false
}

// track replaces s.nb, the previous target's neighbours, by the neighbours
// idx in the search's order (a slider's systems do not depend on the order
// of the set: see exitOrder). It marks the data of the new set with
// s.gen+1 (in both sets) or s.gen+2 (arrived), s.gen being advanced by 3:
// the previous call's marks, which the data of the previous set still
// carry, are then s.gen−2 and s.gen−1. It lists the arrived data in
// s.fresh and returns the set's order-independent hash (the sum of its
// data's keys) and whether the set is the previous one.
func (s *slider) track(idx []int32) (uint64, bool) {
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

// allMarked reports whether every datum of ord is marked in or in+1.
func allMarked(ord []int32, mark []uint32, in uint32) bool {
	for _, i := range ord {
		if mark[i]-in > 1 {
			return false
		}
	}
	return true
}

// factorise factorises the kriging matrix of the data nb afresh into f,
// its rows in exitOrder, in the L D Lᵀ form with the carried vectors.
func (s *slider) factorise(f *ldlFactor, nb []int32) bool {
	f.ord = append(f.ord[:0], nb...)
	f.updates, f.swept = 0, 0
	s.exitOrder(f.ord)
	shift, ridge, ok := s.targetSearch.factorise(f.l, f.invd, f.ord, s.cov.table != nil)
	if !ok {
		return false
	}
	f.shift, f.ridge = shift, ridge
	s.startVectors(f)
	return true
}

// startVectors converts the fresh Cholesky factor of f to the L D Lᵀ form
// and computes y and u by forward substitution.
func (s *slider) startVectors(f *ldlFactor) {
	n := len(f.ord)
	linalg.ToLDL(f.l, f.invd, n)
	if f.y != nil {
		y := f.y[:n]
		for a, i := range f.ord {
			y[a] = s.dataValue(i)
		}
		carried(f, y, s.unit)
	}
	if f.u != nil {
		u := f.u[:n]
		for a := range u {
			u[a] = 1
		}
		carried(f, u, s.unit)
	}
	finishVectors(f)
}

// carried overwrites v by D⁻¹L⁻¹v for the L D Lᵀ factor f (unit holds
// ones).
func carried(f *ldlFactor, v, unit []float64) {
	n := len(v)
	linalg.Forward(f.l, n, unit, v)
	for a, d := range f.invd[:n] {
		v[a] *= d
	}
}

// dataValue returns the value of datum i, less the mean for simple
// kriging.
func (s *slider) dataValue(i int32) float64 {
	if s.k.p.Method == Simple {
		return s.k.values[i] - s.k.p.Mean
	}
	return s.k.values[i]
}

// finishVectors computes the products of u that every target uses:
// uᵀDu = 1ᵀK⁻¹1 and uᵀDy = 1ᵀK⁻¹z.
func finishVectors(f *ldlFactor) {
	if f.u == nil {
		return
	}
	n := len(f.ord)
	u := f.u[:n]
	uu, uy := 0.0, 0.0
	for i, v := range u {
		d := f.l[linalg.RowStart(i)+i]
		uu += v * d * v
		if f.y != nil {
			uy += v * d * f.y[i]
		}
	}
	f.uu, f.uy = uu, uy
}

// worthSliding reports whether the factorisation of s.nb should be derived
// from from, the factorisation of the previous target's set, by slide: not
// when from carries a shift or a ridge, has had maxUpdates updates already,
// when its deletions since its fresh factorisation (this one included) cost
// as much as a fresh factorisation (the data leaving now sit deep in its
// rows: refactorising puts them last again), or when the update would cost
// more than a fresh factorisation. It lists the rows to delete in
// s.removed and adds their cost to from.swept; track must have just marked
// the data of both sets.
func (s *slider) worthSliding(from *ldlFactor) bool {
	if from.shift != 0 || from.ridge != 0 || from.updates >= maxUpdates || len(s.fresh) > maxStaged {
		return false
	}
	inBoth := s.gen + 1
	rm := s.removed[:0]
	for a, j := range from.ord {
		if s.mark[j] != inBoth {
			rm = append(rm, a)
		}
	}
	s.removed = rm
	// Multiply-adds: a deletion with d rows after it sweeps d²/2 entries
	// (two each) and pays sweepRow per row, an append at size m solves
	// m²/2; a fresh factorisation takes about m³/6 and gathers m²/2
	// entries.
	m, swept := len(from.ord), 0
	for q := len(rm) - 1; q >= 0; q-- {
		d := m - 1 - rm[q]
		swept += d*d + sweepRow*d
		m--
	}
	cost := swept
	for range s.fresh {
		cost += m*m/2 + 2*m
		m++
	}
	fresh := m*m*m/6 + m*m/2
	// Past the cost of one fresh factorisation of deletions since the last
	// one, its rows no longer put the data about to leave last.
	if from.swept+swept > fresh || cost >= fresh {
		return false
	}
	from.swept += swept
	return true
}

// slide turns f, the factorisation of the previous target's set, into
// that of s.nb in place, as worthSliding planned: it deletes the rows of
// the data that left and stages the rows of the data that arrived (in
// exitOrder) at the end, filled with their covariances, for complete to
// solve (s.pending of them).
func (s *slider) slide(f *ldlFactor) {
	n := len(f.ord)
	for q := len(s.removed) - 1; q >= 0; q-- {
		p := s.removed[q]
		linalg.DeleteRow(f.l, f.invd, n, p, f.y, f.u, s.pk, s.bk)
		f.ord = append(f.ord[:p], f.ord[p+1:]...)
		n--
	}
	add := s.fresh
	s.exitOrder(add)
	f.ord = append(f.ord, add...)
	for a, j := range add {
		r := n + a
		row := f.l[linalg.RowStart(r) : linalg.RowStart(r)+r+1]
		s.cov.column(row[:r], j, f.ord[:r], s.r2)
		row[r] = s.cov.variance(j)
	}
	s.pending = len(add)
	f.updates++
	if s.pending == 0 {
		finishVectors(f)
	}
}

// complete solves the rows slide staged in f together with the target's
// right-hand side v (overwritten by L⁻¹v), and reports whether every new
// pivot was large enough.
func (s *slider) complete(f *ldlFactor, v []float64) bool {
	q := s.pending
	s.pending = 0
	n0 := len(f.ord) - q
	var yv []float64
	if f.y != nil {
		yv = s.yv[:q]
		for a, j := range f.ord[n0:] {
			yv[a] = s.dataValue(j)
		}
	}
	if !linalg.AppendRows(f.l, f.invd, s.unit, n0, q, f.y, yv, f.u, v, s.vecs) {
		return false
	}
	finishVectors(f)
	return true
}

// exitOrder sorts the data ord by their anisotropic distance (in the search
// ellipsoid's metric) to s.ahead, a target a few steps ahead, nearest
// first. The data that will leave the neighbourhood soonest, the farthest
// from where the targets go, then take the last rows of a factorisation,
// where deleting them is cheapest (linalg.DeleteRow rotates the rows after the
// deleted one).
func (s *slider) exitOrder(ord []int32) {
	c := s.k.coords
	a := &s.search3
	sc := s.score[:len(ord)]
	for q, i := range ord {
		u, v, w := a.Apply(c[3*i]-s.ahead[0], c[3*i+1]-s.ahead[1], c[3*i+2]-s.ahead[2])
		d := u*u + v*v + w*w
		b := q - 1
		for ; b >= 0 && (sc[b] > d || sc[b] == d && ord[b] > i); b-- {
			sc[b+1], ord[b+1] = sc[b], ord[b]
		}
		sc[b+1], ord[b+1] = d, i
	}
}

// estimateOne kriges target t of targets from the block-average right-hand
// side k̄ and the vectors y and u of the factor: one forward substitution
// v = L⁻¹k̄ per target. It writes the requested outputs at index t. end is
// the end of the chunk of targets the slider goes through (see exitOrder).
func (s *slider) estimateOne(targets []float64, t, end int, out *Output) {
	k := s.k
	a := 3 * min(t+aheadSteps, end-1)
	s.ahead = [3]float64{targets[a], targets[a+1], targets[a+2]}
	st, slid := s.locate(targets[3*t], targets[3*t+1], targets[3*t+2])
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
	v := s.v[:n]
	s.cov.rhs(v, f.ord, s.centre, s.nsub, true, f.shift, s.r2)
	switch {
	case s.pending == 0:
		linalg.Forward(f.l, n, s.unit, v)
	case s.complete(f, v):
	default:
		// An appended datum is (nearly) redundant: factorise afresh, with
		// regularisation if need be.
		slid = false
		if !s.factorise(f, s.nb) {
			s.cache.unlink(s.slot)
			s.cur = nil
			s.failed()
			out.set(t, math.NaN(), math.NaN(), 0, math.NaN(), math.NaN(), math.NaN())
			return
		}
		s.cov.rhs(v, f.ord, s.centre, s.nsub, true, f.shift, s.r2)
		linalg.Forward(f.l, n, s.unit, v)
	}
	if slid {
		s.local.Updated++
	}
	s.local.Systems++
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
		uv = linalg.Dot(f.u[:n], v)
		mu = (uv - 1) / f.uu
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
