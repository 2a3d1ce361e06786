package report

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// Input is everything a validation report is computed from.
//
// The four ensembles are flat: the value of realisation r at cell c is at
// index c + r·nCells, nCells being the number of cells of Grid or the number
// of active cells of Masked (in their attribute order). Any ensemble may be
// nil, but at least one must be given and all given ones must hold the same
// number of realisations. NaN marks a cell without a value (for example a
// cell the simulation left empty); it is skipped by every statistic.
type Input struct {
	// Context is the title and the label/value details shown at the top.
	Context Context
	// Data are the conditioning data, in data units.
	Data Data
	// Reference is the distribution the simulation reproduces (the one used
	// for its normal-score transform). Required.
	Reference *geostat.Distribution
	// Variogram is the model of the normal scores (normalised to a unit
	// sill, as the simulation used it). Required.
	Variogram *geostat.Variogram

	// Grid is the target grid; Masked replaces it for a masked grid (set
	// exactly one).
	Grid   *grid.Grid
	Masked *grid.Masked
	// Discretisation is the block discretisation of the simulation (zero
	// value: a point support, 1×1×1).
	Discretisation grid.BlockDiscretisation

	// PointSimulations are the point values in data units,
	// PointSimulationsNormalScore the same in Gaussian units.
	PointSimulations            []float64
	PointSimulationsNormalScore []float64
	// BlockSimulations are the block averages in data units,
	// BlockSimulationsNormalScore the averages of the Gaussian sub-point
	// values.
	BlockSimulations            []float64
	BlockSimulationsNormalScore []float64

	// Thresholds classify the relative difference of the simulated mean
	// and variance when their spread over the realisations cannot judge
	// them (a single realisation, or no spread); see Check. Zero value:
	// DefaultThresholds().
	Thresholds Thresholds

	// Units is the unit of the data values for labels (for example "g/t");
	// LengthUnit that of coordinates ("m" when empty).
	Units      string
	LengthUnit string

	// SwathSlices is the largest number of slices of a swath plot (20 when
	// 0).
	SwathSlices int
	// SkipVariograms leaves the variogram reproduction out (the seed's
	// variogram_reproduction = false).
	SkipVariograms bool
}

// Context is the report's title and free details, shown as given (escaped).
type Context struct {
	Title   string   `json:"title"`
	Details []Detail `json:"details,omitempty"`
}

// Detail is one label/value line of the report context.
type Detail struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Data are the conditioning data: flat world coordinates (3 per datum),
// values and optional declustering weights (nil for equal weights).
type Data struct {
	Coords  []float64
	Values  []float64
	Weights []float64
}

// Thresholds of the relative rule, the fallback of a Check when the
// statistic has no spread over the realisations, as fractions: a relative
// difference d = |m_sim − m_ref| / |m_ref| with d ≤ Acceptable is
// acceptable, with d ≤ Marginal marginal, otherwise failing.
type Thresholds struct {
	Acceptable float64 `json:"acceptable"`
	Marginal   float64 `json:"marginal"`
}

// DefaultThresholds returns the thresholds used when Input.Thresholds is the
// zero value: 5 % and 10 % [our choice; the task does not define defaults].
func DefaultThresholds() Thresholds { return Thresholds{Acceptable: 0.05, Marginal: 0.10} }

// Ensemble names, as the simulation-report task calls them.
const (
	PointSimulations            = "point_simulations"
	PointSimulationsNormalScore = "point_simulations_normal_score"
	BlockSimulations            = "block_simulations"
	BlockSimulationsNormalScore = "block_simulations_normal_score"
)

// prepared is the validated input with derived geometry.
type prepared struct {
	in        *Input
	g         *grid.Grid
	active    []int     // full index of each ensemble row (nil: all cells)
	centres   []float64 // world centres of the ensemble rows
	nCells    int
	nReal     int
	disc      grid.BlockDiscretisation
	th        Thresholds
	ens       [4][]float64 // in the order of ensembleNames
	derivedNS bool         // point normal scores derived from PointSimulations
}

var ensembleNames = [4]string{PointSimulations, PointSimulationsNormalScore, BlockSimulations, BlockSimulationsNormalScore}

func prepare(in *Input) (*prepared, error) {
	if in == nil {
		return nil, fmt.Errorf("report: nil input")
	}
	p := &prepared{in: in}
	switch {
	case in.Grid != nil && in.Masked != nil:
		return nil, fmt.Errorf("report: target: set either Grid or Masked, not both")
	case in.Masked != nil:
		p.g = in.Masked.Grid
		p.active = in.Masked.ActiveCells()
		p.nCells = in.Masked.NumActive()
		p.centres = in.Masked.ActiveCentres(nil)
	case in.Grid != nil:
		p.g = in.Grid
		p.nCells = in.Grid.NumCells()
		p.centres = in.Grid.CellCentres(nil)
	default:
		return nil, fmt.Errorf("report: target: a grid is required")
	}
	if in.Reference == nil {
		return nil, fmt.Errorf("report: distribution: the reference distribution is required")
	}
	if in.Variogram == nil {
		return nil, fmt.Errorf("report: variogram_model: the variogram is required")
	}
	p.disc = in.Discretisation
	if p.disc == (grid.BlockDiscretisation{}) {
		p.disc = grid.Point()
	}
	if err := p.disc.Validate(); err != nil {
		return nil, fmt.Errorf("report: block_discretization: %w", err)
	}
	p.th = in.Thresholds
	if p.th == (Thresholds{}) {
		p.th = DefaultThresholds()
	}
	if !(p.th.Acceptable >= 0) || !(p.th.Marginal >= 0) || math.IsInf(p.th.Marginal, 0) {
		return nil, fmt.Errorf("report: report_mean_thresholds: must be finite and ≥ 0, got %+v", p.th)
	}
	if p.th.Marginal < p.th.Acceptable {
		return nil, fmt.Errorf("report: report_mean_thresholds.marginal: %g is below acceptable %g", p.th.Marginal, p.th.Acceptable)
	}
	if in.SwathSlices < 0 {
		return nil, fmt.Errorf("report: swath_slices: must be ≥ 0, got %d", in.SwathSlices)
	}

	d := in.Data
	n := len(d.Values)
	if len(d.Coords) != 3*n {
		return nil, fmt.Errorf("report: source coordinates: need 3 per value (%d), got %d", 3*n, len(d.Coords))
	}
	if d.Weights != nil {
		if len(d.Weights) != n {
			return nil, fmt.Errorf("report: weights: need one per value (%d), got %d", n, len(d.Weights))
		}
		sum := 0.0
		for i, w := range d.Weights {
			if math.IsNaN(d.Values[i]) {
				continue
			}
			if !(w >= 0) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("report: weights[%d]: must be finite and ≥ 0, got %g", i, w)
			}
			sum += w
		}
		if n > 0 && !(sum > 0) {
			return nil, fmt.Errorf("report: weights: the weights of the data sum to zero")
		}
	}

	given := [4][]float64{in.PointSimulations, in.PointSimulationsNormalScore, in.BlockSimulations, in.BlockSimulationsNormalScore}
	for i, e := range given {
		if e == nil {
			continue
		}
		if len(e) == 0 || len(e)%p.nCells != 0 {
			return nil, fmt.Errorf("report: %s: length %d is not a positive multiple of the %d cells", ensembleNames[i], len(e), p.nCells)
		}
		r := len(e) / p.nCells
		if p.nReal != 0 && r != p.nReal {
			return nil, fmt.Errorf("report: %s: %d realisations where another ensemble has %d", ensembleNames[i], r, p.nReal)
		}
		p.nReal = r
		p.ens[i] = e
	}
	if p.nReal == 0 {
		return nil, fmt.Errorf("report: simulations: at least one ensemble is required")
	}
	// Point normal scores follow from point values through the reference
	// (y = G⁻¹(F(z)) inverts the back-transform); block normal scores do
	// not (the mean of Gaussian sub-points is not the score of the mean).
	if p.ens[1] == nil && p.ens[0] != nil {
		ns := make([]float64, len(p.ens[0]))
		in.Reference.NormalScores(ns, p.ens[0])
		p.ens[1] = ns
		p.derivedNS = true
	}
	return p, nil
}
