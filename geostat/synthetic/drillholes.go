package synthetic

import (
	"fmt"
	"math"
)

// DrillholeSpec describes a synthetic drilling campaign in a box: straight
// holes collared on the top face at random positions, with random azimuths
// and dips, sampled at a regular interval along the hole.
type DrillholeSpec struct {
	// Seed drives the collars, azimuths and dips.
	Seed uint64
	// Box contains every sample; collars lie on its top face.
	Box Box
	// Samples is the exact total number of samples (intervals).
	Samples int
	// Spacing is the sample (interval) length along the hole, metres.
	Spacing float64
	// MinDip and MaxDip bound the dip below horizontal, degrees (0 < MinDip ≤
	// MaxDip ≤ 90).
	MinDip, MaxDip float64
	// Depth is the vertical fraction of the box a hole reaches at most
	// (0 < Depth ≤ 1); every hole has the same length along the hole except
	// the last, which takes the remaining samples.
	Depth float64
}

// Drillholes is a set of downhole intervals: for interval i, hole Holes[i],
// depths From[i] < To[i] along the hole from its collar, and the world
// coordinates of its start, end and mid point (flat xyz). Intervals are
// ordered by hole, then by depth.
type Drillholes struct {
	Holes   []int32
	From    []float64
	To      []float64
	Start   []float64
	End     []float64
	Mid     []float64
	Collars []float64 // flat xyz per hole
	// Directions are the unit vectors along each hole (flat xyz, pointing
	// down the hole).
	Directions []float64
}

// Len returns the number of intervals.
func (d *Drillholes) Len() int { return len(d.Holes) }

// NumHoles returns the number of holes.
func (d *Drillholes) NumHoles() int { return len(d.Collars) / 3 }

// Validate checks the spec; errors name the field.
func (s DrillholeSpec) Validate() error {
	if err := s.Box.Validate(); err != nil {
		return err
	}
	switch {
	case s.Samples < 1:
		return fmt.Errorf("drillholes: samples = %d must be at least 1", s.Samples)
	case !(s.Spacing > 0) || math.IsInf(s.Spacing, 0):
		return fmt.Errorf("drillholes: spacing = %v must be positive and finite", s.Spacing)
	case !(s.MinDip > 0 && s.MinDip <= s.MaxDip && s.MaxDip <= 90):
		return fmt.Errorf("drillholes: dips (%v, %v) must satisfy 0 < min_dip ≤ max_dip ≤ 90", s.MinDip, s.MaxDip)
	case !(s.Depth > 0 && s.Depth <= 1):
		return fmt.Errorf("drillholes: depth = %v must be in (0, 1]", s.Depth)
	}
	ext := s.Box.Extent()
	if s.Spacing > s.Depth*ext[2] {
		return fmt.Errorf("drillholes: spacing = %v is longer than the drilled depth %v", s.Spacing, s.Depth*ext[2])
	}
	// The longest hole's horizontal run must fit in the box.
	run := s.Depth * ext[2] * math.Cos(s.MinDip*math.Pi/180)
	if run >= math.Min(ext[0], ext[1]) {
		return fmt.Errorf("drillholes: min_dip = %v gives a horizontal run of %.0f m that does not fit in the box", s.MinDip, run)
	}
	return nil
}

// NewDrillholes drills the campaign. Every hole holds
// floor(Depth·height/Spacing) samples (the last one fewer), so the vertical
// hole of maximum dip just reaches Depth of the box and every sample stays
// inside it.
func NewDrillholes(s DrillholeSpec) (*Drillholes, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	ext := s.Box.Extent()
	perHole := int(math.Floor(s.Depth * ext[2] / s.Spacing))
	nHoles := (s.Samples + perHole - 1) / perHole
	n := s.Samples
	d := &Drillholes{
		Holes: make([]int32, n), From: make([]float64, n), To: make([]float64, n),
		Start: make([]float64, 3*n), End: make([]float64, 3*n), Mid: make([]float64, 3*n),
		Collars: make([]float64, 3*nHoles), Directions: make([]float64, 3*nHoles),
	}
	r := stream(s.Seed, purposeCollars, 0)
	i := 0
	for h := 0; h < nHoles; h++ {
		count := min(perHole, n-i)
		// Hole geometry: azimuth clockwise from north, dip below horizontal.
		az := 2 * math.Pi * r.Float64()
		dip := (s.MinDip + (s.MaxDip-s.MinDip)*r.Float64()) * math.Pi / 180
		dx, dy, dz := math.Cos(dip)*math.Sin(az), math.Cos(dip)*math.Cos(az), -math.Sin(dip)
		length := float64(count) * s.Spacing
		runX, runY := length*dx, length*dy
		// Collar uniform over the positions that keep the whole hole inside.
		cx := s.Box.Min[0] - math.Min(0, runX) + (ext[0]-math.Abs(runX))*r.Float64()
		cy := s.Box.Min[1] - math.Min(0, runY) + (ext[1]-math.Abs(runY))*r.Float64()
		cz := s.Box.Max[2]
		d.Collars[3*h], d.Collars[3*h+1], d.Collars[3*h+2] = cx, cy, cz
		d.Directions[3*h], d.Directions[3*h+1], d.Directions[3*h+2] = dx, dy, dz
		for k := 0; k < count; k++ {
			from, to := float64(k)*s.Spacing, float64(k+1)*s.Spacing
			mid := 0.5 * (from + to)
			d.Holes[i] = int32(h)
			d.From[i], d.To[i] = from, to
			set3(d.Start, i, cx+from*dx, cy+from*dy, cz+from*dz)
			set3(d.End, i, cx+to*dx, cy+to*dy, cz+to*dz)
			set3(d.Mid, i, cx+mid*dx, cy+mid*dy, cz+mid*dz)
			i++
		}
	}
	return d, nil
}

func set3(dst []float64, i int, x, y, z float64) {
	dst[3*i], dst[3*i+1], dst[3*i+2] = x, y, z
}
