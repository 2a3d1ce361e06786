package bmwire

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// ValueColumn is a column an update file supplies: its title and declared
// data type.
type ValueColumn struct {
	Title string
	Type  blockmodel.DataType
}

// Values are the values of one column for a batch of rows, in the Go type
// of its data type's family: Float holds Float16, Float32 and Float64 (each
// value exact in its type); Int holds Int8…Int64, UInt8…UInt32, Date32
// (days since 1970-01-01) and Timestamp (microseconds since the epoch,
// UTC); Uint holds UInt64; Bool holds Boolean and Str holds Utf8. Valid[r]
// is false for a null (nil when every value is valid); a NaN is a null.
type Values struct {
	Type  blockmodel.DataType
	Valid []bool
	Float []float64
	Int   []int64
	Uint  []uint64
	Bool  []bool
	Str   []string
	// u32 holds the values of an identity column (UInt32) of a batch
	// while they come from UINT32 pages without nulls, in place of Int
	// (which is then empty): read without a conversion, matched as they
	// are (processWhole). Any other append, and any reader of Int, widens
	// them into Int first. Only a rawBatch's identity columns use it.
	u32 []uint32
}

// Len is the number of values.
func (v *Values) Len() int {
	return max(len(v.Float), len(v.Int), len(v.Uint), len(v.Bool), len(v.Str), len(v.u32))
}

// widen moves values held in u32 to Int.
func (v *Values) widen() {
	if len(v.u32) == 0 {
		return
	}
	at := len(v.Int)
	v.Int = grow(v.Int, len(v.u32))
	for x, y := range v.u32 {
		v.Int[at+x] = int64(y)
	}
	v.u32 = v.u32[:0]
}

// IsValid reports whether value r is not null.
func (v *Values) IsValid(r int) bool { return v.Valid == nil || v.Valid[r] }

// reset empties v keeping its storage.
func (v *Values) reset() {
	v.Valid, v.Float, v.Int, v.Uint, v.Bool, v.Str = v.Valid[:0], v.Float[:0], v.Int[:0], v.Uint[:0], v.Bool[:0], v.Str[:0]
	v.u32 = v.u32[:0]
}

// family of a data type: which slice of Values holds it.
type family int

const (
	famFloat family = iota
	famInt
	famUint
	famBool
	famStr
)

func familyOf(t blockmodel.DataType) family {
	switch t {
	case blockmodel.Float16, blockmodel.Float32, blockmodel.Float64:
		return famFloat
	case blockmodel.UInt64:
		return famUint
	case blockmodel.Boolean:
		return famBool
	case blockmodel.Utf8:
		return famStr
	}
	return famInt
}

// intRange is the range of an integer data type.
func intRange(t blockmodel.DataType) (lo int64, hi uint64) {
	switch t {
	case blockmodel.Int8:
		return math.MinInt8, math.MaxInt8
	case blockmodel.Int16:
		return math.MinInt16, math.MaxInt16
	case blockmodel.Int32, blockmodel.Date32:
		return math.MinInt32, math.MaxInt32
	case blockmodel.UInt8:
		return 0, math.MaxUint8
	case blockmodel.UInt16:
		return 0, math.MaxUint16
	case blockmodel.UInt32:
		return 0, math.MaxUint32
	case blockmodel.UInt64:
		return 0, math.MaxUint64
	}
	return math.MinInt64, math.MaxInt64
}

// exactFloat reports whether f is exactly representable in the float type
// t (Float16 normal and subnormal numbers included).
func exactFloat(f float64, t blockmodel.DataType) bool {
	switch t {
	case blockmodel.Float32:
		return float64(float32(f)) == f || math.IsNaN(f)
	case blockmodel.Float16:
		if math.IsNaN(f) || f == 0 {
			return true
		}
		a := math.Abs(f)
		if a > 65504 {
			return false
		}
		_, exp := math.Frexp(a) // a = frac·2^exp, frac in [0.5, 1)
		shift := 11 - exp       // 11 significant bits
		if exp-1 < -14 {
			shift = 24 // subnormal: multiples of 2^-24
		}
		s := math.Ldexp(a, shift)
		return s == math.Trunc(s)
	}
	return true
}

// fromInt converts an integer (signed when !unsigned) to t; the message
// says why it does not fit.
func (v *Values) appendInt(x int64, unsigned bool) error {
	t := v.Type
	switch familyOf(t) {
	case famFloat:
		f := float64(x)
		if unsigned {
			f = float64(uint64(x))
		}
		if (unsigned && uint64(x) > 1<<53) || (!unsigned && (x > 1<<53 || x < -(1<<53))) || !exactFloat(f, t) {
			return fmt.Errorf("%s is not exact as %s", fmtInt(x, unsigned), t)
		}
		v.Float = append(v.Float, f)
	case famUint:
		if !unsigned && x < 0 {
			return fmt.Errorf("%d is out of range for %s", x, t)
		}
		v.Uint = append(v.Uint, uint64(x))
	case famInt:
		lo, hi := intRange(t)
		if (unsigned && uint64(x) > hi) || (!unsigned && (x < lo || (x > 0 && uint64(x) > hi))) {
			return fmt.Errorf("%s is out of range for %s", fmtInt(x, unsigned), t)
		}
		v.Int = append(v.Int, x)
	default:
		return fmt.Errorf("an integer is not a %s value", t)
	}
	return nil
}

func fmtInt(x int64, unsigned bool) string {
	if unsigned {
		return fmt.Sprint(uint64(x))
	}
	return fmt.Sprint(x)
}

// appendFloat appends a float value of a float column (NaN is null).
func (v *Values) appendFloat(f float64) error {
	if familyOf(v.Type) != famFloat {
		return fmt.Errorf("a floating-point number is not a %s value", v.Type)
	}
	if !exactFloat(f, v.Type) {
		return fmt.Errorf("%v is not exact as %s", f, v.Type)
	}
	v.Float = append(v.Float, f)
	return nil
}

// appendNull appends a null (a zero value marked invalid).
func (v *Values) appendNull() {
	v.widen()
	n := v.Len()
	if v.Valid == nil {
		v.Valid = make([]bool, n, max(n+1, 64))
		for r := range v.Valid {
			v.Valid[r] = true
		}
	}
	switch familyOf(v.Type) {
	case famFloat:
		v.Float = append(v.Float, 0)
	case famInt:
		v.Int = append(v.Int, 0)
	case famUint:
		v.Uint = append(v.Uint, 0)
	case famBool:
		v.Bool = append(v.Bool, false)
	case famStr:
		v.Str = append(v.Str, "")
	}
	v.Valid = append(v.Valid, false)
}

// markValid records a valid value appended last (keeps Valid in step once
// a null appeared).
func (v *Values) markValid() {
	if v.Valid != nil {
		v.Valid = append(v.Valid, true)
	}
}
