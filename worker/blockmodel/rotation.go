package blockmodel

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// MaxRotations is the largest number of items of a block_rotation list.
const MaxRotations = 3

// RotationItem is one item of block_rotation: a clockwise rotation by Angle
// degrees (−360 < Angle < 360) about Axis ("x", "y" or "z").
type RotationItem struct {
	Axis  string  `json:"axis"`
	Angle float64 `json:"angle"`
}

// ValidateRotation checks a block_rotation list: at most MaxRotations
// items, each axis x, y or z, each angle finite in (−360, 360), and no two
// consecutive items about the same axis. Members are named under prefix
// (e.g. "block_rotation[1].axis"); the error is a *ValidationError.
func ValidateRotation(items []RotationItem, prefix string) error {
	var p ValidationError
	if len(items) > MaxRotations {
		p.Add(prefix, "%d rotations are more than %d", len(items), MaxRotations)
	}
	for n, it := range items {
		name := fmt.Sprintf("%s[%d]", prefix, n)
		switch it.Axis {
		case "x", "y", "z":
			if n > 0 && items[n-1].Axis == it.Axis {
				p.Add(name+".axis", "rotates about %s like the rotation before it", it.Axis)
			}
		default:
			p.Add(name+".axis", "%q is not one of x, y, z", it.Axis)
		}
		if math.IsNaN(it.Angle) || math.IsInf(it.Angle, 0) || it.Angle <= -360 || it.Angle >= 360 {
			p.Add(name+".angle", "%v must be greater than -360 and less than 360", it.Angle)
		}
	}
	return p.Err()
}

// DecodeRotation decodes and validates a block_rotation JSON list (null or
// absent means no rotation); errors name the items under prefix.
func DecodeRotation(raw json.RawMessage, prefix string) ([]RotationItem, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &ValidationError{Params: []InvalidParam{{Name: prefix, Reason: "must be a list of {axis, angle}"}}}
	}
	var p ValidationError
	items := make([]RotationItem, len(list))
	for n, r := range list {
		name := fmt.Sprintf("%s[%d]", prefix, n)
		m, ok := object(r, name, &p)
		if !ok {
			continue
		}
		var axis string
		if a, ok := m["axis"]; !ok || isNull(a) {
			p.Add(name+".axis", "is required")
		} else if err := json.Unmarshal(a, &axis); err != nil {
			p.Add(name+".axis", "must be a string")
		}
		angle, _ := number(m, "angle", name, &p)
		items[n] = RotationItem{Axis: axis, Angle: angle}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if err := ValidateRotation(items, prefix); err != nil {
		return nil, err
	}
	return items, nil
}

// AxisMatrix returns the clockwise rotation matrix by deg degrees about
// axis "x", "y" or "z" (A.2.2):
//
//	Rx(θ) = [[1, 0, 0], [0, cosθ, sinθ], [0, −sinθ, cosθ]]
//	Ry(θ) = [[cosθ, 0, −sinθ], [0, 1, 0], [sinθ, 0, cosθ]]
//	Rz(θ) = [[cosθ, sinθ, 0], [−sinθ, cosθ, 0], [0, 0, 1]]
//
// It panics on another axis (ValidateRotation refuses those first).
func AxisMatrix(axis string, deg float64) geostat.Matrix3 {
	s, c := geostat.SinCosDeg(deg)
	switch axis {
	case "x":
		return geostat.Matrix3{1, 0, 0, 0, c, s, 0, -s, c}
	case "y":
		return geostat.Matrix3{c, 0, -s, 0, 1, 0, s, 0, c}
	case "z":
		return geostat.Matrix3{c, s, 0, -s, c, 0, 0, 0, 1}
	}
	panic(fmt.Sprintf("blockmodel: rotation axis %q", axis))
}

// CompositeMatrix returns R₁·R₂·…·Rₙ, the local-to-world matrix the
// block_rotation list describes (the identity for an empty list).
func CompositeMatrix(items []RotationItem) geostat.Matrix3 {
	r := geostat.Matrix3{1, 0, 0, 0, 1, 0, 0, 0, 1}
	for _, it := range items {
		m := AxisMatrix(it.Axis, it.Angle)
		r = r.Mul(&m)
	}
	return r
}

// NormalizeRotation returns normalized_rotation [a, d, p] of a validated
// block_rotation list: the intrinsic Z-X-Z angles, in degrees, of its
// composite matrix R, with a and p in [0, 360) and d in [0, 180] (A.2.2):
// d = acos(R[2][2]); a = atan2(R[0][2], R[1][2]) and p = atan2(R[2][0],
// −R[2][1]) when sin d > 1e-12, else p = 0 and a from the first row. The
// angles are the (dip_azimuth, dip, pitch) of geostat.Rotation. When the
// list is already in the form [z a, x d, z p] (or a prefix or suffix of
// it) and the extraction agrees with its angles within 1e-9°, the angles
// are returned as given, so that they round-trip exactly.
func NormalizeRotation(items []RotationItem) [3]float64 {
	r := CompositeMatrix(items)
	at := func(row, col int) float64 { return r[3*row+col] }
	d := math.Acos(math.Max(-1, math.Min(1, at(2, 2))))
	var a, p float64
	if math.Sin(d) > 1e-12 {
		a = math.Atan2(at(0, 2), at(1, 2))
		p = math.Atan2(at(2, 0), -at(2, 1))
	} else if at(2, 2) > 0 {
		a = math.Atan2(at(0, 1), at(0, 0))
	} else {
		a = math.Atan2(-at(0, 1), at(0, 0))
	}
	out := [3]float64{reduceDeg(a * 180 / math.Pi), d * 180 / math.Pi, reduceDeg(p * 180 / math.Pi)}
	if lit, ok := literalZXZ(items); ok {
		close := true
		for n := range out {
			diff := math.Abs(math.Mod(out[n]-lit[n], 360))
			if math.Min(diff, 360-diff) > 1e-9 {
				close = false
			}
		}
		if close {
			return lit
		}
	}
	return out
}

// literalZXZ reads the angles of a list in the form [z a][x d][z p] (any of
// its contiguous parts that the Z-X-Z reading can take literally).
func literalZXZ(items []RotationItem) ([3]float64, bool) {
	var axes string
	for _, it := range items {
		axes += it.Axis
	}
	var lit [3]float64
	switch axes {
	case "":
	case "z":
		lit[0] = items[0].Angle
	case "x":
		lit[1] = items[0].Angle
	case "zx":
		lit[0], lit[1] = items[0].Angle, items[1].Angle
	case "xz":
		lit[1], lit[2] = items[0].Angle, items[1].Angle
	case "zxz":
		lit = [3]float64{items[0].Angle, items[1].Angle, items[2].Angle}
	default:
		return lit, false
	}
	if lit[1] < 0 || lit[1] > 180 {
		return lit, false
	}
	lit[0], lit[2] = reduceDeg(lit[0]), reduceDeg(lit[2])
	return lit, true
}

// reduceDeg reduces an angle in (−360, 360] to [0, 360); values within
// 1e-9 of 360 become 0.
func reduceDeg(x float64) float64 {
	if x < 0 {
		x += 360
	}
	if x >= 360-1e-9 || x == 0 {
		return 0 // also turns −0 into 0
	}
	return x
}
