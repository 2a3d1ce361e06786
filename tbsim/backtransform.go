package tbsim

import (
	"math"
	"sort"

	"github.com/geostat-engine/geostat/geostat"
)

// backTransformer computes geostat.Distribution.BackTransform bit for bit,
// replacing the binary search of the table node by a bucket index over the
// probabilities followed by a short scan (the back-transform runs once per
// sub-point and realisation). Values in the tails are delegated to the
// distribution.
type backTransformer struct {
	d      *geostat.Distribution
	z, p   []float64
	p0     float64
	scale  float64 // buckets per unit of probability
	bucket []int32 // first node with p_k ≥ the bucket's lower edge
}

func newBackTransformer(d *geostat.Distribution) *backTransformer {
	n := d.Len()
	bt := &backTransformer{d: d, z: make([]float64, n), p: make([]float64, n)}
	for j := 0; j < n; j++ {
		bt.z[j], bt.p[j] = d.Node(j)
	}
	bt.p0 = bt.p[0]
	m := 4 * n
	if span := bt.p[n-1] - bt.p0; span > 0 {
		bt.scale = float64(m) / span
	}
	bt.bucket = make([]int32, m+1)
	for b := range bt.bucket {
		edge := bt.p0 + float64(b)/bt.scale
		if bt.scale == 0 {
			edge = bt.p0
		}
		bt.bucket[b] = int32(sort.SearchFloat64s(bt.p, edge))
	}
	return bt
}

// at returns F⁻¹(G(y)).
func (bt *backTransformer) at(y float64) float64 {
	return bt.fromCDF(y, geostat.NormalCDF(y))
}

// transform writes at(y[r]) into z[r] for every r (len(z) ≥ len(y)): first
// all the normal CDFs, then all the table lookups, two passes of
// independent iterations that the processor overlaps, where one call per
// value would wait on each value's chain of erfc, loads and division.
func (bt *backTransformer) transform(z, y []float64) {
	z = z[:len(y)]
	for r, v := range y {
		z[r] = geostat.NormalCDF(v)
	}
	for r, v := range y {
		z[r] = bt.fromCDF(v, z[r])
	}
}

// fromCDF returns at(y) given p = G(y).
func (bt *backTransformer) fromCDF(y, p float64) float64 {
	if math.IsNaN(y) {
		return y
	}
	n := len(bt.p)
	if p < bt.p0 || p > bt.p[n-1] {
		return bt.d.Quantile(p)
	}
	b := int((p - bt.p0) * bt.scale)
	b = min(max(b, 0), len(bt.bucket)-1)
	k := int(bt.bucket[b])
	// First node with p_k ≥ p, exactly as sort.SearchFloat64s finds it.
	for k > 0 && bt.p[k-1] >= p {
		k--
	}
	for bt.p[k] < p {
		k++
	}
	if bt.p[k] == p {
		return bt.z[k]
	}
	return bt.z[k-1] + (bt.z[k]-bt.z[k-1])*(p-bt.p[k-1])/(bt.p[k]-bt.p[k-1])
}
