package ensemble_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat/ensemble"
)

// Location-wise statistics of three cells over five realisations, given as
// one column per realisation (the layout of an ensemble attribute). The
// second cell has a missing realisation: its statistics are those of its
// four values.
func ExampleCompute() {
	nan := math.NaN()
	realisations := [][]float64{
		{1.0, 0.2, 3.0},
		{2.0, nan, 3.5},
		{3.0, 0.4, 4.0},
		{4.0, 0.6, 4.5},
		{5.0, 0.8, 5.0},
	}
	src := ensemble.NewColumnsSource(realisations, 2) // tiles of 2 cells
	st, err := ensemble.Compute(context.Background(), src, ensemble.Operations{
		Summary:          true,
		Quantiles:        []float64{0.1, 0.5, 0.9},
		ProbabilityAbove: []float64{3},
		MeanAbove:        []float64{3},
	})
	if err != nil {
		panic(err)
	}
	for c := range 3 {
		fmt.Printf("cell %d: min %.2f max %.2f mean %.2f var %.3f  P10 %.2f P50 %.2f P90 %.2f  P(>3) %.2f  E(>3) %.2f\n",
			c, st.Min[c], st.Max[c], st.Mean[c], st.Variance[c],
			st.Quantiles[0][c], st.Quantiles[1][c], st.Quantiles[2][c],
			st.ProbabilityAbove[0][c], st.MeanAbove[0][c])
	}
	// Output:
	// cell 0: min 1.00 max 5.00 mean 3.00 var 2.000  P10 1.40 P50 3.00 P90 4.60  P(>3) 0.40  E(>3) 4.50
	// cell 1: min 0.20 max 0.80 mean 0.50 var 0.050  P10 0.26 P50 0.50 P90 0.74  P(>3) 0.00  E(>3) NaN
	// cell 2: min 3.00 max 5.00 mean 4.00 var 0.500  P10 3.20 P50 4.00 P90 4.80  P(>3) 0.80  E(>3) 4.25
}

// The output names of the location-wise task, in the order it writes them.
func ExampleLocationWise_Outputs() {
	l, err := ensemble.NewLocationWise(ensemble.Operations{
		Summary: true, Quantiles: []float64{0.1, 0.9}, ProbabilityAbove: []float64{0.5}, MeanAbove: []float64{2},
	}, 1, 1)
	if err != nil {
		panic(err)
	}
	for _, o := range l.Outputs() {
		fmt.Println(o.Name)
	}
	// Output:
	// min
	// max
	// mean
	// variance
	// Quantile: 0.1
	// Quantile: 0.9
	// Prob>0.5
	// Mean>2.0
}

// Statistics and a loss classification in one pass over the tiles of a
// running simulation: each tile holds its cells' values realisation-major
// (cell i of realisation r at flat[i+r·n]), as tbsim.Stream hands them over.
// Cell 2 (0.9, 1.1, 0.7) has a mean below the cutoff 1 but is ore: with
// C = 12 and v = 16, excluding it loses 16·1.1 − 12 = 5.6 where including it
// loses only 12 − 16·0.7 = 0.8 (and nothing for 0.9, worth 14.4 > C).
func ExampleProcessTile() {
	const cells, R = 4, 3
	l, err := ensemble.NewLocationWise(ensemble.Operations{Summary: true}, cells, R)
	if err != nil {
		panic(err)
	}
	econ := ensemble.Economics{
		Categories:     []ensemble.Category{{Label: "waste"}, {Label: "ore", CutoffGrade: 1, MetalPrice: 20}},
		ProcessingCost: 12, MiningOreCost: 2, MiningWasteCost: 2, MetalRecoveryFraction: 0.8,
	}
	cl, err := ensemble.NewClassifier(ensemble.MinimiseLoss, econ, cells, R)
	if err != nil {
		panic(err)
	}
	tiles := []struct {
		lo   int
		flat []float64
	}{
		{0, []float64{0.2, 1.4, 0.3, 1.9, 0.1, 1.1}}, // cells 0, 1
		{2, []float64{0.9, 2.5, 1.1, 2.2, 0.7, 2.8}}, // cells 2, 3
	}
	var cols [][]float64
	for _, t := range tiles {
		tile := ensemble.TileFromFlat(t.lo, 2, R, t.flat, cols)
		if err := ensemble.ProcessTile(context.Background(), tile, l, cl); err != nil {
			panic(err)
		}
	}
	labels := cl.LookupTable()
	for c := range cells {
		fmt.Printf("cell %d: mean %.3f  %s\n", c, l.Statistics().Mean[c], labels[cl.Keys()[c]])
	}
	// Output:
	// cell 0: mean 0.200  waste
	// cell 1: mean 1.467  ore
	// cell 2: mean 0.900  ore
	// cell 3: mean 2.500  ore
}

// Loss and profit classification of single blocks. With C = processing +
// mining ore − mining waste = 11 and v = recovery·price = 18, a block whose
// every realisation is 1.2 is below the 2.0 cutoff of "ore": excluding it
// loses nothing, so the loss rule keeps it as waste; its expected profit
// 18·1.2 − 13 = 8.6 beats −2 (mining it as waste), so the profit rule sends
// it to ore.
func ExampleClassify() {
	econ := ensemble.Economics{
		Categories: []ensemble.Category{
			{Label: "waste"},
			{Label: "low grade", CutoffGrade: 1, MetalPrice: 10},
			{Label: "ore", CutoffGrade: 2, MetalPrice: 20},
		},
		ProcessingCost: 10, MiningOreCost: 3, MiningWasteCost: 2, MetalRecoveryFraction: 0.9,
	}
	labels := econ.LookupTable()
	for _, z := range [][]float64{{0.5, 1.5, 2.5, 3.5}, {1.5, 1.5, 1.5, 0.5}, {1.2, 1.2, 1.2, 1.2}} {
		fmt.Printf("%v: loss %s, profit %s\n", z,
			labels[ensemble.Classify(ensemble.MinimiseLoss, econ, z)],
			labels[ensemble.Classify(ensemble.MaximiseProfit, econ, z)])
	}
	// Output:
	// [0.5 1.5 2.5 3.5]: loss ore, profit ore
	// [1.5 1.5 1.5 0.5]: loss low grade, profit ore
	// [1.2 1.2 1.2 1.2]: loss waste, profit ore
}

// Streaming an ensemble tile by tile with one tile's outputs in memory: a
// reducer of one tile's cells, reset before each tile, run by a
// TileProcessor that keeps its buffers, each tile's mean written away (here
// printed) before the next. Three cells, two realisations, tiles of two
// cells; the third cell's second realisation is missing.
func ExampleTileProcessor() {
	ctx := context.Background()
	tiles := [][][]float64{
		{{1, 2}, {3, 6}},    // cells 0 and 1, realisations 0 and 1
		{{5}, {math.NaN()}}, // cell 2
	}
	l, err := ensemble.NewLocationWise(ensemble.Operations{Summary: true}, 2, 2)
	if err != nil {
		panic(err)
	}
	p, err := ensemble.NewTileProcessor(ctx, l)
	if err != nil {
		panic(err)
	}
	for _, cols := range tiles {
		l.Reset()
		if err := p.Process(ctx, ensemble.Tile{Lo: 0, Columns: cols}); err != nil {
			panic(err)
		}
		fmt.Println(l.Statistics().Mean[:len(cols[0])])
	}
	// Output:
	// [2 4]
	// [5]
}
