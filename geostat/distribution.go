package geostat

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Tail is the extrapolation of a distribution beyond its first or last
// table node.
//
// With Power == 0 there is no extrapolation: values beyond the table clamp to
// the end node (the object's "no_extrapolation"). Otherwise it is the GSLIB
// power model with bound Bound (the lower tail's min or the upper tail's max)
// and exponent Power (docs/math.md section 5):
//
//	lower  F(z) = p₁ ((z − m)/(z₁ − m))^ω              for m ≤ z ≤ z₁
//	upper  F(z) = pₙ + (1 − pₙ)((z − zₙ)/(M − zₙ))^ω   for zₙ ≤ z ≤ M
type Tail struct {
	Bound float64
	Power float64
}

// Extrapolates reports whether the tail is a power model.
func (t Tail) Extrapolates() bool { return t.Power != 0 }

// Distribution is a non-parametric continuous cumulative distribution: a
// table of values z_j (non-decreasing) and cumulative probabilities p_j
// (non-decreasing, strictly inside (0, 1)), with lower and upper tails.
// Between nodes F is linear in z (a piecewise-uniform density), in both
// directions, so NormalScore and BackTransform are exact inverses up to
// rounding. On plateaus (equal z) and jumps (equal p) the lowest node wins
// consistently.
type Distribution struct {
	z, p         []float64
	lower, upper Tail
}

// NewDistribution checks and copies the table. Errors name the problem: an
// empty table, lengths that differ, non-finite entries, decreasing values or
// probabilities, probabilities outside (0, 1), or a tail bound on the wrong
// side of the table or a negative power.
func NewDistribution(values, probs []float64, lower, upper Tail) (*Distribution, error) {
	n := len(values)
	if n == 0 {
		return nil, fmt.Errorf("cdf.values: the distribution table is empty")
	}
	if len(probs) != n {
		return nil, fmt.Errorf("cdf.values: %d values but %d probabilities", n, len(probs))
	}
	for i := 0; i < n; i++ {
		z, p := values[i], probs[i]
		if math.IsNaN(z) || math.IsInf(z, 0) || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("cdf.values: row %d (%v, %v) is not finite", i, z, p)
		}
		if p <= 0 || p >= 1 {
			return nil, fmt.Errorf("cdf.values: row %d probability %v is outside (0, 1)", i, p)
		}
		if i > 0 && (z < values[i-1] || p < probs[i-1]) {
			return nil, fmt.Errorf("cdf.values: row %d (%v, %v) decreases after (%v, %v): the table must be non-decreasing", i, z, p, values[i-1], probs[i-1])
		}
	}
	if lower.Extrapolates() {
		if lower.Power < 0 || math.IsNaN(lower.Power) || math.IsInf(lower.Power, 0) {
			return nil, fmt.Errorf("cdf.lower_tail_extrapolation.power_model.power: %v must be positive", lower.Power)
		}
		if !(lower.Bound <= values[0]) {
			return nil, fmt.Errorf("cdf.lower_tail_extrapolation.power_model.min: %v is above the first value %v", lower.Bound, values[0])
		}
	}
	if upper.Extrapolates() {
		if upper.Power < 0 || math.IsNaN(upper.Power) || math.IsInf(upper.Power, 0) {
			return nil, fmt.Errorf("cdf.upper_tail_extrapolation.power_model.power: %v must be positive", upper.Power)
		}
		if !(upper.Bound >= values[n-1]) {
			return nil, fmt.Errorf("cdf.upper_tail_extrapolation.power_model.max: %v is below the last value %v", upper.Bound, values[n-1])
		}
	}
	d := &Distribution{z: append([]float64(nil), values...), p: append([]float64(nil), probs...), lower: lower, upper: upper}
	return d, nil
}

// Len returns the number of table nodes.
func (d *Distribution) Len() int { return len(d.z) }

// Node returns the value and cumulative probability of node j.
func (d *Distribution) Node(j int) (z, p float64) { return d.z[j], d.p[j] }

// Min returns the smallest value the distribution produces: the lower tail's
// bound, or the first node without extrapolation.
func (d *Distribution) Min() float64 {
	if d.lower.Extrapolates() {
		return d.lower.Bound
	}
	return d.z[0]
}

// Max returns the largest value the distribution produces.
func (d *Distribution) Max() float64 {
	if d.upper.Extrapolates() {
		return d.upper.Bound
	}
	return d.z[len(d.z)-1]
}

// CDF returns F(z). NaN gives NaN.
func (d *Distribution) CDF(z float64) float64 {
	if math.IsNaN(z) {
		return z
	}
	n := len(d.z)
	if z < d.z[0] {
		t := d.lower
		if !t.Extrapolates() || z <= t.Bound || d.z[0] == t.Bound {
			if t.Extrapolates() {
				return 0
			}
			return d.p[0]
		}
		return d.p[0] * math.Pow((z-t.Bound)/(d.z[0]-t.Bound), t.Power)
	}
	if z > d.z[n-1] {
		t := d.upper
		if !t.Extrapolates() {
			return d.p[n-1]
		}
		if z >= t.Bound {
			return 1
		}
		return d.p[n-1] + (1-d.p[n-1])*math.Pow((z-d.z[n-1])/(t.Bound-d.z[n-1]), t.Power)
	}
	k := sort.SearchFloat64s(d.z, z) // first node with z_k ≥ z
	if d.z[k] == z {
		return d.p[k]
	}
	// z_{k−1} < z < z_k
	return d.p[k-1] + (d.p[k]-d.p[k-1])*(z-d.z[k-1])/(d.z[k]-d.z[k-1])
}

// Quantile returns F⁻¹(p). NaN gives NaN.
func (d *Distribution) Quantile(p float64) float64 {
	if math.IsNaN(p) {
		return p
	}
	n := len(d.p)
	if p < d.p[0] {
		t := d.lower
		if !t.Extrapolates() {
			return d.z[0]
		}
		if p <= 0 {
			return t.Bound
		}
		return t.Bound + (d.z[0]-t.Bound)*math.Pow(p/d.p[0], 1/t.Power)
	}
	if p > d.p[n-1] {
		t := d.upper
		if !t.Extrapolates() {
			return d.z[n-1]
		}
		if p >= 1 {
			return t.Bound
		}
		return d.z[n-1] + (t.Bound-d.z[n-1])*math.Pow((p-d.p[n-1])/(1-d.p[n-1]), 1/t.Power)
	}
	k := sort.SearchFloat64s(d.p, p) // first node with p_k ≥ p
	if d.p[k] == p {
		return d.z[k]
	}
	return d.z[k-1] + (d.z[k]-d.z[k-1])*(p-d.p[k-1])/(d.p[k]-d.p[k-1])
}

// NormalScore returns the forward transform y = G⁻¹(F(z)). NaN gives NaN.
func (d *Distribution) NormalScore(z float64) float64 { return NormalQuantile(d.CDF(z)) }

// BackTransform returns z = F⁻¹(G(y)). NaN gives NaN.
func (d *Distribution) BackTransform(y float64) float64 {
	if math.IsNaN(y) {
		return y
	}
	return d.Quantile(NormalCDF(y))
}

// NormalScores writes NormalScore(src[i]) into dst[i]. dst and src may
// alias; it panics if dst is shorter than src.
func (d *Distribution) NormalScores(dst, src []float64) {
	dst = dst[:len(src)]
	for i, z := range src {
		dst[i] = d.NormalScore(z)
	}
}

// BackTransforms writes BackTransform(src[i]) into dst[i]. dst and src may
// alias; it panics if dst is shorter than src.
func (d *Distribution) BackTransforms(dst, src []float64) {
	dst = dst[:len(src)]
	for i, y := range src {
		dst[i] = d.BackTransform(y)
	}
}

// ScoreTable builds the table of the GSLIB nscore construction from data
// values and optional declustering weights (nil for equal weights): the
// values sorted ascending and, for each, the mid-step cumulative probability
// p_i = (cw_{i−1} + cw_i)/2 of the normalised cumulative weights. For n equal
// weights p_i = (i − ½)/n. NaN values are skipped. Equal values keep
// separate nodes (use a tie-breaking step first for distinct scores).
func ScoreTable(values, weights []float64) (z, p []float64, err error) {
	if weights != nil && len(weights) != len(values) {
		return nil, nil, fmt.Errorf("weights: %d weights for %d values", len(weights), len(values))
	}
	idx := make([]int, 0, len(values))
	total := 0.0
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
			if !(w >= 0) || math.IsInf(w, 0) {
				return nil, nil, fmt.Errorf("weights[%d]: %v must be a finite number ≥ 0", i, w)
			}
		}
		total += w
		idx = append(idx, i)
	}
	if len(idx) == 0 || total <= 0 {
		return nil, nil, fmt.Errorf("values: no value with a positive weight")
	}
	sort.SliceStable(idx, func(a, b int) bool { return values[idx[a]] < values[idx[b]] })
	z = make([]float64, len(idx))
	p = make([]float64, len(idx))
	cum := 0.0
	for k, i := range idx {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		z[k] = values[i]
		p[k] = (cum + cum + w) / (2 * total)
		cum += w
	}
	return z, p, nil
}

// DecodeTail decodes a tail member of the CDF component: the string
// "no_extrapolation" or {"power_model": {"min"|"max": m, "power": ω}}.
// upper selects which bound name is expected.
func DecodeTail(raw json.RawMessage, upper bool) (Tail, error) {
	name, bound := "lower_tail_extrapolation", "min"
	if upper {
		name, bound = "upper_tail_extrapolation", "max"
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "no_extrapolation" {
			return Tail{}, nil
		}
		return Tail{}, fmt.Errorf("cdf.%s: %q is not \"no_extrapolation\" or a power_model", name, s)
	}
	var obj struct {
		PowerModel map[string]*float64 `json:"power_model"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.PowerModel == nil {
		return Tail{}, fmt.Errorf("cdf.%s: want \"no_extrapolation\" or {\"power_model\": {...}}", name)
	}
	b, p := obj.PowerModel[bound], obj.PowerModel["power"]
	if b == nil || p == nil {
		return Tail{}, fmt.Errorf("cdf.%s.power_model: %s and power are required", name, bound)
	}
	if !(*p > 0) || math.IsInf(*p, 0) {
		return Tail{}, fmt.Errorf("cdf.%s.power_model.power: %v must be positive", name, *p)
	}
	return Tail{Bound: *b, Power: *p}, nil
}
