package geostat_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

func ExampleBuildDistribution() {
	// Four grades, the two clustered high ones with half the declustering
	// weight of the others; one sample has no grade.
	grades := []float64{3.1, 0.8, math.NaN(), 2.9, 1.2}
	weights := []float64{0.15, 0.35, 0.2, 0.15, 0.35}
	// The task's tails: lower {min 0, power 0.5}, upper {max 6, power 0.5}.
	lower, err := geostat.LowerPowerTail(0, 0.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	upper, err := geostat.UpperPowerTail(6, 0.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := geostat.BuildDistribution(grades, weights, lower, upper)
	if err != nil {
		fmt.Println(err)
		return
	}
	for j := 0; j < d.Len(); j++ {
		z, p := d.Node(j)
		fmt.Printf("%.1f %.3f\n", z, p)
	}
	l, u := d.Tails()
	fmt.Printf("lower power %g (stored as 1/0.5), upper power %g\n", l.Power, u.Power)
	// Output:
	// 0.8 0.175
	// 1.2 0.525
	// 2.9 0.775
	// 3.1 0.925
	// lower power 2 (stored as 1/0.5), upper power 0.5
}

func ExampleDistribution_NormalScoresAll() {
	d, err := geostat.BuildDistribution([]float64{1, 2, 3, 4}, nil, geostat.Tail{}, geostat.Tail{})
	if err != nil {
		fmt.Println(err)
		return
	}
	values := []float64{1, 2.5, math.NaN(), 4}
	scores := make([]float64, len(values))
	if err := d.NormalScoresAll(context.Background(), scores, values, nil); err != nil {
		fmt.Println(err)
		return
	}
	back := make([]float64, len(values))
	if err := d.BackTransformsAll(context.Background(), back, scores, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n%.4f\n", scores, back)
	// Output:
	// [-1.1503 0.0000 NaN 1.1503]
	// [1.0000 2.5000 NaN 4.0000]
}
