package geostat

import (
	"fmt"
	"math"
)

// Matrix3 is a 3 × 3 matrix stored row-major.
type Matrix3 [9]float64

// Apply returns m · v.
func (m *Matrix3) Apply(x, y, z float64) (float64, float64, float64) {
	return m[0]*x + m[1]*y + m[2]*z,
		m[3]*x + m[4]*y + m[5]*z,
		m[6]*x + m[7]*y + m[8]*z
}

// Transpose returns mᵀ.
func (m *Matrix3) Transpose() Matrix3 {
	return Matrix3{m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8]}
}

// Mul returns m · n.
func (m *Matrix3) Mul(n *Matrix3) Matrix3 {
	var r Matrix3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[3*i+j] = m[3*i]*n[j] + m[3*i+1]*n[3+j] + m[3*i+2]*n[6+j]
		}
	}
	return r
}

// Rotation is the (dip azimuth, dip, pitch) rotation of the geoscience
// objects, in degrees. All three angles are clockwise rotations: first about
// the vertical axis by the dip azimuth, then about the new x axis by the dip,
// then about the new z axis by the pitch. The zero value is the identity.
type Rotation struct {
	DipAzimuth float64 `json:"dip_azimuth"`
	Dip        float64 `json:"dip"`
	Pitch      float64 `json:"pitch"`
}

// RotationSchema names a version of the rotation component, which differ in
// the ranges they accept.
type RotationSchema int

const (
	// RotationV1_1_0 is rotation 1.1.0: dip azimuth 0–360, dip 0–180, pitch
	// 0–360. It is the most permissive version and the default of Validate.
	RotationV1_1_0 RotationSchema = iota
	// RotationV1_0_1 is rotation 1.0.1: dip azimuth 0–360, dip 0–90, pitch
	// 0–180.
	RotationV1_0_1
)

// Validate checks the angles against the ranges of rotation 1.1.0.
func (r Rotation) Validate() error { return r.ValidateSchema(RotationV1_1_0) }

// ValidateSchema checks that the angles are finite and inside the ranges of
// the given rotation schema version. The error names the offending angle.
func (r Rotation) ValidateSchema(v RotationSchema) error {
	dipMax, pitchMax := 180.0, 360.0
	if v == RotationV1_0_1 {
		dipMax, pitchMax = 90, 180
	}
	check := func(name string, val, max float64) error {
		if math.IsNaN(val) || math.IsInf(val, 0) {
			return fmt.Errorf("rotation.%s: %v is not a finite number", name, val)
		}
		if val < 0 || val > max {
			return fmt.Errorf("rotation.%s: %v is outside [0, %v]", name, val, max)
		}
		return nil
	}
	if err := check("dip_azimuth", r.DipAzimuth, 360); err != nil {
		return err
	}
	if err := check("dip", r.Dip, dipMax); err != nil {
		return err
	}
	return check("pitch", r.Pitch, pitchMax)
}

// Matrix returns the local-to-world matrix R = Rz(dip_azimuth) · Rx(dip) ·
// Rz(pitch) with the clockwise elementary rotations of docs/objects.md
// section 2. Its columns are the world directions of the major, semi-major and
// minor axes.
func (r Rotation) Matrix() Matrix3 {
	sa, ca := SinCosDeg(r.DipAzimuth)
	sd, cd := SinCosDeg(r.Dip)
	sp, cp := SinCosDeg(r.Pitch)
	return Matrix3{
		ca*cp - sa*cd*sp, ca*sp + sa*cd*cp, sa * sd,
		-sa*cp - ca*cd*sp, -sa*sp + ca*cd*cp, ca * sd,
		sd * sp, -sd * cp, cd,
	}
}

// WorldToLocal returns Rᵀ, the matrix that maps world vectors into the
// rotated frame (major, semi-major, minor).
func (r Rotation) WorldToLocal() Matrix3 {
	m := r.Matrix()
	return m.Transpose()
}

// SinCosDeg returns the sine and cosine of an angle in degrees, exact at
// multiples of 90° so that axis-aligned rotations produce exact matrices.
func SinCosDeg(deg float64) (s, c float64) {
	q := math.Mod(deg, 360)
	if q < 0 {
		q += 360
	}
	switch q {
	case 0:
		return 0, 1
	case 90:
		return 1, 0
	case 180:
		return 0, -1
	case 270:
		return -1, 0
	}
	return math.Sincos(deg * math.Pi / 180)
}
