package ensemble

import (
	"math"
	"math/bits"
	"slices"
)

// quantileRanks appends to dst the order statistics (0-based ranks, sorted,
// without repeats) to select for the quantiles at levels among n values:
// k = ⌊q·(n−1)⌋ for each level. The upper neighbour x_(k+1) an
// interpolation also needs is not selected: once the ranks are in place it is
// the smallest value between k and the next selected rank (quantileOf).
func quantileRanks(dst []int, levels []float64, n int) []int {
	for _, q := range levels {
		dst = append(dst, int(q*float64(n-1)))
	}
	// Insertion sort and deduplication: a handful of ranks.
	for i := 1; i < len(dst); i++ {
		for j := i; j > 0 && dst[j] < dst[j-1]; j-- {
			dst[j], dst[j-1] = dst[j-1], dst[j]
		}
	}
	out := dst[:0]
	for i, k := range dst {
		if i == 0 || k != dst[i-1] {
			out = append(out, k)
		}
	}
	return out
}

// quantileOf returns the quantile at level q of the n = len(v) values once
// selectRanks has put the ranks quantileRanks named in place: linear
// interpolation between x_(k) and x_(k+1) at h = q·(n−1), k = ⌊h⌋. x_(k+1) is
// the smallest value of v[k+1 : k'+1], k' the next selected rank after k (n−1
// without one): the selection left every value there between x_(k) and
// x_(k'). The interpolation is written as numpy writes it (from the lower
// value when the fraction is below ½, from the upper one otherwise), exact at
// both ends.
func quantileOf(v []float64, q float64, ranks []int) float64 {
	h := q * float64(len(v)-1)
	k := int(h)
	t := h - float64(k)
	if t == 0 || k+1 >= len(v) {
		return v[k]
	}
	end := len(v)
	for _, r := range ranks {
		if r > k {
			end = r + 1
			break
		}
	}
	a := v[k]
	b := smallest(v[k+1 : end])
	d := b - a
	if math.IsInf(d, 0) { // a and b finite, their difference overflows
		return a*(1-t) + b*t
	}
	if t < 0.5 {
		return a + d*t
	}
	return b - d*(1-t)
}

// smallSort is the length below which selection sorts by insertion.
const smallSort = 4

// selectRanks reorders v so that v[k] is its k-th smallest value (0-based)
// for every k in ranks (sorted ascending): a quickselect over several ranks
// at once with a median-of-three pivot and a branch-free partition (random
// data make a branching partition mispredict every other element). Past
// 2·log₂(n)+8 partitions it sorts the remaining range, so the worst case
// (for example many values equal to the pivot) stays O(n log n).
// Deterministic: no randomness.
func selectRanks(v []float64, ranks []int) {
	selectFrom(v, ranks, 0, 2*bits.Len(uint(len(v)))+8)
}

// selectFrom works on the sub-slice v that starts at position off of the
// original; ranks are positions in the original, all inside v.
func selectFrom(v []float64, ranks []int, off, budget int) {
	for len(ranks) > 0 {
		if len(v) <= smallSort {
			insertionSort(v)
			return
		}
		if budget == 0 {
			slices.Sort(v)
			return
		}
		budget--
		p := partition(v)
		// ranks[:i] are left of the pivot, ranks[i:j] at it (done),
		// ranks[j:] right of it.
		i := 0
		for i < len(ranks) && ranks[i]-off < p {
			i++
		}
		j := i
		if j < len(ranks) && ranks[j]-off == p {
			j++
		}
		if i > 0 {
			selectFrom(v[:p], ranks[:i], off, budget)
		}
		v, ranks, off = v[p+1:], ranks[j:], off+p+1
	}
}

// partition moves the median of v's first, middle and last values to its
// sorted position p and returns p: v[:p] < v[p] ≤ v[p+1:]. The loop is
// Lomuto's scheme without a branch on the comparison: every element is
// swapped with the boundary and the boundary advances by the comparison's
// outcome (len(v) ≥ 3).
func partition(v []float64) int {
	n := len(v)
	// Median of three to v[0], the pivot.
	a, b, c := 0, n/2, n-1
	if v[b] < v[a] {
		a, b = b, a
	}
	if v[c] < v[b] {
		b = c
		if v[b] < v[a] {
			b = a
		}
	}
	v[0], v[b] = v[b], v[0]
	pivot := v[0]
	lt := 1
	for i := 1; i < n; i++ {
		x := v[i]
		v[i] = v[lt]
		v[lt] = x
		lt += b2i(x < pivot)
	}
	lt--
	v[0], v[lt] = v[lt], v[0]
	return lt
}

// b2i is 1 for true and 0 for false; the compiler makes it a SETcc.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func insertionSort(v []float64) {
	for i := 1; i < len(v); i++ {
		x := v[i]
		j := i
		for ; j > 0 && v[j-1] > x; j-- {
			v[j] = v[j-1]
		}
		v[j] = x
	}
}

// smallest returns the smallest value of w (len(w) ≥ 1, finite values), as
// a sequential scan keeping the first of equal values finds it: the
// branch-free builtin min in two lanes, and the scan itself only when the
// result is zero (the one value whose equal copies, −0 and +0, differ).
func smallest(w []float64) float64 {
	m0, m1 := w[0], w[0]
	i := 1
	for ; i+2 <= len(w); i += 2 {
		m0, m1 = min(m0, w[i]), min(m1, w[i+1])
	}
	if i < len(w) {
		m0 = min(m0, w[i])
	}
	m := min(m0, m1)
	if m == 0 {
		m = w[0]
		for _, x := range w {
			if x < m {
				m = x
			}
		}
	}
	return m
}
