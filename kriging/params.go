package kriging

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

// Method is the kriging variant.
type Method int

const (
	// Simple is simple kriging with a known mean (Params.Mean).
	Simple Method = iota
	// Ordinary is ordinary kriging: the weights sum to one and the mean is
	// filtered by a Lagrange multiplier.
	Ordinary
)

// String returns "simple" or "ordinary".
func (m Method) String() string {
	switch m {
	case Simple:
		return "simple"
	case Ordinary:
		return "ordinary"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// DefaultTableLimit is the merged data count up to which a Kriger keeps a
// data-to-data covariance table (n(n+1)/2 float64 of address space, 64 MB
// at 4000 data, of which only the pages of the pairs met in neighbourhoods
// are touched), so that assembling a kriging system is mostly a gather
// instead of covariance evaluations.
const DefaultTableLimit = 4000

// DefaultFactorCache is the number of factorisations a Solver keeps when
// Params.FactorCache is 0: a grid row and a half of 100–200 cells.
const DefaultFactorCache = 256

// Params configures a Kriger.
type Params struct {
	// Variogram is the covariance model (required). A linear (intrinsic)
	// structure requires Ordinary.
	Variogram *geostat.Variogram
	// Method is Simple or Ordinary.
	Method Method
	// Mean is the simple kriging mean (0 in Gaussian space); ignored by
	// ordinary kriging.
	Mean float64
	// Search is the neighbourhood: ellipsoid, maximum and minimum number of
	// samples, octant and per-hole limits.
	Search neighbor.Params
	// Discretisation is the block discretisation; the zero value or {1,1,1}
	// is point kriging.
	Discretisation grid.BlockDiscretisation
	// CellSize is the block size along the grid axes, required (positive)
	// when Discretisation.Count() > 1.
	CellSize [3]float64
	// Rotation is the rotation of the grid, hence of the block axes.
	Rotation geostat.Rotation
	// TableLimit is the largest merged data count for which the
	// data-to-data covariance table is kept: 0 means
	// DefaultTableLimit, a negative value disables the table. It affects
	// speed and memory only, never the results.
	TableLimit int
	// FactorCache is the number of recent factorisations each Solver keeps,
	// reused by any later target with the same neighbour set (for Solve,
	// typically a cell of the next grid row; Estimate updates most of its
	// factorisations in place, which leaves fewer to reuse): 0 means
	// DefaultFactorCache. Set it to about 1.25 grid rows of targets for
	// wider grids. An entry takes m(m+1)/2 + O(m) floats (m = MaxSamples),
	// allocated as the cache fills, and a Solver (or a worker of Estimate)
	// keeps at most 8 MiB of them. It affects speed and memory, never
	// Solve's results, and Estimate's only to rounding (a reused
	// factorisation may be an updated one).
	FactorCache int
}

// discretisation returns the effective block discretisation (the zero value
// means a point).
func (p *Params) discretisation() grid.BlockDiscretisation {
	if p.Discretisation == (grid.BlockDiscretisation{}) {
		return grid.Point()
	}
	return p.Discretisation
}

// Validate checks the parameters; errors name the offending field.
func (p *Params) Validate() error {
	if p.Variogram == nil {
		return fmt.Errorf("variogram: required")
	}
	switch p.Method {
	case Simple:
		if err := p.Variogram.RequireCovariance(); err != nil {
			return fmt.Errorf("kriging_method: simple kriging: %w", err)
		}
		if math.IsNaN(p.Mean) || math.IsInf(p.Mean, 0) {
			return fmt.Errorf("mean: %v must be finite", p.Mean)
		}
	case Ordinary:
	default:
		return fmt.Errorf("kriging_method: unknown method %d", int(p.Method))
	}
	if err := p.Search.Validate(); err != nil {
		return fmt.Errorf("neighbourhood: %w", err)
	}
	d := p.discretisation()
	if err := d.Validate(); err != nil {
		return err
	}
	if d.Count() > 1 {
		for i, s := range p.CellSize {
			if !(s > 0) || math.IsInf(s, 0) {
				return fmt.Errorf("cell_size[%d]: %v must be positive and finite for block kriging", i, s)
			}
		}
	}
	if err := p.Rotation.Validate(); err != nil {
		return fmt.Errorf("rotation: %w", err)
	}
	if p.FactorCache < 0 {
		return fmt.Errorf("factor_cache: %d must be ≥ 0", p.FactorCache)
	}
	return nil
}
