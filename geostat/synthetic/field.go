package synthetic

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// Field is a smooth, approximately Gaussian random field with zero mean whose
// covariance approximates a variogram's structured part: for each structure
// s with contribution c_s and anisotropy A_s, Waves cosines
//
//	f(x) = Σ_s Σ_m √(2 c_s / M) cos(k_m · A_s x + φ_m)
//
// with k_m ~ N(0, 6 I) and φ_m ~ U(0, 2π). Averaged over the random waves its
// covariance is Σ_s c_s exp(−3 |A_s h|²), a gaussian model with the
// structure's (practical) ranges and rotation. The wave vectors are stored
// already multiplied by A_s, so one evaluation costs M cosines per structure.
type Field struct {
	wx, wy, wz, phase, amp []float64
}

// NewField draws the waves of a field for the structures of v (the nugget
// is ignored; see Case for the white-noise part). waves ≥ 1 per structure.
func NewField(seed uint64, v *geostat.Variogram, waves int) (*Field, error) {
	if v == nil || len(v.Structures) == 0 {
		return nil, fmt.Errorf("cases: field needs a variogram with at least one structure")
	}
	if waves < 1 {
		return nil, fmt.Errorf("cases: field waves = %d must be at least 1", waves)
	}
	f := &Field{}
	sd := math.Sqrt(6)
	for s := range v.Structures {
		st := &v.Structures[s]
		if st.Contribution < 0 || st.Type == geostat.Linear {
			return nil, fmt.Errorf("cases: structure %d (%v) cannot be approximated by a stationary field", s, st.Type)
		}
		a := st.Anisotropy().M
		r := stream(seed, purposeWaves, uint64(s))
		amp := math.Sqrt(2 * st.Contribution / float64(waves))
		for m := 0; m < waves; m++ {
			k0, k1, k2 := sd*r.NormFloat64(), sd*r.NormFloat64(), sd*r.NormFloat64()
			// k · (A x) = (Aᵀ k) · x with A row-major.
			f.wx = append(f.wx, k0*a[0]+k1*a[3]+k2*a[6])
			f.wy = append(f.wy, k0*a[1]+k1*a[4]+k2*a[7])
			f.wz = append(f.wz, k0*a[2]+k1*a[5]+k2*a[8])
			f.phase = append(f.phase, 2*math.Pi*r.Float64())
			f.amp = append(f.amp, amp)
		}
	}
	return f, nil
}

// At returns the field's value at (x, y, z).
func (f *Field) At(x, y, z float64) float64 {
	var s float64
	for m := range f.amp {
		s += f.amp[m] * math.Cos(f.wx[m]*x+f.wy[m]*y+f.wz[m]*z+f.phase[m])
	}
	return s
}

// Values writes the field at the flat xyz points coords into dst (grown if
// too short) and returns it.
func (f *Field) Values(dst, coords []float64) []float64 {
	n := len(coords) / 3
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = f.At(coords[3*i], coords[3*i+1], coords[3*i+2])
	}
	return dst
}
