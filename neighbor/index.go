package neighbor

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// RadiusTolerance is the slack of the boundary test: a source is inside the
// search ellipsoid when its squared anisotropic distance r² satisfies
// r² ≤ 1 + RadiusTolerance. It absorbs the few units in the last place that
// rotating and scaling coordinates costs, so that a point placed exactly on
// the ellipsoid (for example at the major range along the major axis of a
// rotated ellipsoid) is included as the boundary-included rule intends.
// Reported distances of such points may exceed 1 by at most about 5e-13.
const RadiusTolerance = 1e-12

// radius2 is the squared acceptance radius in isotropic space.
const radius2 = 1 + RadiusTolerance

// Index is a static search structure over source points in the isotropic
// space of a search ellipsoid. It is built once by NewIndex and is read-only
// afterwards, so any number of Searchers may query it concurrently.
type Index struct {
	p     Params
	aniso geostat.Anisotropy
	// origin is subtracted from world coordinates before the transform, to
	// keep isotropic coordinates small (and their rounding error with them)
	// for projected coordinates such as UTM.
	origin [3]float64
	// n is the number of sources given (indexed or not).
	n int

	// pts are the isotropic coordinates of the indexed sources in tree
	// order (grouped by leaf bucket).
	pts [][3]float64
	// orig maps a tree position to the source's original index.
	orig []int32
	// hole maps a tree position to a dense hole id 0..nHoles-1 (nil unless
	// MaxPerHole > 0).
	hole   []int32
	nHoles int

	tree kdTree
}

// NewIndex builds the search index of N sources.
//
// coords are the flat world coordinates (x0, y0, z0, x1, ...) of the N
// sources. values may be nil (every source is indexed); otherwise it has N
// entries and the sources whose value is NaN are left out of the index.
// holes may be nil unless p.MaxPerHole > 0; otherwise it has N entries, the
// drill hole id of each source (any int32, compared for equality).
// The slices are not retained. Indexed sources must have finite coordinates.
func NewIndex(coords []float64, values []float64, holes []int32, p Params) (*Index, error) {
	return NewIndexContext(context.Background(), coords, values, holes, p)
}

// NewIndexContext is NewIndex checking ctx while it builds the tree, so
// that a cancelled job stops within milliseconds of the cancel; it
// returns ctx's error when cancelled.
func NewIndexContext(ctx context.Context, coords []float64, values []float64, holes []int32, p Params) (*Index, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(coords)%3 != 0 {
		return nil, fmt.Errorf("neighbor: coords: length %d is not a multiple of 3", len(coords))
	}
	n := len(coords) / 3
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("neighbor: coords: %d sources exceed the limit of %d", n, math.MaxInt32)
	}
	if values != nil && len(values) != n {
		return nil, fmt.Errorf("neighbor: values: %d values for %d sources", len(values), n)
	}
	if holes != nil && len(holes) != n {
		return nil, fmt.Errorf("neighbor: holes: %d hole ids for %d sources", len(holes), n)
	}
	if p.MaxPerHole > 0 && holes == nil {
		return nil, fmt.Errorf("neighbor: holes: hole ids are required when max_per_hole > 0")
	}
	a, err := p.Ellipsoid.Anisotropy()
	if err != nil {
		return nil, fmt.Errorf("neighbor: ellipsoid: %w", err)
	}
	ix := &Index{p: p, aniso: a, n: n}

	// Keep the indexed sources and check their coordinates.
	keep, lo, hi, err := geostat.KeptBox[int32](coords, values, func(i int, c float64) error {
		return fmt.Errorf("neighbor: coords: source %d has a non-finite coordinate %v", i, c)
	}, nil)
	if err != nil {
		return nil, err
	}
	if len(keep) > 0 {
		for d := 0; d < 3; d++ {
			ix.origin[d] = lo[d] + (hi[d]-lo[d])/2
		}
	}

	ix.pts = make([][3]float64, len(keep))
	for j, i := range keep {
		p := &ix.pts[j]
		p[0], p[1], p[2] = ix.aniso.Apply(coords[3*i]-ix.origin[0], coords[3*i+1]-ix.origin[1], coords[3*i+2]-ix.origin[2])
	}
	ix.orig = keep

	if p.MaxPerHole > 0 {
		dense := make(map[int32]int32)
		ix.hole = make([]int32, len(keep))
		for j, i := range keep {
			h, ok := dense[holes[i]]
			if !ok {
				h = int32(len(dense))
				dense[holes[i]] = h
			}
			ix.hole[j] = h
		}
		ix.nHoles = len(dense)
	}

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("neighbor: index cancelled: %w", err)
	}
	if !ix.tree.build(ctx.Done(), ix.pts, ix.orig, ix.hole) {
		return nil, fmt.Errorf("neighbor: index cancelled: %w", ctx.Err())
	}
	return ix, nil
}

// Params returns the parameters the index was built with.
func (ix *Index) Params() Params { return ix.p }

// Len returns the number of sources given to NewIndex (indexed or not).
func (ix *Index) Len() int { return ix.n }

// Indexed returns the number of indexed sources (those with a non-NaN value).
func (ix *Index) Indexed() int { return len(ix.orig) }

// Origin returns the world point subtracted from coordinates before they are
// mapped into isotropic space: the centre of the indexed sources' bounding
// box. Distances are computed as |A(s − o) − A(t − o)| for a source s and a
// target t; IsotropicPoint gives A(p − o).
func (ix *Index) Origin() [3]float64 { return ix.origin }

// IsotropicPoint maps a world point p into the index's isotropic space,
// A (p − o) with o = Origin(). The anisotropic distance between two points is
// the Euclidean distance between their images.
func (ix *Index) IsotropicPoint(x, y, z float64) (float64, float64, float64) {
	return ix.aniso.Apply(x-ix.origin[0], y-ix.origin[1], z-ix.origin[2])
}
