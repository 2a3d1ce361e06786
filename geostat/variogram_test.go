package geostat

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Oracle 8.1.1: reference values of docs/math.md 1.3, to their printed
// digits.
func TestCorrelationReferenceValues(t *testing.T) {
	cases := []struct {
		t     StructureType
		alpha int
		r     float64
		want  float64
		tol   float64
	}{
		{Spherical, 0, 0.25, 0.6328125, 1e-12},
		{Spherical, 0, 0.5, 0.3125, 1e-12},
		{Spherical, 0, 1, 0, 0},
		{Spherical, 0, 2, 0, 0},
		{Cubic, 0, 0.25, 0.6958466, 1e-7},
		{Cubic, 0, 0.5, 0.240234375, 1e-12},
		{Cubic, 0, 1, 0, 1e-15},
		{Exponential, 0, 0.25, 0.4723666, 1e-7},
		{Exponential, 0, 0.5, 0.2231302, 1e-7},
		{Exponential, 0, 1, 0.0497871, 1e-7},
		{Gaussian, 0, 0.25, 0.8290291, 1e-7},
		{Gaussian, 0, 0.5, 0.4723666, 1e-7},
		{Gaussian, 0, 1, 0.0497871, 1e-7},
		{Spheroidal, 3, 0.25, 0.500855, 1e-6},
		{Spheroidal, 3, 0.5, 0.186889, 1e-6},
		{Spheroidal, 3, 2, 0.005389, 1e-6},
		{Spheroidal, 5, 0.25, 0.596273, 1e-6},
		{Spheroidal, 5, 0.5, 0.254418, 1e-6},
		{Spheroidal, 5, 2, 0.002130, 1e-6},
		{Spheroidal, 7, 0.25, 0.628501, 1e-6},
		{Spheroidal, 7, 0.5, 0.289193, 1e-6},
		{Spheroidal, 7, 2, 0.001053, 1e-6},
		{Spheroidal, 9, 0.25, 0.644244, 1e-6},
		{Spheroidal, 9, 0.5, 0.309410, 1e-6},
		{Spheroidal, 9, 2, 0.000604, 1e-6},
		{Linear, 0, 0.7, -0.7, 0},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, Correlation(c.t, c.alpha, c.r), c.tol, "%s(α=%d) at r=%v", c.t, c.alpha, c.r)
	}
	for _, a := range []int{3, 5, 7, 9} {
		assert.InDelta(t, 0.0373246, Correlation(Spheroidal, a, 1), 1e-7, "spheroidal α=%d at the range", a)
		assert.InDelta(t, 0.05, Correlation(GeneralisedCauchy, a, 1), 1e-12, "generalised cauchy α=%d at the range", a)
	}
	// Independent evaluation of the closed forms (1e-12).
	for _, r := range []float64{0, 0.1, 0.37, 0.9, 1.3} {
		assert.InDelta(t, math.Exp(-3*r), Correlation(Exponential, 0, r), 1e-15)
		assert.InDelta(t, math.Exp(-3*r*r), Correlation(Gaussian, 0, r), 1e-15)
		for _, a := range []int{3, 5, 7, 9} {
			k, _ := CauchyScaling(a)
			assert.InDelta(t, math.Pow(1+k*k*r*r, -float64(a)/2), Correlation(GeneralisedCauchy, a, r), 1e-12)
		}
		if r < 1 {
			assert.InDelta(t, 1-1.5*r+0.5*r*r*r, Correlation(Spherical, 0, r), 1e-15)
			assert.InDelta(t, 1-7*r*r+35.0/4*r*r*r-3.5*math.Pow(r, 5)+0.75*math.Pow(r, 7), Correlation(Cubic, 0, r), 1e-12)
		}
	}
	assert.Panics(t, func() { Correlation(Spheroidal, 4, 0.5) })
}

// Oracle 8.1.2: spheroidal constants from the closed forms equal the table of
// docs/math.md 1.3, and S_α is C¹ at the junction x*.
func TestSpheroidalConstants(t *testing.T) {
	table := map[int][5]float64{ // x*, c, 1/c, λ, κ
		3: {0.5000000000, 1.1448668045, 0.8734640537, 0.7500000000, 2.6798340586},
		5: {0.4082482905, 1.1660474726, 0.8575980168, 1.0206207262, 1.5822795750},
		7: {0.3535533906, 1.1771820864, 0.8494862533, 1.2374368671, 1.2008676644},
		9: {0.3162277660, 1.1840505048, 0.8445585690, 1.4230249471, 1.0000000000},
	}
	gcKappa := map[int]float64{3: 2.5235021, 5: 1.5213330, 7: 1.1634203, 9: 0.9725676}
	for a, w := range table {
		xs, c, lam, kappa, ok := SpheroidalConstants(a)
		require.True(t, ok)
		assert.InDelta(t, w[0], xs, 1e-9, "x* α=%d", a)
		assert.InDelta(t, w[1], c, 1e-9, "c α=%d", a)
		assert.InDelta(t, w[2], 1/c, 1e-9, "1/c α=%d", a)
		assert.InDelta(t, w[3], lam, 1e-9, "λ α=%d", a)
		assert.InDelta(t, w[4], kappa, 1e-9, "κ α=%d", a)
		kc, ok := CauchyScaling(a)
		require.True(t, ok)
		assert.InDelta(t, gcKappa[a], kc, 1e-7)
		// Continuity of value and slope at the junction, in unscaled s.
		r := xs / kappa
		const eps = 1e-7
		left := Correlation(Spheroidal, a, r-eps)
		right := Correlation(Spheroidal, a, r+eps)
		mid := Correlation(Spheroidal, a, r)
		assert.InDelta(t, left, right, 3*eps*lam*kappa, "continuity α=%d", a)
		slopeL := (mid - left) / eps
		slopeR := (right - mid) / eps
		assert.InDelta(t, slopeL, slopeR, 1e-4, "C¹ at x* α=%d", a)
		assert.InDelta(t, -lam*kappa, slopeL, 1e-5, "slope λκ α=%d", a)
	}
	_, _, _, _, ok := SpheroidalConstants(4)
	assert.False(t, ok)
	_, ok = CauchyScaling(11)
	assert.False(t, ok)
}

func twoStructure(t testing.TB) *Variogram {
	v, err := NewVariogram(0.1,
		Structure{Type: Spherical, Contribution: 0.6, Ellipsoid: Ellipsoid{300, 200, 50, Rotation{30, 20, 10}}},
		Structure{Type: Exponential, Contribution: 0.3, Ellipsoid: Ellipsoid{600, 400, 100, Rotation{30, 20, 10}}},
	)
	require.NoError(t, err)
	return v
}

func TestVariogramCovarianceAndGamma(t *testing.T) {
	v := twoStructure(t)
	assert.InDelta(t, 1.0, v.TotalSill(), 1e-15)
	assert.Equal(t, 1.0, v.CovarianceLag(0, 0, 0))
	assert.Equal(t, 0.0, v.GammaLag(0, 0, 0))
	// γ = C(0) − C(h) for h ≠ 0, and C(h) excludes the nugget.
	for _, h := range [][3]float64{{1e-9, 0, 0}, {10, 5, -3}, {250, -100, 20}, {2000, 0, 0}} {
		c := v.CovarianceLag(h[0], h[1], h[2])
		g := v.GammaLag(h[0], h[1], h[2])
		assert.InDelta(t, v.TotalSill()-c, g, 1e-14)
		assert.LessOrEqual(t, c, 0.9)
	}
	// Along the major axis of structure 0, at its range the spherical part is 0.
	m := v.Structures[0].Ellipsoid.Rotation.Matrix()
	h := [3]float64{300 * m[0], 300 * m[3], 300 * m[6]}
	assert.InDelta(t, 1.0, v.Structures[0].Reduced(h[0], h[1], h[2]), 1e-12)
	assert.InDelta(t, 0.3*math.Exp(-3*0.5), v.Covariance([3]float64{}, h), 1e-12)
	assert.InDelta(t, v.CovarianceLag(h[0], h[1], h[2]), v.CovarianceLag(-h[0], -h[1], -h[2]), 1e-15)
	assert.NoError(t, v.RequireCovariance())
	assert.False(t, v.Intrinsic())
	assert.Equal(t, 1, v.LongestStructure())
}

// Oracle 8.1.4: normalisation gives unit sill and keeps the ratios.
func TestVariogramNormalised(t *testing.T) {
	v, err := NewVariogram(0.5,
		Structure{Type: Gaussian, Contribution: 2, Ellipsoid: Ellipsoid{10, 10, 10, Rotation{}}},
		Structure{Type: Spheroidal, Alpha: 5, Contribution: 1.5, Ellipsoid: Ellipsoid{50, 20, 5, Rotation{}}},
	)
	require.NoError(t, err)
	n := v.Normalised()
	assert.InDelta(t, 1, n.TotalSill(), 1e-12)
	assert.InDelta(t, v.Nugget/v.Structures[0].Contribution, n.Nugget/n.Structures[0].Contribution, 1e-12)
	assert.InDelta(t, v.Structures[1].Contribution/v.Structures[0].Contribution, n.Structures[1].Contribution/n.Structures[0].Contribution, 1e-12)
	assert.InDelta(t, v.CovarianceLag(3, 4, 1)/4, n.CovarianceLag(3, 4, 1), 1e-12)
	assert.Equal(t, 2.0, v.Structures[0].Contribution, "the original is unchanged")
}

func TestVariogramLinearIsIntrinsic(t *testing.T) {
	v, err := NewVariogram(0,
		Structure{Type: Spherical, Contribution: 1, Ellipsoid: Ellipsoid{10, 10, 10, Rotation{}}},
		Structure{Type: Linear, Contribution: 2, Ellipsoid: Ellipsoid{100, 100, 100, Rotation{}}},
	)
	require.NoError(t, err)
	assert.True(t, v.Intrinsic())
	err = v.RequireCovariance()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "structure 1 (linear)")
	assert.InDelta(t, 1+2*0.5, v.GammaLag(50, 0, 0), 1e-12)
	assert.InDelta(t, -2*0.5, v.CovarianceLag(50, 0, 0), 1e-12)
}

func TestNewVariogramErrors(t *testing.T) {
	ok := Ellipsoid{1, 1, 1, Rotation{}}
	cases := []struct {
		nugget float64
		s      []Structure
		want   string
	}{
		{-1, []Structure{{Type: Spherical, Contribution: 1, Ellipsoid: ok}}, "nugget"},
		{0, nil, "structures"},
		{0, []Structure{{Type: Spherical, Contribution: 0, Ellipsoid: ok}}, "structures[0].contribution"},
		{0, []Structure{{Type: Spheroidal, Contribution: 1, Alpha: 4, Ellipsoid: ok}}, "structures[0].alpha"},
		{0, []Structure{{Type: Spherical, Contribution: 1, Alpha: 3, Ellipsoid: ok}}, "structures[0].alpha"},
		{0, []Structure{{Type: Spherical, Contribution: 1, Ellipsoid: Ellipsoid{1, 0, 1, Rotation{}}}}, "structures[0].anisotropy"},
		{0, []Structure{{Type: 99, Contribution: 1, Ellipsoid: ok}}, "variogram_type"},
	}
	for _, c := range cases {
		_, err := NewVariogram(c.nugget, c.s...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func variogramDoc(version, structures string, extra string) []byte {
	return []byte(fmt.Sprintf(`{"schema": "/objects/variogram/%s/variogram.schema.json", "name": "v", "uuid": null,
		"sill": 1.0, "nugget": 0.1, "is_rotation_fixed": false, %s "structures": [%s]}`, version, extra, structures))
}

func TestDecodeVariogram(t *testing.T) {
	s1 := `{"variogram_type": "spheroidal", "alpha": 3, "contribution": 0.5,
		"anisotropy": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}, "rotation": {"dip_azimuth": 30, "dip": 120, "pitch": 200}}}`
	s2 := `{"variogram_type": "exponential", "contribution": 0.4,
		"anisotropy": {"ellipsoid_ranges": {"major": 200, "semi_major": 150, "minor": 20}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`
	for _, ver := range []string{"1.1.0", "1.2.0"} {
		d, err := DecodeVariogram(variogramDoc(ver, s1+","+s2, `"data_variance": 2.5, "modelling_space": "normalscore",`))
		require.NoError(t, err, ver)
		assert.Len(t, d.Structures, 2)
		assert.Equal(t, Spheroidal, d.Structures[0].Type)
		assert.Equal(t, 3, d.Structures[0].Alpha)
		assert.Equal(t, Rotation{30, 120, 200}, d.Structures[0].Ellipsoid.Rotation)
		assert.Equal(t, 0.1, d.Nugget)
		assert.Equal(t, 2.5, d.DataVariance)
		assert.Equal(t, "normalscore", d.ModellingSpace)
		assert.Empty(t, d.Warnings)
	}
	// Version 1.0.1 rotations allow dip ≤ 90 and pitch ≤ 180 only.
	_, err := DecodeVariogram(variogramDoc("1.0.1", s1, ""))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "structures[0].anisotropy.rotation.dip")
	d, err := DecodeVariogram(variogramDoc("1.0.1", s2, ""))
	require.NoError(t, err)
	assert.Len(t, d.Warnings, 1, "sill 1 vs 0.5")

	bad := []struct{ doc, want string }{
		{`{"schema": "/objects/pointset/1.3.0/pointset.schema.json"}`, "schema"},
		{string(variogramDoc("1.2.0", "", "")), "structures"},
		{string(variogramDoc("1.2.0", `{"variogram_type": "spheroidal", "contribution": 1, "anisotropy": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`, "")), "structures[0].alpha: required"},
		{string(variogramDoc("1.2.0", `{"variogram_type": "cubic", "alpha": 3, "contribution": 1, "anisotropy": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`, "")), "structures[0].alpha"},
		{string(variogramDoc("1.2.0", `{"variogram_type": "cubic", "contribution": 1, "extra": 1, "anisotropy": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`, "")), "structures[0]"},
		{string(variogramDoc("1.2.0", `{"variogram_type": "hole", "contribution": 1, "anisotropy": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`, "")), "structures[0].variogram_type"},
		{string(variogramDoc("1.2.0", `{"variogram_type": "cubic", "contribution": 1, "anisotropy": {"ellipsoid_ranges": {"major": 1, "semi_major": -1, "minor": 1}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`, "")), "semi_major"},
		{string(variogramDoc("1.2.0", `{"variogram_type": "cubic", "contribution": 1, "anisotropy": {"ellipsoid_ranges": {"major": 1, "minor": 1}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}}}`, "")), "ellipsoid_ranges"},
		{`{"schema": "/objects/variogram/1.2.0/variogram.schema.json", "structures": [` + s2 + `]}`, "sill"},
		{`not json`, "variogram"},
	}
	for _, b := range bad {
		_, err := DecodeVariogram([]byte(b.doc))
		require.Error(t, err, b.doc)
		assert.Contains(t, err.Error(), b.want)
	}
}

var sink float64

// BenchmarkCovariance measures one covariance per structure type (0 allocs).
func BenchmarkCovariance(b *testing.B) {
	e := Ellipsoid{300, 200, 50, Rotation{30, 20, 10}}
	for _, st := range []Structure{
		{Type: Spherical}, {Type: Exponential}, {Type: Gaussian}, {Type: Cubic},
		{Type: Spheroidal, Alpha: 3}, {Type: GeneralisedCauchy, Alpha: 7}, {Type: Linear},
	} {
		st.Contribution, st.Ellipsoid = 1, e
		v, err := NewVariogram(0.1, st)
		require.NoError(b, err)
		b.Run(st.Type.String(), func(b *testing.B) {
			b.ReportAllocs()
			s := 0.0
			for i := 0; i < b.N; i++ {
				f := float64(i&255) * 0.7
				s += v.CovarianceLag(f, 20-f, 3)
			}
			sink = s
		})
	}
}

// EncodeStructures writes what DecodeVariogram reads: a model with every
// structure type, rotated, round-trips exactly.
func TestEncodeStructuresRoundTrip(t *testing.T) {
	rot := Rotation{DipAzimuth: 30, Dip: 20, Pitch: 250}
	var structs []Structure
	for i, typ := range []StructureType{Spherical, Exponential, Gaussian, Cubic, Spheroidal, GeneralisedCauchy, Linear} {
		s := Structure{Type: typ, Contribution: 0.1 * float64(i+1),
			Ellipsoid: Ellipsoid{Major: 100 + float64(i), SemiMajor: 50, Minor: 10, Rotation: rot}}
		if typ.HasAlpha() {
			s.Alpha = 5
		}
		structs = append(structs, s)
	}
	v, err := NewVariogram(0.05, structs...)
	require.NoError(t, err)
	doc, err := json.Marshal(map[string]any{"schema": "/objects/variogram/1.2.0/variogram.schema.json",
		"nugget": v.Nugget, "sill": v.TotalSill(), "structures": EncodeStructures(v)})
	require.NoError(t, err)
	got, err := DecodeVariogram(doc)
	require.NoError(t, err)
	assert.Equal(t, v.Structures, got.Variogram.Structures)
	assert.Equal(t, v.Nugget, got.Variogram.Nugget)
}
