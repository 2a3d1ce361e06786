package tbsim

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// MaxLineIntervals bounds the sign table of a partition line set (the lines
// of one spherical or cubic structure of one realisation): the intervals,
// one variogram range long, that the field's domain spans along the set's
// lines, summed over the lines. A tile worker holds one such table (8 bytes
// per interval, at most 128 MiB). A domain that spans more is refused
// before anything is drawn: it is a grid (or data) much larger than the
// variogram's ranges, whose simulation would be white noise at the scale of
// the cells and would need more memory than any worker has.
const MaxLineIntervals = 1 << 24

// LineIntervals returns an upper bound of the sign table a partition line
// set needs (see MaxLineIntervals) for a field with variogram v and lines
// lines per structure evaluated over the box [lo, hi]: for the spherical or
// cubic structure with the shortest range, lines × (diagonal / shortest
// range + 3). It is 0 when v has no such structure and +Inf when the box or
// a range is not finite. It is computed in float64, without overflow.
func LineIntervals(v *geostat.Variogram, lines int, lo, hi [3]float64) float64 {
	if v == nil {
		return 0
	}
	r := math.Inf(1) // the shortest range of a spherical or cubic structure
	for i := range v.Structures {
		st := &v.Structures[i]
		if p := processOf(st.Type); p != processPartitionSpherical && p != processPartitionCubic {
			continue
		}
		e := st.Ellipsoid
		rs := math.Min(e.Major, math.Min(e.SemiMajor, e.Minor))
		if !(rs > 0) || math.IsInf(rs, 0) {
			return math.Inf(1)
		}
		r = math.Min(r, rs)
	}
	if math.IsInf(r, 1) {
		return 0 // no spherical or cubic structure
	}
	diag := 0.0
	for a := 0; a < 3; a++ {
		d := hi[a] - lo[a]
		if math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
			return math.Inf(1)
		}
		diag = math.Hypot(diag, d)
	}
	return float64(lines) * (diag/r + 3)
}

// checkLineIntervals refuses a field whose partition line tables over the
// box [lo, hi] would exceed MaxLineIntervals.
func checkLineIntervals(v *geostat.Variogram, lines int, lo, hi [3]float64, what string) error {
	if n := LineIntervals(v, lines, lo, hi); !(n <= MaxLineIntervals) {
		return fmt.Errorf("tbsim: %s %v – %v spans too many variogram ranges: the turning-bands lines of a spherical or cubic structure would need %.3g intervals, more than %d (a smaller grid, data closer to it, longer ranges or fewer lines)",
			what, lo, hi, n, MaxLineIntervals)
	}
	return nil
}
