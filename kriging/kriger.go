package kriging

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
)

// Kriger holds the merged data, the neighbourhood index and the prepared
// covariance model. It is read-only after New and safe for concurrent use;
// each goroutine solves with its own Solver.
type Kriger struct {
	p       Params
	coords  []float64 // merged data, flat xyz
	values  []float64 // merged values, nil for a weights-only kriger
	merged  []int32   // input datum → merged index (−1 when dropped)
	index   *neighbor.Index
	cov     *covModel
	nsub    int
	setKeys []uint64        // random key per merged datum (slider.track's set hash)
	minimum int             // smallest neighbour count that gives an estimate
	search3 geostat.Matrix3 // anisotropy of the search ellipsoid

	duplicates int
	dropped    int

	systems     atomic.Int64
	reused      atomic.Int64
	updated     atomic.Int64
	regularised atomic.Int64
	unestimated atomic.Int64
	negative    atomic.Int64
	failed      atomic.Int64
}

// New prepares kriging from data: coords flat xyz (x0, y0, z0, x1, ...) and
// values, one per datum, or nil for a weights-only kriger (turning-bands
// conditioning, which applies the weights to its own values). Data with a
// NaN value are dropped. Data at exactly equal coordinates are merged into
// one datum at the first one's position with the mean of their values
// (Stats().Duplicates counts the data merged away). The merged data are
// numbered in a spatially coherent order (see Data and MergedIndex for the
// correspondence with the input). New builds the
// neighbourhood index over the merged data, transforms them into each
// structure's isotropic space and, when there are at most TableLimit of
// them, allocates the data-to-data covariance table (filled as systems need
// its entries).
//
// Errors name the offending field or datum: invalid Params, a coords length
// that is not a multiple of 3, a values length that differs from the number
// of data, or a non-finite coordinate.
func New(coords, values []float64, p Params) (*Kriger, error) {
	return NewWithHoles(coords, values, nil, p)
}

// NewWithHoles is New with a hole (drill-hole) id per datum, needed when
// Params.Search.MaxPerHole > 0; holes may be nil otherwise. A merged datum
// keeps the hole id of its first occurrence.
func NewWithHoles(coords, values []float64, holes []int32, p Params) (*Kriger, error) {
	return NewWithHolesContext(context.Background(), coords, values, holes, p)
}

// NewContext is New checking ctx between the phases of the set-up
// (merging duplicates, spatial ordering, covariance table, neighbour
// index, whose build checks it too), so that a cancelled job stops within
// one phase: about a second for millions of data. It returns ctx's error
// when cancelled.
func NewContext(ctx context.Context, coords, values []float64, p Params) (*Kriger, error) {
	return NewWithHolesContext(ctx, coords, values, nil, p)
}

// NewWithHolesContext is NewWithHoles checking ctx as NewContext does.
func NewWithHolesContext(ctx context.Context, coords, values []float64, holes []int32, p Params) (*Kriger, error) {
	cancelled := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("kriging: set-up cancelled: %w", err)
		}
		return nil
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("kriging: %w", err)
	}
	if len(coords)%3 != 0 {
		return nil, fmt.Errorf("kriging: coordinates: length %d is not a multiple of 3", len(coords))
	}
	nin := len(coords) / 3
	if values != nil && len(values) != nin {
		return nil, fmt.Errorf("kriging: values: %d values for %d data", len(values), nin)
	}
	if holes != nil && len(holes) != nin {
		return nil, fmt.Errorf("kriging: holes: %d hole ids for %d data", len(holes), nin)
	}
	for i, c := range coords {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("kriging: coordinates: datum %d has a non-finite %c coordinate", i/3, "xyz"[i%3])
		}
	}
	k := &Kriger{p: p}
	mholes, err := k.merge(ctx, coords, values, holes)
	if err != nil {
		return nil, fmt.Errorf("kriging: set-up cancelled: %w", err)
	}
	d := p.discretisation()
	k.nsub = d.Count()
	offsets := []float64{0, 0, 0}
	if k.nsub > 1 {
		offsets = d.LocalOffsets(p.CellSize)
		r := p.Rotation.Matrix()
		for i := 0; i < len(offsets); i += 3 {
			offsets[i], offsets[i+1], offsets[i+2] = r.Apply(offsets[i], offsets[i+1], offsets[i+2])
		}
	}
	k.cov = newCovModel(p.Variogram, k.coords, offsets)
	order, err := k.cov.spatialOrder(ctx)
	if err != nil {
		return nil, fmt.Errorf("kriging: set-up cancelled: %w", err)
	}
	if order != nil {
		mholes = k.permute(order, mholes)
	}
	if err := cancelled(); err != nil {
		return nil, err
	}
	limit := p.TableLimit
	if limit == 0 {
		limit = DefaultTableLimit
	}
	if n := len(k.coords) / 3; n > 0 && n <= limit {
		k.cov.makeTable()
	}
	if err := cancelled(); err != nil {
		return nil, err
	}
	ix, err := neighbor.NewIndexContext(ctx, k.coords, nil, mholes, p.Search)
	if err != nil {
		return nil, fmt.Errorf("kriging: neighbourhood: %w", err)
	}
	k.index = ix
	// NewIndex validated the ellipsoid.
	a, err := p.Search.Ellipsoid.Anisotropy()
	if err != nil {
		return nil, fmt.Errorf("kriging: neighbourhood: %w", err)
	}
	k.search3 = a.M
	k.setKeys = make([]uint64, len(k.coords)/3)
	for i := range k.setKeys {
		k.setKeys[i] = splitMix64(uint64(i))
	}
	k.minimum = p.Search.MinSamples
	if p.Method == Ordinary && k.minimum < 1 {
		k.minimum = 1
	}
	return k, nil
}

// merge drops NaN-valued data and merges exact duplicate coordinates, in
// input order of first occurrence (New then renumbers them in a spatial
// order), filling k.coords, k.values and k.merged.
// It returns the merged hole ids (nil when holes is nil), or ctx's error
// when it was cancelled during the sort.
func (k *Kriger) merge(ctx context.Context, coords, values []float64, holes []int32) ([]int32, error) {
	nin := len(coords) / 3
	k.merged = make([]int32, nin)
	keep := make([]int32, 0, nin)
	for i := 0; i < nin; i++ {
		if values != nil && math.IsNaN(values[i]) {
			k.merged[i] = -1
			k.dropped++
			continue
		}
		keep = append(keep, int32(i))
	}
	// Sort by coordinates (then input index) to find the groups of equal
	// positions; the group's representative is its first datum in input
	// order, so merged order follows the input.
	sorted := slices.Clone(keep)
	at := func(i int32, d int) float64 { return coords[3*int(i)+d] }
	if err := sortContext(ctx, sorted, func(a, b int32) int {
		for d := 0; d < 3; d++ {
			if c := cmp.Compare(at(a, d), at(b, d)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	}); err != nil {
		return nil, err
	}
	rep := make([]int32, nin) // datum → representative datum
	for g := 0; g < len(sorted); {
		h := g + 1
		for h < len(sorted) && at(sorted[h], 0) == at(sorted[g], 0) && at(sorted[h], 1) == at(sorted[g], 1) && at(sorted[h], 2) == at(sorted[g], 2) {
			h++
		}
		for _, i := range sorted[g:h] {
			rep[i] = sorted[g] // the lowest input index: sorted by index within a group
		}
		g = h
	}
	var mholes []int32
	count := []int{}
	for _, i := range keep {
		if r := rep[i]; r != i {
			m := k.merged[r]
			k.merged[i] = m
			if values != nil {
				k.values[m] += values[i]
				count[m]++
			}
			k.duplicates++
			continue
		}
		k.merged[i] = int32(len(k.coords) / 3)
		k.coords = append(k.coords, coords[3*i], coords[3*i+1], coords[3*i+2])
		if values != nil {
			k.values = append(k.values, values[i])
			count = append(count, 1)
		}
		if holes != nil {
			mholes = append(mholes, holes[i])
		}
	}
	for m, c := range count {
		if c > 1 {
			k.values[m] /= float64(c)
		}
	}
	if values != nil && k.values == nil {
		k.values = []float64{}
	}
	return mholes, nil
}

// permute puts the merged data in the given order (order[p] is the datum
// to put at p): coordinates, values, their images in every structure's
// space, the input-to-merged map, and the merged hole ids, which it
// returns.
func (k *Kriger) permute(order []int32, mholes []int32) []int32 {
	n := len(order)
	inv := make([]int32, n)
	for p, i := range order {
		inv[i] = int32(p)
	}
	gather3 := func(src []float64) []float64 {
		out := make([]float64, len(src))
		for p, i := range order {
			copy(out[3*p:3*p+3], src[3*i:3*i+3])
		}
		return out
	}
	k.coords = gather3(k.coords)
	for s := range k.cov.st {
		d := k.cov.st[s].data
		out := make([][3]float64, n)
		for p, i := range order {
			out[p] = d[i]
		}
		k.cov.st[s].data = out
	}
	if k.values != nil {
		v := make([]float64, n)
		for p, i := range order {
			v[p] = k.values[i]
		}
		k.values = v
	}
	for d, m := range k.merged {
		if m >= 0 {
			k.merged[d] = inv[m]
		}
	}
	if mholes == nil {
		return nil
	}
	h := make([]int32, n)
	for p, i := range order {
		h[p] = mholes[i]
	}
	return h
}

// Data returns the merged data (coordinates flat xyz and values, nil for a
// weights-only kriger) in their spatial numbering: the index space of
// Solution.Neighbors (MergedIndex maps input data to it). The slices are
// shared; do not modify them.
func (k *Kriger) Data() (coords []float64, values []float64) { return k.coords, k.values }

// MergedIndex returns, for every input datum, the index of the merged datum
// that represents it, or −1 for a datum dropped for its NaN value. The slice
// is shared; do not modify it.
func (k *Kriger) MergedIndex() []int32 { return k.merged }

// Params returns the parameters the Kriger was built with.
func (k *Kriger) Params() Params { return k.p }

// NumSubPoints returns the number of block sub-points (1 for point kriging).
func (k *Kriger) NumSubPoints() int { return k.nsub }

// PriorVariance returns the variance of the target support under the model:
// C(0) = c0 + Σ c_s for a point, the mean sub-point covariance C̄(V,V) for a
// block (the nugget counting c0/n_sub). Structures of a linear type add 0
// (their generalised covariance at the origin), so for an intrinsic model
// it is not a variance.
func (k *Kriger) PriorVariance() float64 { return k.cov.blockVar }

// Stats are counters of a Kriger's work.
type Stats struct {
	// Data is the number of merged data.
	Data int
	// Duplicates is the number of input data merged into another datum at
	// exactly the same coordinates.
	Duplicates int
	// Dropped is the number of input data dropped for a NaN value.
	Dropped int
	// Table reports whether the data-to-data covariance table is in use.
	Table bool
	// Systems is the number of targets solved with at least one neighbour.
	Systems int64
	// Reused is the number of those whose factorisation was reused from an
	// earlier target with the same neighbour set, of the same Solver or of
	// the same chunk of Estimate (see Params.FactorCache).
	Reused int64
	// Updated is the number of systems Estimate did not factorise anew but
	// updated from the previous target's factorisation, deleting the
	// neighbours that left and appending those that arrived.
	Updated int64
	// Regularised is the number of factorisations that were numerically
	// singular and were solved with a ridge added to the diagonal.
	Regularised int64
	// Unestimated is the number of targets with too few neighbours.
	Unestimated int64
	// NegativeVariances counts kriging variances below −1e-9 times the
	// prior variance scale, clamped to 0 like smaller rounding errors.
	NegativeVariances int64
	// Failed counts systems that could not be factorised even with
	// regularisation (non-finite covariances); their targets are reported
	// as unestimated.
	Failed int64
}

// ReuseRate returns Reused/Systems (0 when no system was solved).
func (s Stats) ReuseRate() float64 {
	if s.Systems == 0 {
		return 0
	}
	return float64(s.Reused) / float64(s.Systems)
}

// Stats returns the counters: the data counts from New and the solving
// counts flushed so far by Estimate (at the end of every chunk of targets)
// and by Solvers (every 256 solves and on Solver.Flush).
func (k *Kriger) Stats() Stats {
	return Stats{
		Data:              len(k.coords) / 3,
		Duplicates:        k.duplicates,
		Dropped:           k.dropped,
		Table:             k.cov.table != nil,
		Systems:           k.systems.Load(),
		Reused:            k.reused.Load(),
		Updated:           k.updated.Load(),
		Regularised:       k.regularised.Load(),
		Unestimated:       k.unestimated.Load(),
		NegativeVariances: k.negative.Load(),
		Failed:            k.failed.Load(),
	}
}

// splitMix64 returns the SplitMix64 output for state x: a well-mixed
// 64-bit key, so that sums of keys tell sets apart.
func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
