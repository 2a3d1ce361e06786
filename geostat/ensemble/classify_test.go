package ensemble

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEconomics: C = processing + mining ore − mining waste = 10 + 3 − 2 =
// 11; recovery 0.9, so v = 0.9·price: low grade v = 9, ore v = 18.
func testEconomics() Economics {
	return Economics{
		Categories: []Category{
			{Label: "waste"},
			{Label: "low grade", CutoffGrade: 1, MetalPrice: 10},
			{Label: "ore", CutoffGrade: 2, MetalPrice: 20},
		},
		ProcessingCost: 10, MiningOreCost: 3, MiningWasteCost: 2, MetalRecoveryFraction: 0.9,
	}
}

// Blocks classified by hand from the formulas of Classify (the sums are
// written out in the comments; C = 11).
func TestClassifyHand(t *testing.T) {
	e := testEconomics()
	for _, c := range []struct {
		name         string
		z            []float64
		loss, profit int32
	}{
		// Low: L_excl = (13.5−11)+(22.5−11)+(31.5−11) = 34.5 > L_incl =
		// 11−4.5 = 6.5 → qualifies. Ore: L_excl = 34+52 = 86 > L_incl =
		// (11−9)+0 = 2 → qualifies; the last wins. Profit: mean 2, low
		// 9·2−13 = 5 > −2, ore 18·2−13 = 23 > −2 → ore.
		{"rich", []float64{0.5, 1.5, 2.5, 3.5}, 2, 2},
		// Low: L_excl = 3·(13.5−11) = 7.5 > L_incl = 11−4.5 = 6.5 →
		// qualifies. Ore: nothing above 2, L_excl = 0 < L_incl = 0+0+0+2 →
		// not. Profit: mean 1.25, low 11.25−13 = −1.75 > −2, ore 22.5−13 =
		// 9.5 > −2 → ore.
		{"low grade", []float64{1.5, 1.5, 1.5, 0.5}, 1, 2},
		// The same block with missing realisations.
		{"low grade, missing", []float64{nanv, 1.5, inf, 1.5, 1.5, -inf, 0.5}, 1, 2},
		// Loss: 1.2 is below the ore cutoff and v·z = 10.8 < C for low
		// grade: every sum is 0 → waste. Profit: ore 18·1.2−13 = 8.6 > −2
		// (the profit rule depends only on the mean).
		{"cutoff and breakeven disagree", []float64{1.2, 1.2, 1.2, 1.2}, 0, 2},
		// Low: L_excl = 27−11 = 16 < L_incl = 9.2+7.4+5.6 = 22.2 → not.
		// Ore: L_excl = 54−11 = 43 > L_incl = 7.4+3.8+0.2 = 11.4 →
		// qualifies. Profit: mean 1.05, low 9.45−13 = −3.55 < −2 → not;
		// ore 18.9−13 = 5.9 → ore.
		{"ore but not low grade", []float64{0.2, 0.4, 0.6, 3.0}, 2, 2},
		// Poor: loss low L_excl = 0 (nothing above 1), ore 0 → waste;
		// profit mean 0.3: low 2.7−13, ore 5.4−13 → waste.
		{"waste", []float64{0.1, 0.3, 0.5}, 0, 0},
		{"no value", []float64{nanv, nanv}, NoCategory, NoCategory},
		{"empty", nil, NoCategory, NoCategory},
	} {
		assert.Equal(t, c.loss, Classify(MinimiseLoss, e, c.z), "loss: %s", c.name)
		assert.Equal(t, c.profit, Classify(MaximiseProfit, e, c.z), "profit: %s", c.name)
	}
}

// Equality of the two expectations does not qualify.
func TestClassifyEquality(t *testing.T) {
	// C = 1, v = 1, cutoff 1. z = {0, 2}: L_incl = 1−0 = 1 = L_excl = 2−1;
	// mean 1: Π_incl = 1 − 1 = 0 = Π_excl.
	e := Economics{Categories: []Category{{Label: "waste"}, {Label: "ore", CutoffGrade: 1, MetalPrice: 1}},
		ProcessingCost: 1, MetalRecoveryFraction: 1}
	z := []float64{0, 2}
	assert.Equal(t, int32(0), Classify(MinimiseLoss, e, z))
	assert.Equal(t, int32(0), Classify(MaximiseProfit, e, z))
	// A hair more grade tips both.
	z[1] = 2.001
	assert.Equal(t, int32(1), Classify(MinimiseLoss, e, z))
	assert.Equal(t, int32(1), Classify(MaximiseProfit, e, z))
}

// When the cutoff is the breakeven grade C/v, the clipping in the loss is
// inactive and the loss rule equals the profit rule (docs/ensemble.md).
func TestLossEqualsProfitAtBreakeven(t *testing.T) {
	// C = 8, v = 4: breakeven 2.
	e := Economics{Categories: []Category{{Label: "waste"}, {Label: "ore", CutoffGrade: 2, MetalPrice: 4}},
		ProcessingCost: 6, MiningOreCost: 3, MiningWasteCost: 1, MetalRecoveryFraction: 1}
	cols := randomEnsemble(9, 2000, 15)
	z := make([]float64, 15)
	agree := map[int32]int{}
	for c := 0; c < 2000; c++ {
		for r := range z {
			z[r] = cols[r][c]
		}
		loss, profit := Classify(MinimiseLoss, e, z), Classify(MaximiseProfit, e, z)
		require.Equal(t, profit, loss, "cell %d: %v", c, z)
		agree[loss]++
	}
	// Both decisions occur.
	assert.Greater(t, agree[0], 100)
	assert.Greater(t, agree[1], 100)
}

// The streaming classifier equals Classify cell by cell.
func TestClassifierProcess(t *testing.T) {
	const cells, R = 2500, 12
	cols := randomEnsemble(4, cells, R)
	for _, crit := range []Criterion{MinimiseLoss, MaximiseProfit} {
		cl, err := NewClassifier(crit, testEconomics(), cells, R)
		require.NoError(t, err)
		// In one pass with quantiles, which reorder the values afterwards.
		l, err := NewLocationWise(Operations{Quantiles: []float64{0.5}}, cells, R)
		require.NoError(t, err)
		var done []int
		require.NoError(t, ProcessWithProgress(context.Background(), NewColumnsSource(cols, 999),
			func(d, total int) {
				require.Equal(t, cells, total)
				done = append(done, d)
			}, l, cl))
		require.Equal(t, []int{999, 1998, cells}, done)
		z := make([]float64, R)
		counts := map[int32]int{}
		for c := 0; c < cells; c++ {
			for r := range z {
				z[r] = cols[r][c]
			}
			require.Equal(t, Classify(crit, testEconomics(), z), cl.Keys()[c], "%s cell %d", crit, c)
			counts[cl.Keys()[c]]++
		}
		assert.Greater(t, counts[NoCategory], 10, crit.String())
		assert.Greater(t, counts[2], 10, crit.String())
		assert.Equal(t, []string{"waste", "low grade", "ore"}, cl.LookupTable())
	}
}

func TestEconomicsValidate(t *testing.T) {
	mod := func(f func(e *Economics)) Economics {
		e := testEconomics()
		f(&e)
		return e
	}
	for _, c := range []struct {
		e    Economics
		want string
	}{
		{mod(func(e *Economics) { e.ProcessingCost = -1 }), "processing_cost: -1 must be"},
		{mod(func(e *Economics) { e.MiningWasteCost = math.NaN() }), "mining_waste_cost"},
		{mod(func(e *Economics) { e.MiningOreCost = math.Inf(1) }), "mining_ore_cost"},
		{mod(func(e *Economics) { e.MetalRecoveryFraction = 1.5 }), "metal_recovery_fraction: 1.5 is outside [0, 1]"},
		{mod(func(e *Economics) { e.Categories = nil }), "material_categories: at least one"},
		{mod(func(e *Economics) { e.Categories[1].CutoffGrade = -0.5 }), "material_categories[1].cutoff_grade: -0.5 must be"},
		{mod(func(e *Economics) { e.Categories[2].MetalPrice = -1 }), "material_categories[2].metal_price"},
		{mod(func(e *Economics) { e.Categories[2].CutoffGrade = 0.5 }), "material_categories[2].cutoff_grade: 0.5 is below material_categories[1].cutoff_grade = 1"},
		{mod(func(e *Economics) { e.Categories[2].Label = "waste" }), `material_categories[2].label: "waste" repeats material_categories[0].label`},
	} {
		assert.ErrorContains(t, c.e.Validate(), c.want)
		_, err := NewClassifier(MinimiseLoss, c.e, 1, 1)
		assert.ErrorContains(t, err, c.want)
	}
	var fe *FieldError
	require.ErrorAs(t, mod(func(e *Economics) { e.Categories[1].MetalPrice = -2 }).Validate(), &fe)
	assert.Equal(t, "material_categories[1].metal_price", fe.Name)
	// Equal cutoffs are in order.
	require.NoError(t, mod(func(e *Economics) { e.Categories[2].CutoffGrade = 1 }).Validate())
	_, err := NewClassifier(Criterion(7), testEconomics(), 1, 1)
	assert.ErrorContains(t, err, "unknown criterion")
}
