package ensemble

import (
	"math"
	"math/bits"
	"slices"
)

// quantileRanks appends to dst the order statistics (0-based ranks, sorted,
// without repeats) that the quantiles at levels need among n values: k and,
// when h = q·(n−1) is not an integer, k+1, with k = ⌊h⌋.
func quantileRanks(dst []int, levels []float64, n int) []int {
	for _, q := range levels {
		h := q * float64(n-1)
		k := int(h)
		dst = append(dst, k)
		if float64(k) < h && k+1 < n {
			dst = append(dst, k+1)
		}
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
// selectRanks has put the order statistics quantileRanks named in place:
// linear interpolation between x_(k) and x_(k+1) at h = q·(n−1). The
// interpolation is written as numpy writes it (from the lower value when the
// fraction is below ½, from the upper one otherwise), exact at both ends.
func quantileOf(v []float64, q float64) float64 {
	h := q * float64(len(v)-1)
	k := int(h)
	t := h - float64(k)
	if t == 0 || k+1 >= len(v) {
		return v[k]
	}
	a, b := v[k], v[k+1]
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
const smallSort = 12

// selectRanks reorders v so that v[k] is its k-th smallest value (0-based)
// for every k in ranks (sorted ascending): a quickselect over several ranks
// at once, with a median-of-three pivot and a three-way partition (ties at
// the pivot end the search at once). Past 2·log₂(n)+8 partitions it sorts
// the remaining range, so the worst case stays O(n log n). Deterministic: no
// randomness.
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
		lt, gt := partition3(v, medianOfThree(v[0], v[len(v)/2], v[len(v)-1]))
		// ranks[:i] are left of the pivot run, ranks[i:j] inside it (done),
		// ranks[j:] right of it.
		i := 0
		for i < len(ranks) && ranks[i]-off < lt {
			i++
		}
		j := i
		for j < len(ranks) && ranks[j]-off < gt {
			j++
		}
		// Recurse into the smaller side count-wise, loop on the other.
		if i > 0 {
			selectFrom(v[:lt], ranks[:i], off, budget)
		}
		v, ranks, off = v[gt:], ranks[j:], off+gt
	}
}

// partition3 rearranges v into v[:lt] < p, v[lt:gt] == p, v[gt:] > p.
func partition3(v []float64, p float64) (lt, gt int) {
	i := 0
	gt = len(v)
	for i < gt {
		x := v[i]
		switch {
		case x < p:
			v[lt], v[i] = x, v[lt]
			lt++
			i++
		case x > p:
			gt--
			v[i], v[gt] = v[gt], x
		default:
			i++
		}
	}
	return lt, gt
}

func medianOfThree(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
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
