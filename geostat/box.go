package geostat

import "math"

// KeptBox returns the rows kept from flat coordinates (x, y, z per row; a
// row is kept unless values is not nil and its value is NaN), in row order,
// and the bounding box lo, hi of their coordinates (±Inf when no row is
// kept). A kept row with a NaN or infinite coordinate stops it with the
// error badCoord(row, coordinate) gives; check, when not nil, is then
// called on each kept row (e.g. to reject an infinite value), and an error
// from it stops it too. values, when not nil, has one entry per row.
func KeptBox[T ~int | ~int32](coords, values []float64, badCoord func(row int, c float64) error, check func(row int) error) (keep []T, lo, hi [3]float64, err error) {
	n := len(coords) / 3
	keep = make([]T, 0, n)
	lo = [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := 0; i < n; i++ {
		if values != nil && math.IsNaN(values[i]) {
			continue
		}
		for d := 0; d < 3; d++ {
			c := coords[3*i+d]
			if math.IsNaN(c) || math.IsInf(c, 0) {
				return nil, lo, hi, badCoord(i, c)
			}
			lo[d] = math.Min(lo[d], c)
			hi[d] = math.Max(hi[d], c)
		}
		if check != nil {
			if err := check(i); err != nil {
				return nil, lo, hi, err
			}
		}
		keep = append(keep, T(i))
	}
	return keep, lo, hi, nil
}
