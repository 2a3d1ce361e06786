package synthetic

import (
	"fmt"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
)

// ModelRotation is the rotation shared by the variogram structures and the
// search ellipsoids of the cases (dip azimuth 30°, dip 20°, pitch 10°).
var ModelRotation = geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}

// Variogram returns the cases' model in Gaussian units, of unit sill:
//
//	nugget 0.1
//	+ 0.55 spherical   ranges (150, 100, 30) m
//	+ 0.35 exponential ranges (400, 250, 60) m (practical range)
//
// both with ModelRotation.
func Variogram() *geostat.Variogram {
	v, err := geostat.NewVariogram(0.1,
		geostat.Structure{Type: geostat.Spherical, Contribution: 0.55,
			Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 30, Rotation: ModelRotation}},
		geostat.Structure{Type: geostat.Exponential, Contribution: 0.35,
			Ellipsoid: geostat.Ellipsoid{Major: 400, SemiMajor: 250, Minor: 60, Rotation: ModelRotation}},
	)
	if err != nil {
		panic("cases: the built-in variogram is invalid: " + err.Error())
	}
	return v
}

// SearchEllipsoid returns the neighbourhood ellipsoid of the kriging and
// simulation cases: the ellipsoid of the variogram's longest structure.
func SearchEllipsoid() geostat.Ellipsoid {
	v := Variogram()
	return v.Structures[v.LongestStructure()].Ellipsoid
}

// Tails of the cases' distribution: linear (power 1) down to zero below
// the smallest grade and linear up to 1.5 times the largest grade above it.
const (
	LowerTailPower = 1.0
	UpperTailPower = 1.0
	UpperTailScale = 1.5
)

// NewDistribution returns the distribution table of grades (equal weights,
// geostat.ScoreTable) with the cases' power tails: lower bound 0 (grades are
// positive), upper bound UpperTailScale times the largest grade.
func NewDistribution(grades []float64) (*geostat.Distribution, error) {
	z, p, err := geostat.ScoreTable(grades, nil)
	if err != nil {
		return nil, fmt.Errorf("cases: score table: %w", err)
	}
	if len(z) == 0 {
		return nil, fmt.Errorf("cases: no finite grades for the distribution")
	}
	hi := slices.Max(z)
	d, err := geostat.NewDistribution(z, p,
		geostat.Tail{Bound: 0, Power: LowerTailPower},
		geostat.Tail{Bound: UpperTailScale * hi, Power: UpperTailPower})
	if err != nil {
		return nil, fmt.Errorf("cases: distribution: %w", err)
	}
	return d, nil
}
