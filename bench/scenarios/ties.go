package scenarios

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
)

// Tie fraction and rounding step of the break-ties case: 30 % of the grades
// reported to 0.1 (the ties issue's benchmark has 30 % ties).
const (
	tiedFraction = 0.3
	tiedStep     = 0.1
)

// tiesSearch is the local-mean neighbourhood: the 8 nearest values within
// the short structure's ellipsoid.
var tiesSearch = neighbor.Params{
	Ellipsoid:  geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 30, Rotation: synthetic.ModelRotation},
	MaxSamples: 8,
}

func breakTies() harness.Scenario {
	return harness.Scenario{
		Name:        "break-ties",
		Description: "local-average despiking of grades at every grid cell, 30 % tied, 8-sample local means (ties.Break)",
		Setup:       setupBreakTies,
	}
}

func setupBreakTies(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.Simulation(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	coords := c.Grid.CellCentres(nil)
	values, rounded := synthetic.RoundSome(cfg.Seed, c.GradesAt(coords), tiedFraction, tiedStep)
	var out []float64
	w := &harness.Workload{
		Info: fmt.Sprintf("%d values at cell centres (%v), %d rounded to %g, local means of %d within (%g, %g, %g)",
			len(values), c.Grid.Size, len(rounded), tiedStep, tiesSearch.MaxSamples,
			tiesSearch.Ellipsoid.Major, tiesSearch.Ellipsoid.SemiMajor, tiesSearch.Ellipsoid.Minor),
		Items: int64(len(values)),
		Unit:  "values",
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		out = nil
		p := tiesSearch
		var err error
		out, err = ties.Break(ctx, values, coords, &p, ties.Options{Seed: cfg.Seed, Progress: progress})
		return err
	}
	w.Check = func() error { return checkTiesBroken(values, out) }
	w.Release = func() { out = nil }
	w.Details = func() map[string]float64 {
		return map[string]float64{"tied_values": float64(tiedCount(values))}
	}
	return w, nil
}

// checkTiesBroken verifies the contract of tie breaking against the input:
// no ties remain, untied values are unchanged bit for bit, the order of
// distinct input values is kept and every group keeps its mean.
func checkTiesBroken(in, out []float64) error {
	if len(out) != len(in) {
		return fmt.Errorf("%d values out for %d in", len(out), len(in))
	}
	order := make([]int, len(in))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if in[a] != in[b] {
			if in[a] < in[b] {
				return -1
			}
			return 1
		}
		return a - b
	})
	prevMax := math.Inf(-1)
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && in[order[hi]] == in[order[lo]] {
			hi++
		}
		v := in[order[lo]]
		gmin, gmax, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, i := range order[lo:hi] {
			z := out[i]
			if hi-lo == 1 && math.Float64bits(z) != math.Float64bits(v) {
				return fmt.Errorf("untied value %d changed from %v to %v", i, v, z)
			}
			gmin, gmax, sum = math.Min(gmin, z), math.Max(gmax, z), sum+z
		}
		if !(gmin > prevMax) {
			return fmt.Errorf("values of group %v overlap the group below (%v ≤ %v)", v, gmin, prevMax)
		}
		if hi-lo > 1 {
			mean := sum / float64(hi-lo)
			if math.Abs(mean-v) > 1e-9*math.Max(math.Abs(v), 1) {
				return fmt.Errorf("group %v (%d values) has mean %v after breaking", v, hi-lo, mean)
			}
			s := make([]float64, 0, hi-lo)
			for _, i := range order[lo:hi] {
				s = append(s, out[i])
			}
			slices.Sort(s)
			for k := 1; k < len(s); k++ {
				if !(s[k] > s[k-1]) {
					return fmt.Errorf("group %v still holds the tie %v", v, s[k])
				}
			}
		}
		prevMax = gmax
		lo = hi
	}
	return nil
}

func tiedCount(v []float64) int {
	counts := make(map[float64]int, len(v))
	for _, x := range v {
		counts[x]++
	}
	n := 0
	for _, x := range v {
		if counts[x] > 1 {
			n++
		}
	}
	return n
}
