package tbsim

import (
	"fmt"

	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
)

// Limits and defaults of the conditional-turning-bands task.
const (
	// MaxRealisations is the largest ensemble ("realizations" ≤ 100).
	MaxRealisations = 100
	// MaxLines is the largest "number_of_lines".
	MaxLines = 1000
	// DefaultLines is the default "number_of_lines".
	DefaultLines = 500
	// DefaultSeed is the default "random_seed".
	DefaultSeed = 38239342
	// DefaultMaxSamples is the maximum number of samples of the default
	// neighbourhood.
	DefaultMaxSamples = 32
)

// Params are the settings of a simulation. Start from DefaultParams and
// change what the request sets; validation errors name the API's fields.
type Params struct {
	// Realisations is the ensemble size ("realizations", 1..100).
	Realisations int
	// Lines is the number of turning-bands lines per structure and
	// realisation ("number_of_lines", 1..1000).
	Lines int
	// Seed is the master random seed ("random_seed").
	Seed int64
	// Method is the conditioning kriging ("kriging_method"): kriging.Simple
	// (mean 0 in Gaussian space) or kriging.Ordinary. A variogram with a
	// linear structure requires Ordinary.
	Method kriging.Method
	// Discretisation is the number of sub-points per cell along each grid
	// axis ("block_discretization", each 1..9).
	Discretisation grid.BlockDiscretisation
	// Search is the conditioning neighbourhood ("neighborhood"). nil means
	// the ellipsoid of the variogram structure with the longest major range,
	// at most DefaultMaxSamples (32) samples and at least 1.
	Search *neighbor.Params
	// NormaliseVariogram scales the variogram to unit total sill before
	// simulating in Gaussian space ("normalize_variogram_model", default
	// true).
	NormaliseVariogram bool
	// SaveGaussian also produces the block Gaussian values and the point
	// values in data and Gaussian units ("save_gaussian_results").
	SaveGaussian bool
	// TileRows is the number of grid rows (cells of equal j, k) per tile;
	// 0 chooses it from the grid, the discretisation and the number of
	// realisations. It affects memory and speed, never the values.
	TileRows int
	// Progress, when not nil, is called after every finished tile with the
	// number of target cells done and the total, from one goroutine at a
	// time, with done increasing.
	Progress func(done, total int)
}

// DefaultParams returns the task's defaults: 1 realisation, 500 lines, seed
// 38239342, simple kriging, point support, default neighbourhood and a
// normalised variogram.
func DefaultParams() Params {
	return Params{
		Realisations:       1,
		Lines:              DefaultLines,
		Seed:               DefaultSeed,
		Method:             kriging.Simple,
		Discretisation:     grid.Point(),
		NormaliseVariogram: true,
	}
}

// Validate checks the parameters against the task's limits.
func (p *Params) Validate() error {
	if p.Realisations < 1 || p.Realisations > MaxRealisations {
		return fmt.Errorf("realizations: %d must be between 1 and %d", p.Realisations, MaxRealisations)
	}
	if p.Lines < 1 || p.Lines > MaxLines {
		return fmt.Errorf("number_of_lines: %d must be between 1 and %d", p.Lines, MaxLines)
	}
	if p.Method != kriging.Simple && p.Method != kriging.Ordinary {
		return fmt.Errorf("kriging_method: unknown method %d (want simple or ordinary)", int(p.Method))
	}
	if err := p.Discretisation.Validate(); err != nil {
		return err
	}
	if p.Search != nil {
		if err := p.Search.Validate(); err != nil {
			return fmt.Errorf("neighborhood: %w", err)
		}
	}
	if p.TileRows < 0 {
		return fmt.Errorf("tbsim: TileRows %d must be ≥ 0", p.TileRows)
	}
	return nil
}
