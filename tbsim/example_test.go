package tbsim_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/tbsim"
)

// A conditional simulation of a small grid: two data, simple kriging in
// Gaussian space, five realisations. The cell whose centre is a datum
// reproduces it in every realisation.
func ExampleRun() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{10, 10, 1}, [3]float64{10, 10, 10}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 50, SemiMajor: 50, Minor: 50}})
	coords := []float64{5, 5, 5, 95, 95, 5} // centres of cells 0 and 99
	values := []float64{1.5, -0.5}          // already Gaussian: no distribution
	p := tbsim.DefaultParams()
	p.Realisations = 5
	res, err := tbsim.Run(context.Background(), tbsim.Input{Grid: g, Coords: coords, Values: values, Variogram: v}, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cells:", res.Cells, "realisations:", res.Realisations, "data:", res.Stats.Data)
	for r := 0; r < res.Realisations; r++ {
		fmt.Printf("realisation %d: cell 0 = %.6f, cell 99 = %.6f\n", r, res.Block[0+r*res.Cells], res.Block[99+r*res.Cells])
	}
	// Output:
	// cells: 100 realisations: 5 data: 2
	// realisation 0: cell 0 = 1.500000, cell 99 = -0.500000
	// realisation 1: cell 0 = 1.500000, cell 99 = -0.500000
	// realisation 2: cell 0 = 1.500000, cell 99 = -0.500000
	// realisation 3: cell 0 = 1.500000, cell 99 = -0.500000
	// realisation 4: cell 0 = 1.500000, cell 99 = -0.500000
}

// Stream hands finished tiles to a sink in cell order, for writing as they
// come.
func ExampleStream() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{20, 10, 3}, [3]float64{5, 5, 5}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0.1, geostat.Structure{Type: geostat.Exponential, Contribution: 0.9,
		Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 10}})
	p := tbsim.DefaultParams()
	p.Realisations = 3
	p.TileRows = 10 // 200 cells per tile
	_, err := tbsim.Stream(context.Background(), tbsim.Input{Grid: g, Variogram: v}, p, func(t tbsim.Tile) error {
		fmt.Printf("cells [%d, %d): %d values\n", t.Lo, t.Hi, len(t.Block))
		return nil
	})
	fmt.Println("error:", err)
	// Output:
	// cells [0, 200): 600 values
	// cells [200, 400): 600 values
	// cells [400, 600): 600 values
	// error: <nil>
}

// A Field evaluated at points and on a grid gives the same values at the
// grid's nodes (here with the nugget keyed by the node index).
func ExampleField() {
	g, _ := grid.New([3]float64{100, 200, 0}, [3]int{8, 4, 2}, [3]float64{2, 2, 2}, geostat.Rotation{DipAzimuth: 30})
	v, _ := geostat.NewVariogram(0.2, geostat.Structure{Type: geostat.Gaussian, Contribution: 0.8,
		Ellipsoid: geostat.Ellipsoid{Major: 10, SemiMajor: 10, Minor: 5}})
	lo, hi := g.BoundingBox()
	f, _ := tbsim.NewField(v, 1, 500, 42, lo, hi)
	onGrid := make([]float64, g.NumCells())
	_ = f.Grid(context.Background(), 0, g, onGrid)
	atPoints := make([]float64, g.NumCells())
	f.Points(0, g.CellCentres(nil), tbsim.GridStream, 0, atPoints)
	worst := 0.0
	for i := range onGrid {
		worst = math.Max(worst, math.Abs(onGrid[i]-atPoints[i]))
	}
	fmt.Println("agree to 1e-9:", worst < 1e-9)
	// Output:
	// agree to 1e-9: true
}

// The lattice lags and model values of a variogram reproduction along the
// axes of an anisotropic model (here on constant values, whose experimental
// variogram is 0).
func ExampleVariogramReproduction() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{30, 30, 10}, [3]float64{1, 1, 1}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 10, SemiMajor: 6, Minor: 3, Rotation: geostat.Rotation{DipAzimuth: 90}}})
	values := make([]float64, g.NumCells())
	ev, _ := tbsim.VariogramReproduction(context.Background(), tbsim.ReproductionInput{Grid: g, Values: values,
		Realisations: 1, Variogram: v, Lags: 3})
	for _, e := range ev {
		fmt.Printf("%s:", e.Axis)
		for l := range e.Lags {
			fmt.Printf(" %v γ=%.4f γ̂=%.1f;", e.Lags[l], e.Model[l], e.Mean[l])
		}
		fmt.Println()
	}
	// Output:
	// major: [0 -5 0] γ=0.6875 γ̂=0.0; [0 -10 0] γ=1.0000 γ̂=0.0; [0 -15 0] γ=1.0000 γ̂=0.0;
	// semi_major: [3 0 0] γ=0.6875 γ̂=0.0; [6 0 0] γ=1.0000 γ̂=0.0; [9 0 0] γ=1.0000 γ̂=0.0;
	// minor: [0 0 2] γ=0.8519 γ̂=0.0; [0 0 3] γ=1.0000 γ̂=0.0; [0 0 5] γ=1.0000 γ̂=0.0;
}

// A simulation computed in parts — here realisations 3 and 4 of the second
// half of the coarse rows — gives exactly the values of the whole run.
func ExampleStreamPart() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{10, 10, 1}, [3]float64{10, 10, 10}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 50, SemiMajor: 50, Minor: 50}})
	in := tbsim.Input{Grid: g, Coords: []float64{5, 5, 5, 95, 95, 5}, Values: []float64{1.5, -0.5}, Variogram: v}
	p := tbsim.DefaultParams()
	p.Realisations = 5
	whole, _ := tbsim.Run(context.Background(), in, p)
	starts, _ := tbsim.RowStarts(in)
	part := tbsim.Part{R0: 3, R1: 5, Row0: 5, Row1: 10}
	same, values := true, 0
	_, err := tbsim.StreamPart(context.Background(), in, p, part, func(t tbsim.Tile) error {
		m := t.Hi - t.Lo
		for r := 0; r < t.Realisations; r++ {
			for c := t.Lo; c < t.Hi; c++ {
				same = same && math.Float64bits(t.Block[c-t.Lo+r*m]) == math.Float64bits(whole.Block[c+(part.R0+r)*whole.Cells])
				values++
			}
		}
		return nil
	})
	fmt.Println("rows 5-10 are cells", starts[5], "to", starts[10], "; values:", values, "identical:", same, err)
	// Output:
	// rows 5-10 are cells 50 to 100 ; values: 100 identical: true <nil>
}

// Prepare a realisation range once and stream two runs of rows of it: the
// values equal those of Run.
func ExamplePrepare() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{10, 10, 1}, [3]float64{10, 10, 10}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 50, SemiMajor: 50, Minor: 50}})
	in := tbsim.Input{Grid: g, Coords: []float64{5, 5, 5, 95, 95, 5}, Values: []float64{1.5, -0.5}, Variogram: v}
	p := tbsim.DefaultParams()
	p.Realisations = 5
	whole, _ := tbsim.Run(context.Background(), in, p)
	pr, err := tbsim.Prepare(context.Background(), in, p, 3, 5) // realisations 3 and 4
	if err != nil {
		fmt.Println(err)
		return
	}
	same, values := true, 0
	for _, rows := range [][2]int{{0, 5}, {5, 10}} {
		_, err := pr.Stream(context.Background(), rows[0], rows[1], nil, func(t tbsim.Tile) error {
			m := t.Hi - t.Lo
			for r := 0; r < t.Realisations; r++ {
				for c := t.Lo; c < t.Hi; c++ {
					same = same && math.Float64bits(t.Block[c-t.Lo+r*m]) == math.Float64bits(whole.Block[c+(3+r)*whole.Cells])
					values++
				}
			}
			return nil
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("rows:", pr.Rows(), "; values:", values, "identical:", same)
	// Output:
	// rows: 10 ; values: 200 identical: true
}
