package neighbor

import (
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
)

// Params are the parameters of an anisotropic neighbourhood search.
//
// A source is a candidate of a target when its anisotropic distance
// |A (source − target)| to the target is at most 1, A being the transform into
// the isotropic space of Ellipsoid (boundary included, see RadiusTolerance).
// The candidates are taken in (distance, source index) order; a candidate is
// skipped when its octant or hole already holds its quota, and the search stops
// once MaxSamples candidates have been accepted.
type Params struct {
	// Ellipsoid is the search ellipsoid: ranges along its local axes and its
	// rotation.
	Ellipsoid geostat.Ellipsoid
	// MaxSamples is the largest number of neighbours returned (≥ 1).
	MaxSamples int
	// MinSamples is the smallest number of accepted neighbours a target needs
	// (0..MaxSamples); with fewer, the target gets no neighbours at all.
	MinSamples int
	// MaxPerOctant is the largest number of neighbours taken from one octant
	// of the ellipsoid's local frame; 0 means unconstrained.
	MaxPerOctant int
	// MaxPerHole is the largest number of neighbours taken from one drill hole;
	// 0 means unconstrained. It needs the sources' hole ids.
	MaxPerHole int
}

// Validate checks the parameters. Errors name the offending field with the
// names of the task parameters (ellipsoid, max_samples, min_samples,
// max_per_octant, max_per_hole). Besides the ranges of each field it rejects
// a min_samples above 8·max_per_octant, which no target could ever reach.
func (p Params) Validate() error {
	if err := p.Ellipsoid.Validate(); err != nil {
		return fmt.Errorf("neighbor: ellipsoid: %w", err)
	}
	if p.MaxSamples < 1 {
		return fmt.Errorf("neighbor: max_samples: must be at least 1, got %d", p.MaxSamples)
	}
	if p.MaxSamples > maxSamplesLimit {
		return fmt.Errorf("neighbor: max_samples: must be at most %d, got %d", maxSamplesLimit, p.MaxSamples)
	}
	if p.MinSamples < 0 || p.MinSamples > p.MaxSamples {
		return fmt.Errorf("neighbor: min_samples: must be in 0..max_samples (%d), got %d", p.MaxSamples, p.MinSamples)
	}
	if p.MaxPerOctant < 0 {
		return fmt.Errorf("neighbor: max_per_octant: must be ≥ 0 (0 = unconstrained), got %d", p.MaxPerOctant)
	}
	if p.MaxPerOctant > 0 && p.MinSamples > 8*p.MaxPerOctant {
		return fmt.Errorf("neighbor: min_samples: %d can never be reached with max_per_octant %d (at most %d neighbours)",
			p.MinSamples, p.MaxPerOctant, 8*p.MaxPerOctant)
	}
	if p.MaxPerHole < 0 {
		return fmt.Errorf("neighbor: max_per_hole: must be ≥ 0 (0 = unconstrained), got %d", p.MaxPerHole)
	}
	return nil
}

// maxSamplesLimit bounds MaxSamples so that per-target output fits int32
// counts and a batch's Stride stays sane.
const maxSamplesLimit = 1 << 20

// constrained reports whether octant or hole quotas apply.
func (p Params) constrained() bool { return p.MaxPerOctant > 0 || p.MaxPerHole > 0 }
