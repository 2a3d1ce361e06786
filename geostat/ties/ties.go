package ties

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
)

// Tau is the fraction τ of the gap Δ that a tie group's spacing uses in
// total: the spacing is δ = τΔ/k for a group of k values (docs/math.md
// section 6, step 5).
const Tau = 0.5

// lonelyGap returns the gap Δ used when a group has no finite distinct
// neighbour on either side (all finite data equal).
func lonelyGap(v float64) float64 { return math.Max(math.Abs(v), 1) * 1e-6 }

// Options are the settings of Break besides the data and the neighbourhood.
// The zero value orders ties by local mean and then by the random key of
// seed 0, with the original index of a value being its position.
type Options struct {
	// Seed keys the random order of members whose local means are equal.
	Seed uint64

	// OriginalIndex, when not nil, gives each value its original index (one
	// per value, all distinct): the random key and the last tie-break use it
	// instead of the position, and the neighbour search breaks equal
	// distances by it. Permuting the (value, coordinates, original index)
	// triples of the input then permutes the output in the same way and
	// changes no number. nil means the position in values.
	OriginalIndex []int64

	// Holes are the drill hole ids of the values (one per value), needed when
	// the neighbourhood limits the samples per hole (MaxPerHole > 0);
	// otherwise ignored and may be nil.
	Holes []int32

	// LowerBound, when not nil, is a physical lower bound b of the variable
	// (for example 0 for grades): every value must be ≥ b, and no output
	// value goes below b. The tie group at the global minimum v then uses the
	// one-sided spacing z'_q = v + (q − 1)·τ(v⁺ − v)/k whenever the
	// symmetric spacing would take a value below b (always when v = b); its
	// mean then rises by less than τ(v⁺ − v)/2. Other groups are unaffected.
	LowerBound *float64

	// Progress, when not nil, is called with the number of local means
	// computed so far and the total; calls are serialised.
	Progress func(done, total int)
}

// Break returns a copy of values in which every group of exactly equal
// values is replaced by strictly increasing values ordered by local mean,
// random key and original index (see the package documentation). values is
// not modified; NaN stays NaN; untied values are copied bit for bit.
//
// coords are the flat world coordinates of the values (3 per value). They
// may be nil when p is nil: without a neighbourhood the members of a group
// are ordered by the random key alone.
//
// p is the search neighbourhood of the local means. The MaxSamples nearest
// other data (the datum itself is excluded by index, not by distance, so a
// duplicate location counts as a neighbour) inside the ellipsoid are
// averaged; with fewer than max(1, MinSamples) of them the local mean is
// neutral. Octant and hole quotas apply as in package neighbor, with the
// datum itself counted in its own quota before it is excluded.
//
// Errors name the offending field (values, coords, original_index, holes,
// lower_bound, and the neighbourhood's fields); the context cancels the
// local-mean computation.
func Break(ctx context.Context, values, coords []float64, p *neighbor.Params, opts Options) ([]float64, error) {
	n := len(values)
	if err := check(values, coords, p, &opts); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	copy(out, values)

	// The neighbour index is built while the values are sorted.
	type built struct {
		sr  *search
		err error
	}
	var index chan built
	if p != nil {
		index = make(chan built, 1)
		go func() {
			var b built
			defer func() {
				if v := recover(); v != nil {
					b = built{nil, fmt.Errorf("ties: building the neighbour index: %w", geostat.NewPanicError(v))}
				}
				index <- b
			}()
			b.sr, b.err = buildSearch(values, coords, p, &opts)
		}()
	}

	// Sort the finite values; ties are runs of equal values.
	order := sortedFinite(values)
	groups := tieGroups(values, order)
	var sr *search
	if index != nil {
		b := <-index
		if b.err != nil {
			return nil, b.err
		}
		sr = b.sr
	}
	if len(groups) == 0 {
		return out, nil
	}

	id := func(pos int32) int64 { return int64(pos) }
	if opts.OriginalIndex != nil {
		id = func(pos int32) int64 { return opts.OriginalIndex[pos] }
	}

	// The local mean of every tied value, by position. The searches run in
	// position order, where consecutive data are usually close in space
	// (grid cells, samples down a hole), which the search exploits; the
	// results do not depend on that order.
	var means []float64
	if p != nil {
		tied := make([]bool, n)
		for _, g := range groups {
			for _, pos := range order[g.lo:g.hi] {
				tied[pos] = true
			}
		}
		members := make([]int32, 0, len(order))
		for pos, t := range tied {
			if t {
				members = append(members, int32(pos))
			}
		}
		means = make([]float64, n)
		if err := localMeans(ctx, sr, values, coords, p, &opts, members, means); err != nil {
			return nil, err
		}
	}

	// Order each group by (m, u, original index) and write its values.
	type member struct {
		m   float64
		u   uint64
		id  int64
		pos int32
	}
	var buf []member
	var z []float64
	minFinite := values[order[0]]
	for _, g := range groups {
		k := g.hi - g.lo
		v := values[order[g.lo]]
		buf = buf[:0]
		for _, pos := range order[g.lo:g.hi] {
			m := v // neutral without a neighbourhood
			if means != nil {
				m = means[pos]
			}
			if math.IsNaN(m) { // neighbours holding +Inf and -Inf
				m = v
			}
			i := id(pos)
			buf = append(buf, member{m: m, u: Key(opts.Seed, i), id: i, pos: pos})
		}
		slices.SortFunc(buf, func(a, b member) int {
			if c := cmp.Compare(a.m, b.m); c != 0 {
				return c
			}
			if c := cmp.Compare(a.u, b.u); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})

		lo, hi := math.Inf(-1), math.Inf(1)
		if g.lo > 0 {
			lo = values[order[g.lo-1]]
		}
		if g.hi < len(order) {
			hi = values[order[g.hi]]
		}
		z = slices.Grow(z[:0], k)[:k]
		bound := math.Inf(-1)
		if opts.LowerBound != nil && v == minFinite {
			bound = *opts.LowerBound
		}
		if err := Spread(z, v, lo, hi, bound); err != nil {
			return nil, fmt.Errorf("ties: values: %w", err)
		}
		for q := range buf {
			out[buf[q].pos] = z[q]
		}
	}
	return out, nil
}

// check validates the inputs of Break.
func check(values, coords []float64, p *neighbor.Params, opts *Options) error {
	n := len(values)
	if n > math.MaxInt32 {
		return fmt.Errorf("ties: values: %d values exceed the limit of %d", n, math.MaxInt32)
	}
	if coords != nil || p != nil {
		if len(coords) != 3*n {
			return fmt.Errorf("ties: coords: need 3 coordinates per value (%d), got %d", 3*n, len(coords))
		}
	}
	if p != nil {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("ties: neighbourhood: %w", err)
		}
		for i, v := range values {
			if math.IsNaN(v) {
				continue
			}
			c := coords[3*i : 3*i+3]
			if !isFinite(c[0]) || !isFinite(c[1]) || !isFinite(c[2]) {
				return fmt.Errorf("ties: coords: point %d (%g, %g, %g) is not finite", i, c[0], c[1], c[2])
			}
		}
		if p.MaxPerHole > 0 && len(opts.Holes) != n {
			return fmt.Errorf("ties: holes: max_per_hole needs one hole id per value (%d), got %d", n, len(opts.Holes))
		}
	}
	if opts.OriginalIndex != nil {
		if len(opts.OriginalIndex) != n {
			return fmt.Errorf("ties: original_index: need one per value (%d), got %d", n, len(opts.OriginalIndex))
		}
		s := slices.Clone(opts.OriginalIndex)
		slices.Sort(s)
		for i := 1; i < len(s); i++ {
			if s[i] == s[i-1] {
				return fmt.Errorf("ties: original_index: %d appears more than once", s[i])
			}
		}
	}
	if b := opts.LowerBound; b != nil {
		if !isFinite(*b) {
			return fmt.Errorf("ties: lower_bound: must be finite, got %g", *b)
		}
		for i, v := range values {
			if v < *b {
				return fmt.Errorf("ties: values: value %g at %d is below the lower bound %g", v, i, *b)
			}
		}
	}
	return nil
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// group is the run order[lo:hi] of equal values.
type group struct{ lo, hi int }

// sortedFinite returns the positions of the finite values sorted by value
// (the order inside a run of equal values is irrelevant: runs are re-sorted
// by the tie-break keys). It is an LSD radix sort on the order-preserving
// unsigned image of the float64 bits, eight passes of one byte.
func sortedFinite(values []float64) []int32 {
	keys := make([]uint64, 0, len(values))
	order := make([]int32, 0, len(values))
	for i, v := range values {
		if isFinite(v) {
			keys = append(keys, sortKey(v))
			order = append(order, int32(i))
		}
	}
	n := len(keys)
	if n < 256 {
		slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(values[a], values[b]) })
		return order
	}
	keys2 := make([]uint64, n)
	order2 := make([]int32, n)
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		count = [256]int{}
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if count[byte(keys[0]>>shift)] == n {
			continue // every key has this byte: nothing to do
		}
		sum := 0
		for b := range count {
			count[b], sum = sum, sum+count[b]
		}
		for i, k := range keys {
			b := byte(k >> shift)
			keys2[count[b]] = k
			order2[count[b]] = order[i]
			count[b]++
		}
		keys, keys2 = keys2, keys
		order, order2 = order2, order
	}
	return order
}

// sortKey maps a float64 to a uint64 whose unsigned order is the numeric
// order (−0 sorts just before +0, which keeps them adjacent).
func sortKey(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// tieGroups returns the runs of at least two equal values of the sorted
// positions.
func tieGroups(values []float64, order []int32) []group {
	var gs []group
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && values[order[hi]] == values[order[lo]] {
			hi++
		}
		if hi-lo >= 2 {
			gs = append(gs, group{lo, hi})
		}
		lo = hi
	}
	return gs
}
