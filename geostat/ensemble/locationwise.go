package ensemble

import (
	"context"
	"fmt"
	"math"
)

// Operations selects the location-wise statistics to compute; any
// combination, at least one.
type Operations struct {
	// Summary asks for the minimum, maximum, mean and variance.
	Summary bool
	// Quantiles are quantile levels in [0, 1].
	Quantiles []float64
	// ProbabilityAbove are cutoffs c for P(X > c).
	ProbabilityAbove []float64
	// MeanAbove are cutoffs c for E[X | X > c].
	MeanAbove []float64
}

// Validate returns a *FieldError naming the offending member (with the
// task's member names: quantiles, probability_above_cutoff.cutoffs,
// mean_above_cutoff.cutoffs) when no operation is requested or a level or
// cutoff is not valid. Quantile levels must lie in [0, 1]; cutoffs must be
// finite; a list must not repeat a value (each output has its own name).
func (o Operations) Validate() error {
	if !o.Summary && len(o.Quantiles) == 0 && len(o.ProbabilityAbove) == 0 && len(o.MeanAbove) == 0 {
		return fieldError("", "no operation requested: set summary, quantiles, probability_above_cutoff or mean_above_cutoff")
	}
	for i, q := range o.Quantiles {
		if !(q >= 0 && q <= 1) {
			return fieldError(fmt.Sprintf("quantiles[%d]", i), "%v is outside [0, 1]", q)
		}
	}
	if err := distinct("quantiles", o.Quantiles); err != nil {
		return err
	}
	for _, l := range []struct {
		name string
		v    []float64
	}{{"probability_above_cutoff.cutoffs", o.ProbabilityAbove}, {"mean_above_cutoff.cutoffs", o.MeanAbove}} {
		for i, c := range l.v {
			if math.IsNaN(c) || math.IsInf(c, 0) {
				return fieldError(fmt.Sprintf("%s[%d]", l.name, i), "%v is not a finite number", c)
			}
		}
		if err := distinct(l.name, l.v); err != nil {
			return err
		}
	}
	return nil
}

// distinct refuses a repeated level: its output name would be written twice.
func distinct(name string, v []float64) error {
	for i := range v {
		for j := 0; j < i; j++ {
			if v[i] == v[j] {
				return fieldError(fmt.Sprintf("%s[%d]", name, i), "%v repeats %s[%d]", v[i], name, j)
			}
		}
	}
	return nil
}

// Statistics holds the location-wise outputs, one value per cell; NaN is a
// missing value. Slices of operations not requested are nil.
type Statistics struct {
	// Min, Max, Mean and Variance are the summary (Operations.Summary).
	Min, Max, Mean, Variance []float64
	// Quantiles[k] is the quantile at level Operations.Quantiles[k].
	Quantiles [][]float64
	// ProbabilityAbove[k] is P(X > Operations.ProbabilityAbove[k]).
	ProbabilityAbove [][]float64
	// MeanAbove[k] is E[X | X > Operations.MeanAbove[k]].
	MeanAbove [][]float64
}

// LocationWise computes per-cell statistics over the realisations of an
// ensemble (a Reducer). With x_1 … x_n the finite values of a cell (NaN and
// ±Inf are missing and skipped; n ≤ R):
//
//	min, max      the smallest and largest x_r
//	mean          m = (x_1 + … + x_n) / n
//	variance      Σ (x_r − m)² / n   (divisor n, the population variance,
//	              numpy's default ddof = 0)
//	quantile q    linear interpolation between order statistics at position
//	              h = q·(n − 1): with x_(0) ≤ … ≤ x_(n−1), k = ⌊h⌋,
//	              Q(q) = x_(k) + (h − k)·(x_(k+1) − x_(k))
//	              (numpy's default method "linear", R type 7; Q(0) = min,
//	              Q(1) = max, Q(0.5) the usual median)
//	P(X > c)      #{r : x_r > c} / n   (strictly greater: a value equal to
//	              the cutoff is not above it)
//	E[X | X > c]  the mean of the x_r > c
//
// The order statistics x_(k) are those of the values sorted stably (equal
// values, which only −0 and +0 can be while differing, keep their
// realisation order). They are found without sorting the cell: a counting
// sort into buckets of equal width between the minimum and the maximum
// (bucket ⌊(x − min)·B/(max − min)⌋, B = 63 when 16 < n ≤ 25, 127 when
// 25 < n ≤ 51, 255 when 51 < n ≤ 255, 128 when n > 255; a cell of at most
// 16 values, or whose range overflows this map, is one bucket), the
// values of a bucket in realisation order (the bucket order), then a sort
// of only the buckets that hold a wanted position (a long one bucketed
// again between its own extremes); the values found are exactly those of
// the full sort.
//
// Sums run in a fixed order, so every output is a function of the cell's
// values alone: the mean's and the variance's over the values in
// realisation order in four interleaved partial sums (positions 0, 4, 8, …;
// 1, 5, 9, …; …) added as (s0 + s1) + (s2 + s3). The sum of the values
// above a cutoff runs in the same way over the values in realisation order
// when no quantile is requested, a value not above c adding +0. Otherwise
// it runs over the values in bucket order: the values of the bucket holding
// c so (not above c adding +0), plus, added last, the values of the later
// buckets summed in the same way; when c is below the minimum it is the
// mean's sum (so E[X | X > c] = mean). A cell without finite values (n = 0)
// gets NaN for every output, the probability included; E[X | X > c] is NaN
// when no value exceeds c. Results are bit-identical for any number of
// goroutines and any tiling.
type LocationWise struct {
	ops   Operations
	out   Statistics
	nreal int
	ncell int
	// qlevels are the quantile levels; see wantedPositions.
	qlevels []float64
	// cuts are the distinct cutoffs of both lists; probAt[k] and meanAt[k]
	// index the cutoff of ProbabilityAbove[k] and MeanAbove[k] in it, so a
	// cutoff asked for both is counted once.
	cuts           []float64
	probAt, meanAt []int
}

// NewLocationWise validates ops and allocates the outputs for an ensemble of
// cells cells and realisations realisations (≥ 1). Every output starts as
// NaN, so cells no tile covers stay missing.
func NewLocationWise(ops Operations, cells, realisations int) (*LocationWise, error) {
	if err := ops.Validate(); err != nil {
		return nil, err
	}
	if cells < 0 || realisations < 1 {
		return nil, fmt.Errorf("ensemble: %d cells × %d realisations", cells, realisations)
	}
	l := &LocationWise{ops: ops, nreal: realisations, ncell: cells}
	l.ops.Quantiles = append([]float64(nil), ops.Quantiles...)
	l.ops.ProbabilityAbove = append([]float64(nil), ops.ProbabilityAbove...)
	l.ops.MeanAbove = append([]float64(nil), ops.MeanAbove...)
	col := func() []float64 {
		v := make([]float64, cells)
		for i := range v {
			v[i] = nan
		}
		return v
	}
	if ops.Summary {
		l.out.Min, l.out.Max, l.out.Mean, l.out.Variance = col(), col(), col(), col()
	}
	cols := func(k int) [][]float64 {
		if k == 0 {
			return nil
		}
		out := make([][]float64, k)
		for i := range out {
			out[i] = col()
		}
		return out
	}
	l.out.Quantiles = cols(len(ops.Quantiles))
	l.out.ProbabilityAbove = cols(len(ops.ProbabilityAbove))
	l.out.MeanAbove = cols(len(ops.MeanAbove))
	l.qlevels = l.ops.Quantiles
	index := func(c float64) int {
		for j, x := range l.cuts {
			if x == c {
				return j
			}
		}
		l.cuts = append(l.cuts, c)
		return len(l.cuts) - 1
	}
	for _, c := range l.ops.ProbabilityAbove {
		l.probAt = append(l.probAt, index(c))
	}
	for _, c := range l.ops.MeanAbove {
		l.meanAt = append(l.meanAt, index(c))
	}
	return l, nil
}

// Statistics returns the outputs (filled by ProcessTile or Process).
func (l *LocationWise) Statistics() *Statistics { return &l.out }

// Reset sets every output of every cell back to NaN, as NewLocationWise
// leaves them, so that l can serve another block of cells: a caller
// streaming an ensemble through a reducer of one tile's cells (tile cells
// 0 … n−1) and writing its outputs away after each tile resets it before
// the next, and gets the outputs a reducer of every cell would hold.
func (l *LocationWise) Reset() {
	for _, o := range l.Outputs() {
		for i := range o.Values {
			o.Values[i] = nan
		}
	}
}

// Operations returns the operations l computes.
func (l *LocationWise) Operations() Operations { return l.ops }

func (l *LocationWise) realisations() int { return l.nreal }
func (l *LocationWise) cells() int        { return l.ncell }

func (l *LocationWise) reduce(cell int, v []float64, s *scratch) {
	n := len(v)
	if n == 0 {
		return // outputs stay NaN
	}
	o := &l.out
	var total, lo, hi, m float64
	if o.Min != nil || len(l.qlevels) > 0 {
		total, lo, hi = sumMinMax(v) // branch-free, unlike firstExtremes
		m = total / float64(n)
	}
	if o.Min != nil {
		o.Min[cell], o.Max[cell], o.Mean[cell] = lo, hi, m
	}
	var w []float64 // the order statistics, when there are quantiles
	q := &s.quant
	if len(l.qlevels) > 0 {
		pos := q.positions(l.qlevels, n)
		q.squares, q.mean = o.Min != nil, m
		w = orderStatistics(v, lo, hi, pos, q)
		for k, level := range l.qlevels {
			o.Quantiles[k][cell] = quantileAt(w, level)
		}
	}
	if o.Min != nil {
		ss := q.ss
		if w == nil || !q.haveSS {
			ss = sumSquares(v, m)
		}
		o.Variance[cell] = ss / float64(n)
	}
	if len(l.cuts) > 0 {
		if cap(s.above) < len(l.cuts) {
			s.above, s.sumAbove = make([]int, len(l.cuts)), make([]float64, len(l.cuts))
		}
		if w != nil {
			for j, c := range l.cuts {
				if c < lo { // every value: the sum in realisation order, as the mean's
					s.above[j], s.sumAbove[j] = n, total
				} else if c >= hi {
					s.above[j], s.sumAbove[j] = 0, 0
				} else {
					s.above[j], s.sumAbove[j] = q.above(q.sorted[:n], c)
				}
			}
		} else {
			j := 0
			for ; j+2 <= len(l.cuts); j += 2 {
				s.above[j], s.sumAbove[j], s.above[j+1], s.sumAbove[j+1] = countAbove2(v, l.cuts[j], l.cuts[j+1])
			}
			if j < len(l.cuts) {
				s.above[j], s.sumAbove[j] = countAbove(v, l.cuts[j])
			}
		}
		for k, j := range l.probAt {
			o.ProbabilityAbove[k][cell] = float64(s.above[j]) / float64(n)
		}
		for k, j := range l.meanAt {
			if s.above[j] > 0 {
				o.MeanAbove[k][cell] = s.sumAbove[j] / float64(s.above[j])
			}
		}
	}
}

// Run computes the statistics of every cell of src (Process with l alone)
// and returns them.
func (l *LocationWise) Run(ctx context.Context, src Source) (*Statistics, error) {
	if err := Process(ctx, src, l); err != nil {
		return nil, err
	}
	return &l.out, nil
}

// Compute is NewLocationWise followed by Run over src.
func Compute(ctx context.Context, src Source, ops Operations) (*Statistics, error) {
	l, err := NewLocationWise(ops, src.Cells(), src.Realisations())
	if err != nil {
		return nil, err
	}
	return l.Run(ctx, src)
}

// Output is one named per-cell output.
type Output struct {
	// Name is the attribute name (see LocationWise.Outputs).
	Name string
	// Level is the quantile level or the cutoff the output is for (0 for
	// the summary).
	Level float64
	// Values has one value per cell, NaN where missing.
	Values []float64
}

// Outputs returns the computed outputs with their attribute names, in the
// order summary (min, max, mean, variance), quantiles, probabilities above
// cutoffs, means above cutoffs, each list in request order. Names are
// "min", "max", "mean", "variance", "Quantile: q", "Prob>c" and "Mean>c",
// the numbers written by FormatNumber (0.1 → "0.1", 2 → "2.0").
func (l *LocationWise) Outputs() []Output {
	var out []Output
	if l.out.Min != nil {
		out = append(out, Output{Name: "min", Values: l.out.Min}, Output{Name: "max", Values: l.out.Max},
			Output{Name: "mean", Values: l.out.Mean}, Output{Name: "variance", Values: l.out.Variance})
	}
	for k, q := range l.ops.Quantiles {
		out = append(out, Output{Name: "Quantile: " + FormatNumber(q), Level: q, Values: l.out.Quantiles[k]})
	}
	for k, c := range l.ops.ProbabilityAbove {
		out = append(out, Output{Name: "Prob>" + FormatNumber(c), Level: c, Values: l.out.ProbabilityAbove[k]})
	}
	for k, c := range l.ops.MeanAbove {
		out = append(out, Output{Name: "Mean>" + FormatNumber(c), Level: c, Values: l.out.MeanAbove[k]})
	}
	return out
}

// The sums below keep four partial sums, of the values at positions 0, 4,
// 8, … and 1, 5, 9, … and so on, added as (s0 + s1) + (s2 + s3) at the end:
// four independent chains of additions instead of one, which a core runs in
// parallel. The order is fixed, so a sum is a function of the values alone.

// sum returns the sum of v.
func sum(v []float64) float64 {
	var s0, s1, s2, s3 float64
	n8 := len(v) &^ 7
	for i := 0; i < n8; i += 8 { // eight values a step, as two of four
		x := v[i : i+8 : i+8]
		s0 += x[0]
		s1 += x[1]
		s2 += x[2]
		s3 += x[3]
		s0 += x[4]
		s1 += x[5]
		s2 += x[6]
		s3 += x[7]
	}
	v = v[n8:]
	if len(v) >= 4 {
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		v = v[4:]
	}
	switch len(v) {
	case 3:
		s2 += v[2]
		fallthrough
	case 2:
		s1 += v[1]
		fallthrough
	case 1:
		s0 += v[0]
	}
	return (s0 + s1) + (s2 + s3)
}

// sumMinMax returns sum(v) (the same additions in the same order) and the
// smallest and largest values of v (len(v) ≥ 1, finite values) in one pass,
// the extremes those of a sequential scan (firstExtremes: among equal
// extremes, −0 and +0, the first in v). The extremes are found branch-free
// on the bits of the values read as integers, which order the values with
// the sign bit clear (+0 and the positive values) as the values; when a
// value has its sign bit set (a negative value or −0) the extremes are
// found again by minMaxKeys.
func sumMinMax(v []float64) (total, lo, hi float64) {
	var s0, s1, s2, s3 float64
	l0 := int64(math.Float64bits(v[0]))
	h0, l1, h1 := l0, l0, l0
	n8 := len(v) &^ 7
	for i := 0; i < n8; i += 8 { // eight values a step, as two of four
		x := v[i : i+8 : i+8]
		x0, x1, x2, x3, x4, x5, x6, x7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		s0 += x0
		s1 += x1
		s2 += x2
		s3 += x3
		s0 += x4
		s1 += x5
		s2 += x6
		s3 += x7
		k0, k1 := int64(math.Float64bits(x0)), int64(math.Float64bits(x1))
		k2, k3 := int64(math.Float64bits(x2)), int64(math.Float64bits(x3))
		k4, k5 := int64(math.Float64bits(x4)), int64(math.Float64bits(x5))
		k6, k7 := int64(math.Float64bits(x6)), int64(math.Float64bits(x7))
		l0, h0 = min(l0, k0, k2, k4, k6), max(h0, k0, k2, k4, k6)
		l1, h1 = min(l1, k1, k3, k5, k7), max(h1, k1, k3, k5, k7)
	}
	u := v[n8:]
	if len(u) >= 4 {
		x0, x1, x2, x3 := u[0], u[1], u[2], u[3]
		u = u[4:]
		s0 += x0
		s1 += x1
		s2 += x2
		s3 += x3
		k0, k1 := int64(math.Float64bits(x0)), int64(math.Float64bits(x1))
		k2, k3 := int64(math.Float64bits(x2)), int64(math.Float64bits(x3))
		l0, h0 = min(l0, k0, k2), max(h0, k0, k2)
		l1, h1 = min(l1, k1, k3), max(h1, k1, k3)
	}
	for k, x := range u {
		switch k {
		case 0:
			s0 += x
		case 1:
			s1 += x
		default:
			s2 += x
		}
		kx := int64(math.Float64bits(x))
		l0, h0 = min(l0, kx), max(h0, kx)
	}
	total = (s0 + s1) + (s2 + s3)
	if l := min(l0, l1); l >= 0 {
		// No sign bit set: the integers order as the values, and equal
		// integers are the same value.
		return total, math.Float64frombits(uint64(l)), math.Float64frombits(uint64(max(h0, h1)))
	}
	lo, hi = minMaxKeys(v)
	return total, lo, hi
}

// minMaxKeys returns firstExtremes(v) (len(v) ≥ 1, finite values): the
// extremes are found on integer keys that order as the values do
// (orderKey), with the branch-free integer min and max, in two lanes; a
// nonzero extreme is the same value whichever equal copy is met first, and
// when an extreme is zero a sequential scan picks it as firstExtremes does
// (the first of −0 and +0 in v).
func minMaxKeys(v []float64) (lo, hi float64) {
	l0 := orderKey(v[0])
	h0, l1, h1 := l0, l0, l0
	u := v
	for len(u) >= 2 {
		k0, k1 := orderKey(u[0]), orderKey(u[1])
		u = u[2:]
		l0, h0 = min(l0, k0), max(h0, k0)
		l1, h1 = min(l1, k1), max(h1, k1)
	}
	for _, x := range u {
		kx := orderKey(x)
		l0, h0 = min(l0, kx), max(h0, kx)
	}
	lo, hi = keyValue(min(l0, l1)), keyValue(max(h0, h1))
	if lo == 0 || hi == 0 {
		lo, hi = firstExtremes(v)
	}
	return lo, hi
}

// orderKey maps a non-NaN float64 to an int64 that orders as the values do
// (−0 before +0): the bits, with those of a negative value but its sign
// flipped.
func orderKey(x float64) int64 {
	b := int64(math.Float64bits(x))
	return b ^ int64(uint64(b>>63)>>1)
}

// keyValue is the inverse of orderKey.
func keyValue(k int64) float64 {
	return math.Float64frombits(uint64(k ^ int64(uint64(k>>63)>>1)))
}

// firstExtremes returns the smallest and largest values of v by a
// sequential scan: among equal extremes (−0 and +0) the first in v.
func firstExtremes(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	return lo, hi
}

// sumSquares returns Σ (x − m)² over v.
func sumSquares(v []float64, m float64) float64 {
	var s0, s1, s2, s3 float64
	for len(v) >= 4 {
		d0, d1, d2, d3 := v[0]-m, v[1]-m, v[2]-m, v[3]-m
		v = v[4:]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for _, x := range v {
		d := x - m
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// countAbove returns the number and the sum of the values of v strictly
// greater than c. Branch-free (values on both sides of a cutoff come in
// random order): a value not above c adds +0, which leaves a sum unchanged.
func countAbove(v []float64, c float64) (count int, total float64) {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		b0, b1, b2, b3 := b2i(v[i] > c), b2i(v[i+1] > c), b2i(v[i+2] > c), b2i(v[i+3] > c)
		count += (b0 + b1) + (b2 + b3)
		s0 += masked(v[i], b0)
		s1 += masked(v[i+1], b1)
		s2 += masked(v[i+2], b2)
		s3 += masked(v[i+3], b3)
	}
	for ; i < len(v); i++ {
		b := b2i(v[i] > c)
		count += b
		s0 += masked(v[i], b)
	}
	return count, (s0 + s1) + (s2 + s3)
}

// countAbove2 is countAbove for the cutoffs c and d in one pass, each
// count and sum formed exactly as countAbove forms it.
func countAbove2(v []float64, c, d float64) (nc int, tc float64, nd int, td float64) {
	var s0, s1, s2, s3, u0, u1, u2, u3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		x0, x1, x2, x3 := v[i], v[i+1], v[i+2], v[i+3]
		b0, b1, b2, b3 := b2i(x0 > c), b2i(x1 > c), b2i(x2 > c), b2i(x3 > c)
		e0, e1, e2, e3 := b2i(x0 > d), b2i(x1 > d), b2i(x2 > d), b2i(x3 > d)
		nc += (b0 + b1) + (b2 + b3)
		nd += (e0 + e1) + (e2 + e3)
		s0 += masked(x0, b0)
		s1 += masked(x1, b1)
		s2 += masked(x2, b2)
		s3 += masked(x3, b3)
		u0 += masked(x0, e0)
		u1 += masked(x1, e1)
		u2 += masked(x2, e2)
		u3 += masked(x3, e3)
	}
	for ; i < len(v); i++ {
		b, e := b2i(v[i] > c), b2i(v[i] > d)
		nc += b
		nd += e
		s0 += masked(v[i], b)
		u0 += masked(v[i], e)
	}
	return nc, (s0 + s1) + (s2 + s3), nd, (u0 + u1) + (u2 + u3)
}

// masked returns x when b is 1 and +0 when b is 0.
func masked(x float64, b int) float64 {
	return math.Float64frombits(math.Float64bits(x) & -uint64(b))
}
