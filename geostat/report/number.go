package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Number is a float64 that encodes as JSON null when it is not finite (NaN
// for "not available"), since JSON has no NaN or infinity. null decodes back
// to NaN.
type Number float64

// nan returns the "not available" Number.
func nan() Number { return Number(math.NaN()) }

// MarshalJSON writes the number, or null when it is not finite.
func (n Number) MarshalJSON() ([]byte, error) {
	return appendFloat(nil, float64(n)), nil
}

// UnmarshalJSON reads a number or null (NaN).
func (n *Number) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*n = nan()
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Number(f)
	return nil
}

// Available reports whether the number is finite.
func (n Number) Available() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// Series is a sequence of numbers that encodes non-finite entries (NaN for
// "no value", for example a lag without pairs) as JSON null.
type Series []float64

// MarshalJSON writes the series with null for non-finite entries.
func (s Series) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+len(s)*12)
	b = append(b, '[')
	for i, x := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, x)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads an array of numbers and nulls (NaN).
func (s *Series) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*s = nil
		return nil
	}
	out := make(Series, len(raw))
	for i, p := range raw {
		if p == nil {
			out[i] = math.NaN()
		} else {
			out[i] = *p
		}
	}
	*s = out
	return nil
}

func appendFloat(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}
