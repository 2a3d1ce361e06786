package kriging

import (
	"math"

	"github.com/geostat-engine/geostat/internal/linalg"
	"github.com/geostat-engine/geostat/neighbor"
)

// The two engines, Solver (arbitrary neighbour sets, Cholesky factors of
// the sorted set) and slider (Estimate's targets in order, L D Lᵀ factors
// updated from target to target), share what this file holds: the search
// of a target's neighbours, the factorisation of a kriging matrix with its
// safeguards, the variance clamp and the counters.

// negativeTolerance is the relative size of a negative kriging variance that
// is accepted as rounding: variances in [−1e-9·V, 0), V the prior variance
// scale of the system, are set to 0 silently; more negative values are also
// set to 0 but counted in Stats.NegativeVariances.
const negativeTolerance = 1e-9

// flushEvery is the number of targets after which an engine adds its
// counters to its Kriger's Stats: rarely enough that the atomic additions
// cost nothing, often enough that Stats follow a long run.
const flushEvery = 256

// status is the outcome of finding a target's neighbours.
type status int

const (
	unestimated status = iota // too few neighbours, or a failed factorisation
	noData                    // simple kriging without neighbours: the mean
	solved                    // n ≥ 1 neighbours, a system to solve
)

// targetSearch is the state both engines share: the neighbour search, the
// target centre in each structure's space, scratch and counters.
type targetSearch struct {
	k      *Kriger
	cov    *covModel
	search *neighbor.Searcher
	nsub   int

	r2       []float64 // n squared distances (scratch of the covariance rows)
	centre   []float64 // target centre in each structure's space, 3 per structure
	meanDist float64

	calls int
	local Stats
}

// newTargetSearch returns the shared state for systems of at most m
// neighbours.
func (k *Kriger) newTargetSearch(m int) targetSearch {
	return targetSearch{
		k:      k,
		cov:    k.cov,
		search: k.index.NewSearcher(),
		nsub:   k.nsub,
		r2:     make([]float64, m),
		centre: make([]float64, 3*len(k.cov.st)),
	}
}

// setState is an engine's current neighbour set and the generation marks
// per merged datum that tell it from the previous one. Each engine has its
// own, with its own marking scheme (Solver.canonical, slider.track).
type setState struct {
	nb    []int32  // current neighbours
	fresh []int32  // neighbours not in the previous set
	mark  []uint32 // generation marks per merged datum
	gen   uint32
}

// newSetState returns the set state for sets of at most m of the k's
// merged data.
func (k *Kriger) newSetState(m int) setState {
	return setState{nb: make([]int32, 0, m), fresh: make([]int32, 0, m), mark: make([]uint32, len(k.coords)/3)}
}

// newPacked returns the buffers of a packed factor of at most m rows and
// its reciprocal diagonal.
func newPacked(m int) (l, invd []float64) {
	return make([]float64, linalg.PackedLen(m)), make([]float64, m)
}

// maxSystem returns the size of the largest kriging system of k: at most
// MaxSamples neighbours and never more than the merged data.
func (k *Kriger) maxSystem() int { return min(k.p.Search.MaxSamples, len(k.coords)/3) }

// find searches the neighbours of (x, y, z): their indices and distances
// (owned by the searcher) and whether the target has enough of them
// (status solved or noData, never unestimated for a target it counts as
// such). For a target with neighbours it also sets the target centre in
// each structure's space and the mean neighbour distance.
func (t *targetSearch) find(x, y, z float64) ([]int32, status) {
	t.calls++
	if t.calls%flushEvery == 0 {
		t.flush()
	}
	if math.IsNaN(x+y+z) || math.IsInf(x+y+z, 0) {
		t.local.Unestimated++
		return nil, unestimated
	}
	idx, dist := t.search.SearchSet(x, y, z)
	n := len(idx)
	if n < t.k.minimum {
		t.local.Unestimated++
		return nil, unestimated
	}
	for st := range t.cov.st {
		t.centre[3*st], t.centre[3*st+1], t.centre[3*st+2] = t.cov.transform(st, x, y, z)
	}
	if n == 0 {
		t.meanDist = math.NaN()
		return idx, noData
	}
	t.meanDist = meanDistance(dist)
	return idx, solved
}

// flush adds the counters to the Kriger's Stats.
func (t *targetSearch) flush() {
	k := t.k
	l := &t.local
	k.systems.Add(l.Systems)
	k.reused.Add(l.Reused)
	k.updated.Add(l.Updated)
	k.regularised.Add(l.Regularised)
	k.unestimated.Add(l.Unestimated)
	k.negative.Add(l.NegativeVariances)
	k.failed.Add(l.Failed)
	*l = Stats{}
}

// failed records a target whose system could not be factorised even with
// regularisation: it is unestimated.
func (t *targetSearch) failed() {
	t.local.Failed++
	t.local.Unestimated++
}

// clampVariance applies the negative-variance rule to v with prior scale
// prior.
func (t *targetSearch) clampVariance(v, prior float64) float64 {
	if v <= 0 { // also −0 to +0
		if v < -negativeTolerance*math.Abs(prior) {
			t.local.NegativeVariances++
		}
		return 0
	}
	return v
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

// factorise assembles the kriging matrix of the neighbours nb, in that
// order, into l (packed lower triangle) and factorises it in place by
// Cholesky (1/L_jj in invd). gather selects covModel.assembleTable, which
// takes nb in any order, over covModel.assemble (nb increasing when there
// is a table). It returns the shift and ridge the factor includes, and
// false when no factorisation succeeded.
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
// the factorisation fail. The result depends on nb and its order only.
func (t *targetSearch) factorise(l, invd []float64, nb []int32, gather bool) (shift, ridge float64, ok bool) {
	n := len(nb)
	cov := t.cov
	assemble := func(shift, ridge float64) {
		if gather {
			cov.assembleTable(l, nb, shift, ridge)
		} else {
			cov.assemble(l, nb, shift, ridge, t.r2)
		}
	}
	if cov.intrinsic {
		assemble(0, 0)
		shift = 2*linalg.MaxAbsLower(l, n) + cov.linearSum
	}
	shiftTries := 0
	for {
		assemble(shift, ridge)
		if linalg.Cholesky(l, n, invd) {
			return shift, ridge, true
		}
		if cov.intrinsic && shiftTries < 3 {
			shift *= 8
			shiftTries++
			continue
		}
		scale := cov.pointVar + shift
		if !(scale > 0) {
			return 0, 0, false // cannot happen: contributions are positive
		}
		if ridge == 0 {
			ridge = 1e-9 * scale
			t.local.Regularised++
		} else {
			ridge *= 10
		}
		if !(ridge <= 10*float64(n)*scale) {
			return 0, 0, false
		}
	}
}
