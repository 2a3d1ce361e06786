package report_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/report"
	"github.com/geostat-engine/geostat/grid"
)

// A report of a tiny ensemble: two cells, two realisations of point values.
// The reference distribution has mean 3; the realisations average 2 and 4.
func ExampleCompute() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{2, 1, 1}, [3]float64{10, 10, 10}, geostat.Rotation{})
	ref, _ := geostat.NewDistribution([]float64{1, 5}, []float64{0.25, 0.75}, geostat.Tail{}, geostat.Tail{})
	v, _ := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 30, SemiMajor: 30, Minor: 30}})
	in := &report.Input{
		Context:          report.Context{Title: "Example"},
		Data:             report.Data{Coords: []float64{5, 5, 5, 15, 5, 5}, Values: []float64{2, 4}},
		Reference:        ref,
		Variogram:        v,
		Grid:             g,
		PointSimulations: []float64{1, 3, 2, 6}, // realisation 0: 1, 3; realisation 1: 2, 6
		Units:            "g/t",
	}
	r, err := report.Compute(context.Background(), in, nil)
	if err != nil {
		panic(err)
	}
	s := r.Summary
	fmt.Printf("reference mean %.2f, simulated mean %.2f: %s\n", s.ReferenceMean, s.Mean, s.Verdict)
	// The verdict judges the difference by the spread of the realisation
	// means (z = difference / spread).
	fmt.Printf("rule %s: spread of the realisation means %.2f\n", s.MeanCheck.Rule, s.MeanCheck.Spread)
	for i, st := range r.Ensembles[0].Realisations {
		fmt.Printf("realisation %d: mean %.1f, variance %.1f, Kolmogorov %.3f, z %.2f, %s\n",
			i+1, st.Mean, st.Variance, st.Kolmogorov, st.Z, st.Verdict)
	}
	// The page (r.WriteJSON writes every number as JSON).
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		panic(err)
	}
	fmt.Println("plots:", strings.Count(page.String(), "data-plot="))
	// Output:
	// reference mean 3.00, simulated mean 3.00: acceptable
	// rule fluctuation: spread of the realisation means 1.41
	// realisation 1: mean 2.0, variance 1.0, Kolmogorov 0.500, z -0.71, acceptable
	// realisation 2: mean 4.0, variance 4.0, Kolmogorov 0.375, z 0.71, acceptable
	// plots: 10
}
