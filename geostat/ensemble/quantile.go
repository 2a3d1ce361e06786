package ensemble

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
)

// The quantiles of a cell are read from its values sorted by value, equal
// values in realisation order (a stable sort; only −0 and +0 are equal yet
// differ). Sorting all values is not needed: orderStatistics sorts them by
// bucket (a counting sort on ⌊(x − min)·B/(max − min)⌋, an order-keeping map
// from the values to B buckets, the values of a bucket in realisation
// order: the bucket order) and then sorts only the buckets that hold a
// wanted position, each in a copy (the sums above cutoffs read the bucket
// order). The result at those positions is exactly that of the full stable
// sort.

// maxBuckets is the largest B of a cell of more than maxNarrow values: a
// bucket index (0 … maxBuckets, see orderStatistics) fits a byte.
const maxBuckets = 128

// smallCell is the number of values up to which a cell is sorted whole by
// insertion instead of by buckets.
const smallCell = 16

// smallBucket is the bucket length up to which a bucket is sorted by
// insertion; a longer one (many equal or clustered values) by selectBucket.
const smallBucket = 32

// quantScratch is one goroutine's working memory for the quantiles.
type quantScratch struct {
	// sorted receives the values sorted by bucket, in realisation order
	// within a bucket (the bucket order); a cell of one bucket (nb = 0)
	// in realisation order.
	sorted []float64
	// stat receives the order statistics at the wanted positions.
	stat []float64
	// tmp holds a copy of a long bucket being sorted.
	tmp []float64
	// key is the bucket of each value.
	key []uint8
	// end[b] counts the values of bucket b, then holds the position after
	// its last value in sorted (an array a byte indexes without a bounds
	// check).
	end [256]int32
	// end8 is end for a cell of at most 255 values (narrow): counts and
	// positions fit a byte, eight buckets a machine word.
	end8 [256]uint8
	// narrow is set when the last orderStatistics used end8.
	narrow bool
	// posBucket is the bucket of each wanted position (narrowStatistics).
	posBucket []uint8
	// pos are the wanted positions (order statistics), ascending, of
	// posLevels among posN values (positions).
	pos       []int
	posN      int
	posLevels []float64
	// The bucket map of the last orderStatistics: bucket(x) =
	// ⌊(x − lo)·scale⌋ in 0 … nb; nb = 0 when it did not use buckets (one
	// bucket, end[0] = len(v)).
	lo, scale float64
	nb        int
	// sub sorts the long buckets again (selectBucket), at depth+1; subPos
	// are the wanted positions inside such a bucket.
	sub    *quantScratch
	subPos []int
	depth  int
	// With squares set, orderStatistics also computes ss = sumSquares(v,
	// mean) when it uses buckets, and sets haveSS.
	squares, haveSS bool
	mean, ss        float64
}

// positions returns wantedPositions(levels, n), kept from the last call
// with the same levels and n (the cells without missing values all have the
// same n).
func (s *quantScratch) positions(levels []float64, n int) []int {
	if n != s.posN || len(levels) != len(s.posLevels) || &levels[0] != &s.posLevels[0] {
		s.pos = wantedPositions(s.pos[:0], levels, n)
		s.posN, s.posLevels = n, levels
	}
	return s.pos
}

// bucketCount is the number of buckets for n values: the power of two in
// (n, 2n], between 8 and maxBuckets. Fewer buckets would make the buckets
// to sort larger (insertion sort mispredicts about once per value); more
// would make the pass over the counts longer.
func bucketCount(n int) int {
	b := 8
	for b < maxBuckets && b <= n {
		b *= 2
	}
	return b
}

// wantedPositions appends to dst the positions (0-based order statistics)
// the quantiles at levels need among n values, ascending without repeats:
// k = ⌊q·(n−1)⌋ and, when q·(n−1) is not an integer, k+1.
func wantedPositions(dst []int, levels []float64, n int) []int {
	for _, q := range levels {
		h := q * float64(n-1)
		k := int(h)
		dst = append(dst, k)
		if h != float64(k) && k+1 < n {
			dst = append(dst, k+1)
		}
	}
	// Insertion sort and deduplication: a handful of positions.
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

// orderStatistics returns a slice w of len(v) values such that w[p] is the
// value at position p of v sorted stably by value, for every p in pos
// (ascending, each < len(v)). v (finite values, len(v) ≥ 1, smallest value
// lo and largest hi) is left unchanged. w is s.stat; its other positions
// hold no meaningful value. s.sorted[:len(v)] holds v in bucket order, and
// s.lo, s.scale, s.nb and s.end (s.end8 when s.narrow) the bucket map and
// the bucket ends, for above.
func orderStatistics(v []float64, lo, hi float64, pos []int, s *quantScratch) []float64 {
	s.haveSS = false
	n := len(v)
	if cap(s.sorted) < n+4 || cap(s.sorted) < windowArray {
		m := max(n+4, windowArray)
		s.sorted, s.stat, s.key = make([]float64, m), make([]float64, m), make([]uint8, m)
	}
	w := s.sorted[:n]
	s.narrow = n <= maxNarrow && n > smallCell
	if s.narrow {
		return s.narrowStatistics(v, lo, hi, pos)
	}
	nb := bucketCount(n)
	scale := float64(nb) / (hi - lo)
	if n <= smallCell || hi == lo || scale == 0 || math.IsInf(scale, 0) {
		return s.oneBucket(v, lo, hi)
	}
	s.lo, s.scale, s.nb = lo, scale, nb
	// x − lo ≥ 0 and (x − lo)·scale ≤ nb for every x: with D = hi − lo
	// rounded, scale = nb·(1/D)(1 + δ) (nb a power of two) and
	// D·scale ≤ nb·(1 + 2⁻⁵²) rounds to at most the float after nb, which
	// truncates to nb. So the buckets are 0 … nb, the last one holding at
	// most values equal to hi; both roundings keep the order, so x ≤ y gives
	// bucket(x) ≤ bucket(y).
	end := &s.end
	key := s.key[:n]
	countInto(s, v, lo, scale, end)
	// Counts to starting positions, four buckets a step (nb is a power of
	// two ≥ 8); the last bucket, nb, starts after all the others.
	var c int32
	for b := 0; b+4 <= nb; b += 4 {
		e := end[b : b+4 : b+4]
		c0 := c + e[0]
		c1 := c0 + e[1]
		c2 := c1 + e[2]
		e[0], e[1], e[2], c = c, c0, c1, c2+e[3]
		e[3] = c2
	}
	end[nb] = c
	for i, x := range v {
		b := key[i]
		w[end[b]] = x
		end[b]++
	}
	// end[b] is now the position after bucket b. Sort the buckets that
	// hold a wanted position, each once: bucket b holds position p when
	// end[b−1] ≤ p < end[b].
	b := 0
	for j := 0; j < len(pos); {
		p := int32(pos[j])
		for b+4 <= nb && end[b+3] <= p {
			b += 4
		}
		for end[b] <= p {
			b++
		}
		start := int32(0)
		if b > 0 {
			start = end[b-1]
		}
		k := j + 1
		for k < len(pos) && int32(pos[k]) < end[b] {
			k++
		}
		s.selectBucket(w[start:end[b]], pos[j:k], int(start), s.stat)
		j = k
	}
	return s.stat[:n]
}

// oneBucket is orderStatistics for a cell that takes one bucket (nb = 0):
// few values, all values equal (already in order), or a range that
// overflows or underflows the bucket map. The bucket order is the
// realisation order; stat is the cell sorted.
func (s *quantScratch) oneBucket(v []float64, lo, hi float64) []float64 {
	n := len(v)
	s.narrow = false
	copy(s.sorted, v)
	stat := s.stat[:n]
	copy(stat, v)
	if hi != lo {
		sortStable(stat)
	}
	s.nb, s.end[0] = 0, int32(n)
	return stat
}

// maxNarrow is the largest cell narrowStatistics takes: its counts and
// positions fit a byte.
const maxNarrow = 255

// narrowBuckets returns B for narrowStatistics on n values, the buckets
// being 0 … B: 63 up to 25 values, 127 up to 51, 255 above, 2.5 buckets a
// value or more, so that the bucket of a wanted position seldom holds more
// than four values, while a small cell does not pay for 256 counts.
func narrowBuckets(n int) int {
	switch {
	case n <= 25:
		return 63
	case n <= 51:
		return 127
	}
	return 255
}

// narrowStatistics is orderStatistics for smallCell < n ≤ maxNarrow values
// into the buckets 0 … narrowBuckets(n) ≤ 255: the counts and the positions are bytes, the
// running sums of the counts are taken eight buckets at a time in a machine
// word.
func (s *quantScratch) narrowStatistics(v []float64, lo, hi float64, pos []int) []float64 {
	n := len(v)
	nb := narrowBuckets(n)
	scale := float64(nb) / (hi - lo)
	if hi == lo || scale == 0 || math.IsInf(scale, 0) {
		return s.oneBucket(v, lo, hi)
	}
	s.lo, s.scale, s.nb = lo, scale, nb
	// As in orderStatistics: with D = hi − lo rounded, scale = B/D·(1 +
	// δ), |δ| ≤ 2⁻⁵³, and fl(x − lo) ≤ D, the product rounds to at most
	// B·(1 + 2⁻⁵³)² < B + 1, which truncates to B: the buckets are 0 … B,
	// in the order of the values (both roundings keep the order). The
	// counts past B stay 0 and are not used.
	end := &s.end8
	key := s.key[:n]
	countInto(s, v, lo, scale, end)
	// Counts to starting positions, eight buckets a word: the product of
	// the word with 0x0101…01 holds in byte k the sum of bytes 0 … k (no
	// byte carries: all counts add up to n ≤ 255).
	const ones = 0x0101010101010101
	var c uint64
	for i := 0; i < 256; i += 8 {
		if i > nb {
			break
		}
		e := end[i : i+8 : i+8]
		p := binary.LittleEndian.Uint64(e) * ones
		binary.LittleEndian.PutUint64(e, p<<8+c*ones)
		c += p >> 56
	}
	w256 := (*[windowArray]float64)(s.sorted[:windowArray])
	key = key[:len(v)]
	n4 := len(v) &^ 3
	for i := 0; i < n4; i += 4 { // in order: equal buckets follow each other
		x := v[i : i+4 : i+4]
		k := key[i : i+4 : i+4]
		b0 := k[0]
		p := end[b0]
		w256[p] = x[0]
		end[b0] = p + 1
		b1 := k[1]
		p = end[b1]
		w256[p] = x[1]
		end[b1] = p + 1
		b2 := k[2]
		p = end[b2]
		w256[p] = x[2]
		end[b2] = p + 1
		b3 := k[3]
		p = end[b3]
		w256[p] = x[3]
		end[b3] = p + 1
	}
	for i := n4; i < len(v); i++ {
		b := key[i]
		p := end[b]
		w256[p] = v[i]
		end[b] = p + 1
	}
	// end[b] is now the position after bucket b: bucket b holds position
	// p when end[b−1] ≤ p < end[b]. The value at position p of the bucket
	// order is one of that bucket's, so its bucket is that of the value.
	if cap(s.posBucket) < len(pos) {
		s.posBucket = make([]uint8, len(pos))
	}
	pb := s.posBucket[:len(pos)]
	for j, p := range pos {
		pb[j] = uint8(int((w256[uint8(p)] - lo) * scale))
	}
	// A bucket of at most four values is read through a window of four:
	// its values, then larger ones (of the next buckets, or +Inf past the
	// last value), whose stable sort starts with the bucket's values
	// stably sorted. A longer bucket is sorted on its own.
	w256[n], w256[n+1], w256[n+2] = posInf, posInf, posInf
	stat := s.stat[:n]
	long := -1
	for j, p := range pos {
		b := pb[j]
		start := 0
		if b > 0 {
			start = int(end[b-1])
		}
		if int(end[b])-start <= 4 {
			// The stable sort of the window without branches: each
			// value goes to its rank, the number of values before it
			// not greater and of values after it smaller (sort4's
			// ranks, written out here because a call to sort4 is not
			// inlined on this path, taken for every wanted position).
			x := w256[start : start+4 : start+4]
			a, b, c, d := x[0], x[1], x[2], x[3]
			ra := b2i(b < a) + b2i(c < a) + b2i(d < a)
			rb := b2i(a <= b) + b2i(c < b) + b2i(d < b)
			rc := b2i(a <= c) + b2i(b <= c) + b2i(d < c)
			rd := b2i(a <= d) + b2i(b <= d) + b2i(c <= d)
			var t [4]float64
			t[ra&3], t[rb&3], t[rc&3], t[rd&3] = a, b, c, d
			stat[p] = t[(p-start)&3]
		} else if int(b) != long {
			long = int(b)
			k := j + 1
			for k < len(pos) && pb[k] == b {
				k++
			}
			s.selectBucket(w256[start:end[b]], pos[j:k], start, stat)
		}
	}
	return stat
}

// windowArray is the length of the arrays narrowStatistics indexes by a
// byte and reads windows of four values from: 255 values and their
// padding.
const windowArray = 260

// posInf pads the windows of narrowStatistics.
var posInf = math.Inf(1)

// counter is the type of the bucket counters: bytes for cells of at most
// 255 values, int32 for longer ones.
type counter interface{ ~uint8 | ~int32 }

// countInto is the bucket pass of s over v: it clears end, stores the
// bucket of each value in s.key and counts the values of each bucket in
// end, and, when s.squares, sets s.ss to sumSquares(v, s.mean) in the same
// pass (haveSS).
func countInto[C counter](s *quantScratch, v []float64, lo, scale float64, end *[256]C) {
	clear(end[:])
	key := s.key[:len(v)]
	if s.squares {
		s.ss, s.haveSS = countSquares(v, lo, scale, key, end, s.mean), true
	} else {
		count(v, lo, scale, key, end)
	}
}

// count stores the bucket of each value of v in key and counts the values
// of each bucket in end.
func count[C counter](v []float64, lo, scale float64, key []uint8, end *[256]C) {
	key = key[:len(v)]
	for len(v) >= 4 && len(key) >= 4 {
		b0 := uint8(int((v[0] - lo) * scale))
		b1 := uint8(int((v[1] - lo) * scale))
		b2 := uint8(int((v[2] - lo) * scale))
		b3 := uint8(int((v[3] - lo) * scale))
		key[0], key[1], key[2], key[3] = b0, b1, b2, b3
		end[b0]++
		end[b1]++
		end[b2]++
		end[b3]++
		v, key = v[4:], key[4:]
	}
	for i, x := range v {
		b := uint8(int((x - lo) * scale))
		key[i] = b
		end[b]++
	}
}

// countSquares is count that also returns sumSquares(v, m), the same
// additions in the same order: the variance's pass shares the bucket pass's
// loads.
func countSquares[C counter](v []float64, lo, scale float64, key []uint8, end *[256]C, m float64) float64 {
	key = key[:len(v)]
	var s0, s1, s2, s3 float64
	n8 := len(v) &^ 7
	for i := 0; i < n8; i += 8 { // eight values a step, as two of four
		x := v[i : i+8 : i+8]
		k := key[i : i+8 : i+8]
		x0, x1, x2, x3, x4, x5, x6, x7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		b0 := uint8(int((x0 - lo) * scale))
		b1 := uint8(int((x1 - lo) * scale))
		b2 := uint8(int((x2 - lo) * scale))
		b3 := uint8(int((x3 - lo) * scale))
		b4 := uint8(int((x4 - lo) * scale))
		b5 := uint8(int((x5 - lo) * scale))
		b6 := uint8(int((x6 - lo) * scale))
		b7 := uint8(int((x7 - lo) * scale))
		k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7] = b0, b1, b2, b3, b4, b5, b6, b7
		end[b0]++
		end[b1]++
		end[b2]++
		end[b3]++
		end[b4]++
		end[b5]++
		end[b6]++
		end[b7]++
		d0, d1, d2, d3 := x0-m, x1-m, x2-m, x3-m
		d4, d5, d6, d7 := x4-m, x5-m, x6-m, x7-m
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s0 += d4 * d4
		s1 += d5 * d5
		s2 += d6 * d6
		s3 += d7 * d7
	}
	v, key = v[n8:], key[n8:]
	for len(v) >= 4 && len(key) >= 4 {
		x0, x1, x2, x3 := v[0], v[1], v[2], v[3]
		b0 := uint8(int((x0 - lo) * scale))
		b1 := uint8(int((x1 - lo) * scale))
		b2 := uint8(int((x2 - lo) * scale))
		b3 := uint8(int((x3 - lo) * scale))
		key[0], key[1], key[2], key[3] = b0, b1, b2, b3
		end[b0]++
		end[b1]++
		end[b2]++
		end[b3]++
		d0, d1, d2, d3 := x0-m, x1-m, x2-m, x3-m
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		v, key = v[4:], key[4:]
	}
	for i, x := range v {
		b := uint8(int((x - lo) * scale))
		key[i] = b
		end[b]++
		d := x - m
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// maxDepth is the number of times a long bucket is bucketed again before
// it is sorted by slices.SortStableFunc.
const maxDepth = 3

// selectBucket sets stat[p], for the positions pos (ascending, each in
// [off, off+len(u))) of a bucket u whose first value is at position off of
// its cell, to the values a stable sort of the cell puts there. u is left
// unchanged: its values are sorted in a copy. A short bucket is sorted by
// insertion; a long one whose values are all equal is already in order;
// another long one (clustered values, an outlier far from them, values
// equal to the minimum mixed with a few others) is bucketed again between
// its own extremes, down to maxDepth levels.
func (s *quantScratch) selectBucket(u []float64, pos []int, off int, stat []float64) {
	if len(u) <= smallBucket {
		s.tmp = append(s.tmp[:0], u...)
		sortStable(s.tmp)
		u = s.tmp
	} else if lo, hi := firstExtremes(u); lo == hi {
		// All equal: in realisation order.
	} else if s.depth >= maxDepth {
		s.tmp = append(s.tmp[:0], u...)
		slices.SortStableFunc(s.tmp, cmp.Compare[float64])
		u = s.tmp
	} else {
		if s.sub == nil {
			s.sub = &quantScratch{depth: s.depth + 1}
		}
		s.subPos = s.subPos[:0]
		for _, p := range pos {
			s.subPos = append(s.subPos, p-off)
		}
		u = orderStatistics(u, lo, hi, s.subPos, s.sub)
	}
	for _, p := range pos {
		stat[p] = u[p-off]
	}
}

// above returns the number and the sum of the values of w greater than c,
// w the values in the bucket order of the last orderStatistics
// (s.sorted[:n]) and c in [lo, hi), between their smallest and largest
// values. Values in the buckets after c's are above c, values in the
// buckets before it are not (the bucket map keeps the order): only c's
// bucket is compared with c. The sum is that bucket's masked sum
// (countAbove) plus the sum of the later positions of w, a fixed order.
func (s *quantScratch) above(w []float64, c float64) (count int, total float64) {
	a, e := 0, len(w)
	if s.nb > 0 {
		b := int(uint8(int((c - s.lo) * s.scale)))
		if b > 0 {
			a = s.bucketEnd(b - 1)
		}
		e = s.bucketEnd(b)
	}
	count, total = countAbove(w[a:e], c)
	if e < len(w) {
		count += len(w) - e
		total += sum(w[e:])
	}
	return count, total
}

// bucketEnd is the position after bucket b in the bucket order of the last
// orderStatistics (its ends are bytes when it was narrow).
func (s *quantScratch) bucketEnd(b int) int {
	if s.narrow {
		return int(s.end8[b])
	}
	return int(s.end[b])
}

// sortStable sorts w by value, equal values (−0 and +0) keeping their order.
func sortStable(w []float64) {
	switch len(w) {
	case 0, 1:
		return
	case 2:
		if w[1] < w[0] {
			w[0], w[1] = w[1], w[0]
		}
		return
	case 3:
		sort3(w)
		return
	case 4:
		sort4(w)
		return
	}
	if len(w) <= smallBucket {
		insertionSort(w)
		return
	}
	slices.SortStableFunc(w, cmp.Compare[float64])
}

// sort3 sorts the three values of w stably without branches: each value
// goes to its rank, the number of values before it not greater and of
// values after it smaller (−0 and +0 compare equal, so keep their order).
func sort3(w []float64) {
	a, b, c := w[0], w[1], w[2]
	w = w[:3]
	ra := b2i(b < a) + b2i(c < a)
	rb := b2i(a <= b) + b2i(c < b)
	rc := b2i(a <= c) + b2i(b <= c)
	w[ra], w[rb], w[rc] = a, b, c
}

// sort4 is sort3 for four values.
func sort4(w []float64) {
	a, b, c, d := w[0], w[1], w[2], w[3]
	w = w[:4]
	ra := b2i(b < a) + b2i(c < a) + b2i(d < a)
	rb := b2i(a <= b) + b2i(c < b) + b2i(d < b)
	rc := b2i(a <= c) + b2i(b <= c) + b2i(d < c)
	rd := b2i(a <= d) + b2i(b <= d) + b2i(c <= d)
	w[ra&3], w[rb&3], w[rc&3], w[rd&3] = a, b, c, d
}

// insertionSort sorts w stably.
func insertionSort(w []float64) {
	for i := 1; i < len(w); i++ {
		x := w[i]
		j := i
		for ; j > 0 && w[j-1] > x; j-- {
			w[j] = w[j-1]
		}
		w[j] = x
	}
}

// quantileAt returns the quantile at level q of the n = len(w) values whose
// order statistics orderStatistics put in w (the positions wantedPositions
// named for q): linear interpolation between x_(k) and x_(k+1) at
// h = q·(n−1), k = ⌊h⌋, written as numpy writes it (from the lower value
// when the fraction is below ½, from the upper one otherwise), exact at both
// ends.
func quantileAt(w []float64, q float64) float64 {
	h := q * float64(len(w)-1)
	k := int(h)
	t := h - float64(k)
	if t == 0 || k+1 >= len(w) {
		return w[k]
	}
	a, b := w[k], w[k+1]
	d := b - a
	if math.IsInf(d, 0) { // a and b finite, their difference overflows
		return a*(1-t) + b*t
	}
	if t < 0.5 {
		return a + d*t
	}
	return b - d*(1-t)
}

// b2i is 1 for true and 0 for false; the compiler makes it a SETcc.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
