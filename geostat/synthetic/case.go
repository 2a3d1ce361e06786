package synthetic

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// DefaultSeed is the seed of the benchmark cases.
const DefaultSeed uint64 = 20250611

// Layout is how a case's samples are placed.
type Layout int

const (
	// Holes places samples along drill holes (DrillholeSpec).
	Holes Layout = iota
	// Uniform places samples uniformly in the box (the knn benchmark of the
	// neighbor issue).
	Uniform
)

// Grade parameters: grade = exp(LogMean + LogSD·y) with y the unit-variance
// Gaussian-like field plus nugget noise. The lognormal skewness for
// LogSD = 0.9 is about 4.
const (
	LogMean = 0.0
	LogSD   = 0.9
	// FieldWaves is the number of cosines per variogram structure.
	FieldWaves = 24
)

// Spec describes a case.
type Spec struct {
	// Seed drives every random choice.
	Seed uint64
	// Box holds the samples and is tiled by the grid.
	Box Box
	// Samples is the number of samples.
	Samples int
	// Layout places the samples.
	Layout Layout
	// Spacing is the sample length along holes (Holes layout), metres.
	Spacing float64
	// GridSize is the number of cells of the grid along x, y, z.
	GridSize [3]int
}

// Case is a generated data set. Its slices are freshly allocated; callers
// may modify them.
type Case struct {
	// Spec is the spec the case was generated from.
	Spec Spec
	// Coords are the sample locations, flat xyz (interval mid points for
	// the Holes layout).
	Coords []float64
	// Holes are the hole ids of the samples (nil for the Uniform layout).
	Holes []int32
	// Intervals are the downhole intervals (nil for the Uniform layout).
	Intervals *Drillholes
	// Grades are the skewed, spatially correlated sample values.
	Grades []float64
	// Normal are the grades' normal scores through Distribution.
	Normal []float64
	// Variogram is the model (Gaussian units, unit sill).
	Variogram *geostat.Variogram
	// Field is the smooth part of the log-grade, evaluable anywhere.
	Field *Field
	// Distribution is the table of the grades with power tails.
	Distribution *geostat.Distribution
	// Grid tiles the box with Spec.GridSize cells.
	Grid *grid.Grid
}

// Validate checks the spec; errors name the field.
func (s Spec) Validate() error {
	if err := s.Box.Validate(); err != nil {
		return err
	}
	if s.Samples < 2 {
		return fmt.Errorf("cases: samples = %d must be at least 2", s.Samples)
	}
	for a := 0; a < 3; a++ {
		if s.GridSize[a] < 1 {
			return fmt.Errorf("cases: grid_size[%d] = %d must be at least 1", a, s.GridSize[a])
		}
	}
	if s.Layout != Holes && s.Layout != Uniform {
		return fmt.Errorf("cases: layout %d is unknown", s.Layout)
	}
	return nil
}

// DrillholeSpec returns the drilling campaign of a Holes-layout spec: dips
// 55° to 90°, holes reaching 90 % of the box height.
func (s Spec) DrillholeSpec() DrillholeSpec {
	return DrillholeSpec{Seed: s.Seed, Box: s.Box, Samples: s.Samples, Spacing: s.Spacing, MinDip: 55, MaxDip: 90, Depth: 0.9}
}

// New generates the case of a spec.
func New(s Spec) (*Case, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := &Case{Spec: s, Variogram: Variogram()}
	switch s.Layout {
	case Holes:
		d, err := NewDrillholes(s.DrillholeSpec())
		if err != nil {
			return nil, err
		}
		c.Intervals, c.Coords, c.Holes = d, d.Mid, d.Holes
	case Uniform:
		c.Coords = UniformPoints(s.Seed, s.Box, s.Samples)
	}
	f, err := NewField(s.Seed, c.Variogram, FieldWaves)
	if err != nil {
		return nil, err
	}
	c.Field = f
	c.Grades = f.Values(nil, c.Coords)
	noise := stream(s.Seed, purposeNugget, 0)
	sdNugget := math.Sqrt(c.Variogram.Nugget)
	for i, y := range c.Grades {
		c.Grades[i] = math.Exp(LogMean + LogSD*(y+sdNugget*noise.NormFloat64()))
	}
	if c.Distribution, err = NewDistribution(c.Grades); err != nil {
		return nil, err
	}
	c.Normal = make([]float64, len(c.Grades))
	c.Distribution.NormalScores(c.Normal, c.Grades)
	if c.Grid, err = s.Box.Grid(s.GridSize); err != nil {
		return nil, err
	}
	return c, nil
}

// Masked returns the case's grid masked by OrebodyMask.
func (c *Case) Masked() (*grid.Masked, error) { return MaskedGrid(c.Spec.Seed, c.Grid) }

// Size is a benchmark size.
type Size int

// The benchmark sizes.
const (
	Small Size = iota
	Medium
	Large
)

// Sizes lists the sizes in order.
var Sizes = []Size{Small, Medium, Large}

// String returns "small", "medium" or "large".
func (z Size) String() string {
	switch z {
	case Small:
		return "small"
	case Medium:
		return "medium"
	case Large:
		return "large"
	}
	return fmt.Sprintf("Size(%d)", int(z))
}

// ParseSize parses "small", "medium" or "large".
func ParseSize(s string) (Size, error) {
	for _, z := range Sizes {
		if s == z.String() {
			return z, nil
		}
	}
	return 0, fmt.Errorf("size %q: want small, medium or large", s)
}

var (
	smallBox  = Box{Max: [3]float64{1000, 1000, 200}}
	mediumBox = smallBox
	largeBox  = Box{Max: [3]float64{2500, 4000, 200}}
)

func boxOf(z Size) Box {
	if z == Large {
		return largeBox
	}
	return mediumBox
}

// KNN returns the spec of the knn benchmark (neighbor issue): uniform sources
// and the grid of cell centres; medium is 50,000 sources in 1000 × 1000 × 200
// and a 200 × 200 × 25 grid.
func KNN(z Size, seed uint64) Spec {
	s := Spec{Seed: seed, Box: boxOf(z), Layout: Uniform}
	switch z {
	case Small:
		s.Samples, s.GridSize = 5000, [3]int{40, 40, 10}
	case Medium:
		s.Samples, s.GridSize = 50000, [3]int{200, 200, 25}
	default:
		s.Samples, s.GridSize = 500000, [3]int{500, 800, 25}
	}
	return s
}

// Kriging returns the spec of the kriging benchmark (kriging issue):
// drill-hole data sampled every 5 m; medium is 2,000 data and the
// 100 × 100 × 20 grid of 10 m cells over 1000 × 1000 × 200.
func Kriging(z Size, seed uint64) Spec {
	s := Spec{Seed: seed, Box: boxOf(z), Layout: Holes, Spacing: 5}
	switch z {
	case Small:
		s.Samples, s.GridSize = 300, [3]int{20, 20, 10}
	case Medium:
		s.Samples, s.GridSize = 2000, [3]int{100, 100, 20}
	default:
		s.Samples, s.GridSize = 20000, [3]int{250, 400, 20}
	}
	return s
}

// Simulation returns the spec of the turning-bands benchmark (tbsim issue):
// drill-hole data sampled every 5 m; medium is 2,000 data and the
// 200 × 200 × 25 grid (5 × 5 × 8 m cells).
func Simulation(z Size, seed uint64) Spec {
	s := Spec{Seed: seed, Box: boxOf(z), Layout: Holes, Spacing: 5}
	switch z {
	case Small:
		s.Samples, s.GridSize = 300, [3]int{25, 25, 8}
	case Medium:
		s.Samples, s.GridSize = 2000, [3]int{200, 200, 25}
	default:
		s.Samples, s.GridSize = 20000, [3]int{500, 800, 25}
	}
	return s
}

// GradesAt returns the case's grade model at arbitrary points (flat xyz):
// exp(LogMean + LogSD·(f(x) + √c0·ε)) with the smooth field f of the case
// and white noise ε from the seed's nugget stream (sub-stream 1, so it does
// not repeat the samples' noise). Use it for values on grid cells.
func (c *Case) GradesAt(coords []float64) []float64 {
	out := c.Field.Values(nil, coords)
	noise := stream(c.Spec.Seed, purposeNugget, 1)
	sd := math.Sqrt(c.Variogram.Nugget)
	for i, y := range out {
		out[i] = math.Exp(LogMean + LogSD*(y+sd*noise.NormFloat64()))
	}
	return out
}

// RoundSome returns a copy of values in which a random fraction (from the
// seed) is rounded to a multiple of step, like assays reported at a coarse
// precision: the rounded values form tie groups, the others stay distinct.
// It also returns the indices of the rounded values, in increasing order.
func RoundSome(seed uint64, values []float64, fraction, step float64) ([]float64, []int) {
	out := append([]float64(nil), values...)
	r := stream(seed, purposeRounding, 0)
	var idx []int
	for i, v := range out {
		if r.Float64() < fraction {
			out[i] = math.Round(v/step) * step
			idx = append(idx, i)
		}
	}
	return out, idx
}

// Ensemble returns realisations columns of rows values each, shaped like a
// simulation output in data units: the case distribution's back-transform
// of independent standard normal values (full-entropy mantissas, like real
// realisations; no spatial structure). Column j uses its own stream.
func (c *Case) Ensemble(rows, realisations int) [][]float64 {
	cols := make([][]float64, realisations)
	for j := range cols {
		r := stream(c.Spec.Seed, purposeColumns, uint64(j))
		col := make([]float64, rows)
		for i := range col {
			col[i] = r.NormFloat64()
		}
		c.Distribution.BackTransforms(col, col)
		cols[j] = col
	}
	return cols
}
