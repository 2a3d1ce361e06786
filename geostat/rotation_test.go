package geostat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func applyRot(r Rotation, v [3]float64) [3]float64 {
	m := r.Matrix()
	x, y, z := m.Apply(v[0], v[1], v[2])
	return [3]float64{x, y, z}
}

func assertVec(t *testing.T, want, got [3]float64, tol float64, msg string) {
	t.Helper()
	for i := 0; i < 3; i++ {
		assert.InDelta(t, want[i], got[i], tol, "%s component %d: want %v got %v", msg, i, want, got)
	}
}

// The local→world test vectors of docs/objects.md section 2 (SDK unit test).
func TestRotationLocalToWorldVectors(t *testing.T) {
	cases := []struct {
		r    Rotation
		want [3]float64
	}{
		{Rotation{0, 0, 0}, [3]float64{2, 5, 2.5}},
		{Rotation{90, 0, 0}, [3]float64{5, -2, 2.5}},
		{Rotation{0, 90, 0}, [3]float64{2, 2.5, -5}},
		{Rotation{0, 0, 90}, [3]float64{5, -2, 2.5}},
		{Rotation{124, 63.5, 22.1}, [3]float64{1.2020506, -5.31502659, -2.35702497}},
	}
	for _, c := range cases {
		assertVec(t, c.want, applyRot(c.r, [3]float64{2, 5, 2.5}), 1e-7, "R·(2,5,2.5)")
	}
}

// The five world→local vectors of docs/objects.md section 2, to 1e-9.
func TestRotationWorldToLocalVectors(t *testing.T) {
	cases := []struct {
		r     Rotation
		world [3]float64
		local [3]float64
	}{
		{Rotation{90, 0, 0}, [3]float64{0, -100, 0}, [3]float64{100, 0, 0}},
		{Rotation{0, 90, 0}, [3]float64{0, 0, -50}, [3]float64{0, 50, 0}},
		{Rotation{45, 30, 0}, [3]float64{1, 1, 0}, [3]float64{0, 1.224744871, 0.707106781}},
		{Rotation{30, 60, 45}, [3]float64{100, 50, -20}, [3]float64{-1.674855096, 88.794003176, 70.801270189}},
		{Rotation{124, 63.5, 22.1}, [3]float64{2, 5, 2.5}, [3]float64{-3.844093660, -4.523660488, 0.097158234}},
	}
	for _, c := range cases {
		m := c.r.WorldToLocal()
		x, y, z := m.Apply(c.world[0], c.world[1], c.world[2])
		assertVec(t, c.local, [3]float64{x, y, z}, 1e-9, "Rᵀ·w")
	}
	// Case 4 with ranges (100, 50, 25): anisotropic distance 3.342834470.
	e := Ellipsoid{Major: 100, SemiMajor: 50, Minor: 25, Rotation: Rotation{30, 60, 45}}
	h, err := e.Distance([3]float64{0, 0, 0}, [3]float64{100, 50, -20})
	require.NoError(t, err)
	assert.InDelta(t, 3.342834470, h, 1e-9)
	// Axis directions of case 4 are the columns of R.
	r := Rotation{30, 60, 45}.Matrix()
	assertVec(t, [3]float64{0.435595740, -0.659739608, 0.612372436}, [3]float64{r[0], r[3], r[6]}, 1e-9, "major")
	assertVec(t, [3]float64{0.789149131, -0.047367173, -0.612372436}, [3]float64{r[1], r[4], r[7]}, 1e-9, "semi-major")
	assertVec(t, [3]float64{0.433012702, 0.75, 0.5}, [3]float64{r[2], r[5], r[8]}, 1e-9, "minor")
	// R(45,30,0) reference matrix.
	want := Matrix3{0.707106781, 0.612372436, 0.353553391, -0.707106781, 0.612372436, 0.353553391, 0, -0.5, 0.866025404}
	got := Rotation{45, 30, 0}.Matrix()
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-9)
	}
}

// Oracle 8.1.3: R orthonormal with determinant +1; the ellipsoid axes have
// reduced distance 1.
func TestRotationOrthonormal(t *testing.T) {
	for _, r := range []Rotation{{0, 0, 0}, {30, 20, 10}, {124, 63.5, 22.1}, {359, 179, 359}, {271.3, 12.7, 301}} {
		m := r.Matrix()
		mt := m.Transpose()
		p := mt.Mul(&m)
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				assert.InDelta(t, want, p[3*i+j], 1e-12)
			}
		}
		det := m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
		assert.InDelta(t, 1, det, 1e-12)
	}
	e := Ellipsoid{Major: 100, SemiMajor: 50, Minor: 10}
	for _, p := range [][3]float64{{100, 0, 0}, {0, 50, 0}, {0, 0, 10}} {
		h, err := e.Distance([3]float64{}, p)
		require.NoError(t, err)
		assert.InDelta(t, 1, h, 1e-15)
	}
}

func TestRotationQuickChecks(t *testing.T) {
	// (90,0,0): major = −y (South), semi = +x.
	m := Rotation{90, 0, 0}.Matrix()
	assertVec(t, [3]float64{0, -1, 0}, [3]float64{m[0], m[3], m[6]}, 1e-15, "major")
	assertVec(t, [3]float64{1, 0, 0}, [3]float64{m[1], m[4], m[7]}, 1e-15, "semi")
	// (0,45,0): semi-major = (0, 0.707, −0.707).
	m = Rotation{0, 45, 0}.Matrix()
	assertVec(t, [3]float64{0, math.Sqrt2 / 2, -math.Sqrt2 / 2}, [3]float64{m[1], m[4], m[7]}, 1e-15, "semi")
}

func TestRotationValidate(t *testing.T) {
	assert.NoError(t, Rotation{360, 180, 360}.Validate())
	assert.NoError(t, Rotation{360, 90, 180}.ValidateSchema(RotationV1_0_1))
	err := Rotation{0, 120, 0}.ValidateSchema(RotationV1_0_1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rotation.dip")
	err = Rotation{0, 0, 200}.ValidateSchema(RotationV1_0_1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rotation.pitch")
	assert.ErrorContains(t, Rotation{-1, 0, 0}.Validate(), "dip_azimuth")
	assert.ErrorContains(t, Rotation{0, 181, 0}.Validate(), "dip")
	assert.ErrorContains(t, Rotation{0, 0, math.NaN()}.Validate(), "pitch")
}

func TestEllipsoidValidateAndTransform(t *testing.T) {
	for _, e := range []Ellipsoid{{0, 1, 1, Rotation{}}, {1, -1, 1, Rotation{}}, {1, 1, math.Inf(1), Rotation{}}, {math.NaN(), 1, 1, Rotation{}}} {
		_, err := e.Anisotropy()
		assert.Error(t, err)
	}
	_, err := Ellipsoid{1, 1, 0, Rotation{}}.Anisotropy()
	assert.ErrorContains(t, err, "ellipsoid_ranges.minor")

	e := Ellipsoid{Major: 300, SemiMajor: 200, Minor: 50, Rotation: Rotation{30, 20, 10}}
	a, err := e.Anisotropy()
	require.NoError(t, err)
	src := []float64{1, 2, 3, -40, 17, 9.5}
	dst := a.Transform(nil, src)
	for i := 0; i < 2; i++ {
		p := [3]float64{src[3*i], src[3*i+1], src[3*i+2]}
		h, err := e.Distance([3]float64{}, p)
		require.NoError(t, err)
		assert.InDelta(t, h, math.Sqrt(dst[3*i]*dst[3*i]+dst[3*i+1]*dst[3*i+1]+dst[3*i+2]*dst[3*i+2]), 1e-14)
	}
	// In place.
	same := append([]float64(nil), src...)
	a.Transform(same, same)
	assert.Equal(t, dst, same)
	assert.Panics(t, func() { a.Transform(nil, []float64{1, 2}) })
}
