package ensemble

import (
	"context"
	"fmt"
	"math"
)

// Category is a material category of a classification: the cutoff grade
// above which a block belongs to it and the price of its metal.
type Category struct {
	// Label names the category in the lookup table ("waste", "ore", …).
	Label string
	// CutoffGrade is the grade above which a block is this material (≥ 0).
	CutoffGrade float64
	// MetalPrice is the price per unit of metal (≥ 0).
	MetalPrice float64
}

// Economics are the parameters of a loss or profit classification, named
// after the members of the loss-calculation and profit-calculation tasks.
type Economics struct {
	// Categories are the material categories ordered from the lowest to
	// the highest cutoff grade (material_categories); the first one is the
	// default category of a block that qualifies for no other.
	Categories []Category
	// ProcessingCost is the cost of processing a unit of material
	// (processing_cost, ≥ 0).
	ProcessingCost float64
	// MiningWasteCost is the cost of mining a unit as waste
	// (mining_waste_cost, ≥ 0).
	MiningWasteCost float64
	// MiningOreCost is the cost of mining a unit as ore (mining_ore_cost,
	// ≥ 0).
	MiningOreCost float64
	// MetalRecoveryFraction is the recovered fraction of the metal
	// (metal_recovery_fraction, in [0, 1]).
	MetalRecoveryFraction float64
}

// Validate returns a *FieldError naming the offending member when a cost or
// price is negative or not finite, the recovery is outside [0, 1], the
// category list is empty, a cutoff is below the previous one, or a label
// repeats another.
func (e Economics) Validate() error {
	for _, m := range []struct {
		name string
		v    float64
	}{{"processing_cost", e.ProcessingCost}, {"mining_waste_cost", e.MiningWasteCost}, {"mining_ore_cost", e.MiningOreCost}} {
		if !(m.v >= 0) || math.IsInf(m.v, 1) {
			return fieldError(m.name, "%v must be a finite number ≥ 0", m.v)
		}
	}
	if !(e.MetalRecoveryFraction >= 0 && e.MetalRecoveryFraction <= 1) {
		return fieldError("metal_recovery_fraction", "%v is outside [0, 1]", e.MetalRecoveryFraction)
	}
	if len(e.Categories) == 0 {
		return fieldError("material_categories", "at least one category is required")
	}
	if len(e.Categories) > math.MaxInt32 {
		return fieldError("material_categories", "%d categories is too many", len(e.Categories))
	}
	labels := make(map[string]int, len(e.Categories))
	for i, c := range e.Categories {
		if !(c.CutoffGrade >= 0) || math.IsInf(c.CutoffGrade, 1) {
			return fieldError(fmt.Sprintf("material_categories[%d].cutoff_grade", i), "%v must be a finite number ≥ 0", c.CutoffGrade)
		}
		if !(c.MetalPrice >= 0) || math.IsInf(c.MetalPrice, 1) {
			return fieldError(fmt.Sprintf("material_categories[%d].metal_price", i), "%v must be a finite number ≥ 0", c.MetalPrice)
		}
		if i > 0 && c.CutoffGrade < e.Categories[i-1].CutoffGrade {
			return fieldError(fmt.Sprintf("material_categories[%d].cutoff_grade", i),
				"%v is below material_categories[%d].cutoff_grade = %v: categories go from the lowest to the highest cutoff",
				c.CutoffGrade, i-1, e.Categories[i-1].CutoffGrade)
		}
		if j, dup := labels[c.Label]; dup {
			return fieldError(fmt.Sprintf("material_categories[%d].label", i), "%q repeats material_categories[%d].label", c.Label, j)
		}
		labels[c.Label] = i
	}
	return nil
}

// LookupTable returns the labels by key: key k is the 0-based position of the
// category in Categories, its label LookupTable()[k].
func (e Economics) LookupTable() []string {
	out := make([]string, len(e.Categories))
	for i, c := range e.Categories {
		out[i] = c.Label
	}
	return out
}

// Criterion is the decision rule of a classification.
type Criterion int

const (
	// MinimiseLoss includes a block in a category when the expected loss
	// of including it is lower than that of excluding it
	// (loss-calculation).
	MinimiseLoss Criterion = iota + 1
	// MaximiseProfit includes a block in a category when the expected
	// profit of including it is higher than that of excluding it
	// (profit-calculation).
	MaximiseProfit
)

// String returns "loss" or "profit".
func (c Criterion) String() string {
	switch c {
	case MinimiseLoss:
		return "loss"
	case MaximiseProfit:
		return "profit"
	}
	return fmt.Sprintf("Criterion(%d)", int(c))
}

// NoCategory is the key of a block without any finite realisation.
const NoCategory int32 = -1

// Classify returns the key of the category of one block from its
// realisations z (NaN and ±Inf are missing and skipped): NoCategory when no
// realisation is finite; else the last category, in list order, that the
// block qualifies for; else 0, the first category. e must be valid
// (Economics.Validate).
//
// With the n finite realisations z_1 … z_n, C = processing_cost +
// mining_ore_cost − mining_waste_cost, and for category c with cutoff g and
// value per unit of grade v = metal_recovery_fraction · metal_price
// (derivation in docs/ensemble.md):
//
//	MinimiseLoss:   L_incl = (1/n) Σ_{z_r ≤ g} max(0, C − v·z_r)
//	                L_excl = (1/n) Σ_{z_r > g} max(0, v·z_r − C)
//	                the block qualifies for c when L_incl < L_excl
//	MaximiseProfit: Π_incl = v·z̄ − processing_cost − mining_ore_cost
//	                Π_excl = −mining_waste_cost
//	                the block qualifies for c when Π_incl > Π_excl
//
// where z̄ is the mean of the z_r. Equality does not qualify. The sums run in
// a fixed order (the loss sums in realisation order, the mean as
// LocationWise sums), so the decision is a function of the values alone.
func Classify(crit Criterion, e Economics, z []float64) int32 {
	var s []float64
	for _, x := range z {
		if x-x == 0 {
			s = append(s, x)
		}
	}
	return decide(crit, &e, s)
}

// decide classifies one block from its finite values z.
func decide(crit Criterion, e *Economics, z []float64) int32 {
	n := len(z)
	if n == 0 {
		return NoCategory
	}
	f := e.MetalRecoveryFraction
	key := int32(0)
	switch crit {
	case MinimiseLoss:
		C := e.ProcessingCost + e.MiningOreCost - e.MiningWasteCost
		for k, c := range e.Categories {
			v := f * c.MetalPrice
			incl, excl := 0.0, 0.0
			for _, x := range z {
				if x > c.CutoffGrade {
					excl += max(0, v*x-C)
				} else {
					incl += max(0, C-v*x)
				}
			}
			// Both sums carry the factor 1/n; compare them without it.
			if incl < excl {
				key = int32(k)
			}
		}
	case MaximiseProfit:
		mean := sum(z) / float64(n)
		for k, c := range e.Categories {
			incl := f*c.MetalPrice*mean - e.ProcessingCost - e.MiningOreCost
			if incl > -e.MiningWasteCost {
				key = int32(k)
			}
		}
	default:
		panic(fmt.Sprintf("ensemble: unknown criterion %d", int(crit)))
	}
	return key
}

// Classifier classifies every block of an ensemble into material categories
// (a Reducer): Keys()[cell] is the key Classify gives the cell's
// realisations.
type Classifier struct {
	crit  Criterion
	econ  Economics
	keys  []int32
	nreal int
}

// NewClassifier validates crit and e and allocates the keys of cells blocks
// with realisations realisations (≥ 1), all NoCategory until computed.
func NewClassifier(crit Criterion, e Economics, cells, realisations int) (*Classifier, error) {
	if crit != MinimiseLoss && crit != MaximiseProfit {
		return nil, fmt.Errorf("ensemble: unknown criterion %d", int(crit))
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if cells < 0 || realisations < 1 {
		return nil, fmt.Errorf("ensemble: %d cells × %d realisations", cells, realisations)
	}
	e.Categories = append([]Category(nil), e.Categories...)
	keys := make([]int32, cells)
	for i := range keys {
		keys[i] = NoCategory
	}
	return &Classifier{crit: crit, econ: e, keys: keys, nreal: realisations}, nil
}

// Keys returns the category key of every cell (NoCategory where the cell has
// no finite realisation).
func (c *Classifier) Keys() []int32 { return c.keys }

// LookupTable returns the label of every key (Economics.LookupTable).
func (c *Classifier) LookupTable() []string { return c.econ.LookupTable() }

// Run classifies every cell of src (Process with c alone) and returns the
// keys.
func (c *Classifier) Run(ctx context.Context, src Source) ([]int32, error) {
	if err := Process(ctx, src, c); err != nil {
		return nil, err
	}
	return c.keys, nil
}

func (c *Classifier) realisations() int { return c.nreal }
func (c *Classifier) cells() int        { return len(c.keys) }
func (c *Classifier) reduce(cell int, v []float64, _ *scratch) {
	c.keys[cell] = decide(c.crit, &c.econ, v)
}
