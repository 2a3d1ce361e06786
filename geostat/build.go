package geostat

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
)

// BuildDistribution builds the non-parametric distribution of data values,
// optionally weighted (declustering weights), with optional power-model
// tails: the table of the continuous-distribution task.
//
// The table is that of ScoreTable (docs/math.md section 5): the values sorted
// ascending (equal values keep their input order), the weights normalised to
// sum 1 and, for the value of rank i, the mid-step cumulative probability
// p_i = (cw_{i−1} + cw_i)/2 of the normalised cumulative weights (with n
// equal weights p_i = (i − ½)/n). Equal values keep separate nodes.
//
// values: a NaN value is missing and skipped with its weight; an infinite
// value is an error. weights: nil for equal weights, otherwise one per value;
// the weight of every non-missing value must be finite and > 0 (zero,
// negative, NaN and infinite weights are errors naming the first offending
// index). At least one value must be present.
//
// lower and upper are the tails in the object's terms (Tail; the zero Tail
// is "no_extrapolation"; LowerPowerTail and UpperPowerTail convert the task's
// request form). A lower tail's min must be strictly below the smallest value
// and an upper tail's max strictly above the largest.
func BuildDistribution(values, weights []float64, lower, upper Tail) (*Distribution, error) {
	if weights != nil && len(weights) != len(values) {
		return nil, fmt.Errorf("weights: %d weights for %d values", len(weights), len(values))
	}
	present := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		if math.IsInf(v, 0) {
			return nil, fmt.Errorf("values[%d]: %v is not a finite number", i, v)
		}
		if weights != nil {
			if w := weights[i]; !(w > 0) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("weights[%d]: %v: every weight of a value must be a finite number > 0", i, w)
			}
		}
		present++
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if present == 0 {
		return nil, fmt.Errorf("values: no value to build a distribution from (%d values, all missing)", len(values))
	}
	if lower.Extrapolates() && !(lower.Bound < lo) {
		return nil, fmt.Errorf("tail_extrapolation.lower.min: %v must be below the smallest value %v", lower.Bound, lo)
	}
	if upper.Extrapolates() && !(upper.Bound > hi) {
		return nil, fmt.Errorf("tail_extrapolation.upper.max: %v must be above the largest value %v", upper.Bound, hi)
	}
	z, p, err := ScoreTable(values, weights)
	if err != nil {
		return nil, err
	}
	return NewDistribution(z, p, lower, upper)
}

// LowerPowerTail converts the lower tail of a continuous-distribution request
// ({"min", "power"} with power in (0, 1], "the denominator of the exponent")
// into the object's power model: Tail{Bound: min, Power: 1/power}, so that
//
//	F(z) = p₁ ((z − min)/(z₁ − min))^(1/power)   for min ≤ z ≤ z₁.
//
// The object schema requires a lower power ≥ 1 while the task accepts
// (0, 1]: storing the reciprocal keeps the object valid and makes power the
// denominator of the exponent. power = 1 is a linear tail (uniform density);
// smaller powers thin the density out towards min, as they do towards max
// in UpperPowerTail. The error names the request member.
func LowerPowerTail(min, power float64) (Tail, error) {
	if err := checkTail("tail_extrapolation.lower", "min", min, power); err != nil {
		return Tail{}, err
	}
	return Tail{Bound: min, Power: 1 / power}, nil
}

// UpperPowerTail converts the upper tail of a continuous-distribution request
// ({"max", "power"}, power in (0, 1]) into the object's power model, which
// takes the power as it is (the schema's range is also (0, 1]):
//
//	F(z) = pₙ + (1 − pₙ)((z − zₙ)/(max − zₙ))^power   for zₙ ≤ z ≤ max.
func UpperPowerTail(max, power float64) (Tail, error) {
	if err := checkTail("tail_extrapolation.upper", "max", max, power); err != nil {
		return Tail{}, err
	}
	return Tail{Bound: max, Power: power}, nil
}

func checkTail(name, bound string, b, power float64) error {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return fmt.Errorf("%s.%s: %v is not a finite number", name, bound, b)
	}
	if !(power > 0 && power <= 1) {
		return fmt.Errorf("%s.power: %v must be in (0, 1]", name, power)
	}
	return nil
}

// Tails returns the lower and upper tails of the distribution.
func (d *Distribution) Tails() (lower, upper Tail) { return d.lower, d.upper }

// EncodeTail encodes a tail as the CDF component's member: the string
// "no_extrapolation" or {"power_model": {"min"|"max": bound, "power": ω}}
// (upper selects max). It is the inverse of DecodeTail.
func EncodeTail(t Tail, upper bool) json.RawMessage {
	if !t.Extrapolates() {
		return json.RawMessage(`"no_extrapolation"`)
	}
	bound := "min"
	if upper {
		bound = "max"
	}
	b, err := json.Marshal(map[string]map[string]float64{"power_model": {bound: t.Bound, "power": t.Power}})
	if err != nil {
		// Only non-finite numbers fail, which a Distribution's tails never
		// hold.
		panic(fmt.Sprintf("geostat: encoding tail %+v: %v", t, err))
	}
	return b
}

// transformChunk is the number of values a goroutine transforms at a time.
const transformChunk = 1 << 14

// NormalScoresAll writes the normal score y = G⁻¹(F(z)) of every src[i] into
// dst[i] (NormalScore): NaN, a missing value, stays NaN. It is
// NormalScores for large arrays: on geostat.Workers(ctx) goroutines, the
// result independent of their number (each value is transformed alone),
// progress (when not nil) after each chunk with the number of values done
// and the total, from one goroutine at a time, and a cancelled ctx stopping
// it with an error wrapping ctx.Err(). dst and src may be the same slice;
// dst must have len(src) entries.
func (d *Distribution) NormalScoresAll(ctx context.Context, dst, src []float64, progress func(done, total int)) error {
	return d.transformAll(ctx, dst, src, progress, d.NormalScore)
}

// BackTransformsAll writes the back-transform z = F⁻¹(G(y)) of every
// src[i] into dst[i] (BackTransform), like NormalScoresAll.
func (d *Distribution) BackTransformsAll(ctx context.Context, dst, src []float64, progress func(done, total int)) error {
	return d.transformAll(ctx, dst, src, progress, d.BackTransform)
}

func (d *Distribution) transformAll(ctx context.Context, dst, src []float64, progress func(done, total int), f func(float64) float64) error {
	if len(dst) != len(src) {
		return fmt.Errorf("dst: %d entries for %d values", len(dst), len(src))
	}
	total := len(src)
	if total == 0 {
		return nil
	}
	chunks := (total + transformChunk - 1) / transformChunk
	n, err := ForChunks(ctx, total, min(Workers(ctx), chunks), transformChunk, progress, func(int) func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = f(src[i])
			}
		}
	})
	if err != nil {
		return fmt.Errorf("transform stopped after %d of %d values: %w", n, total, err)
	}
	return nil
}
