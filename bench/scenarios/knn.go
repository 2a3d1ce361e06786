package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/neighbor"
)

// knnParams is the neighbourhood of the neighbor issue's benchmark: k = 16,
// ranges (300, 200, 50), rotation (30, 20, 10).
var knnParams = neighbor.Params{
	Ellipsoid:  geostat.Ellipsoid{Major: 300, SemiMajor: 200, Minor: 50, Rotation: synthetic.ModelRotation},
	MaxSamples: 16,
	MinSamples: 1,
}

// knnOracleTargets is the number of targets checked against brute force
// after every run.
const knnOracleTargets = 64

func knn() harness.Scenario {
	return harness.Scenario{
		Name:        "knn",
		Description: "KNN mean of uniform sources at every grid cell centre (neighbor.NewIndex + Index.Mean, k = 16)",
		Setup:       setupKNN,
	}
}

func setupKNN(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	w, build, err := setupIndexEstimate(cfg, "knn mean",
		func(c *synthetic.Case, cells int) string {
			return fmt.Sprintf("%d sources, %d cells (%v), k = %d, ranges (%g, %g, %g)",
				len(c.Grades), cells, c.Grid.Size, knnParams.MaxSamples,
				knnParams.Ellipsoid.Major, knnParams.Ellipsoid.SemiMajor, knnParams.Ellipsoid.Minor)
		},
		func(ctx context.Context, ix *neighbor.Index, grades, targets, out []float64, progress func(done, total int)) error {
			return ix.Mean(ctx, grades, targets, out, progress)
		},
		knnOracle)
	if err != nil {
		return nil, err
	}
	w.Details = func() map[string]float64 {
		return map[string]float64{"index_build_seconds": build.Seconds()}
	}
	return w, nil
}

// knnOracle checks a spread of knn means against brute force (bruteOracle):
// the plain mean of the nearest values.
func knnOracle(c *synthetic.Case, targets, out []float64) error {
	return bruteOracle(c, targets, out, "knn mean", func(grades []float64, cs []oracleCand) float64 {
		var s float64
		for _, q := range cs {
			s += grades[q.i]
		}
		return s / float64(len(cs))
	})
}

// setupIndexEstimate sets up a scenario that estimates at every grid cell
// centre of knn's case over a neighbour index of its sources with knnParams
// (knn, idw). Run builds the index (its time is stored in *build) and fills
// one output per cell with estimate, every entry first set to +Inf so that
// a target the library skipped fails the check. Check verifies that the
// estimates lie within the range of the values (an average of neighbours)
// and agree with oracle (a brute-force recomputation). name names the
// estimate in errors; info gives the workload's description from the
// case and the number of cells.
func setupIndexEstimate(cfg harness.Config, name string, info func(c *synthetic.Case, cells int) string,
	estimate func(ctx context.Context, ix *neighbor.Index, grades, targets, out []float64, progress func(done, total int)) error,
	oracle func(c *synthetic.Case, targets, out []float64) error) (*harness.Workload, *time.Duration, error) {
	c, err := synthetic.New(synthetic.KNN(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, nil, err
	}
	targets := c.Grid.CellCentres(nil)
	out := make([]float64, len(targets)/3)
	lo, hi := minMax(c.Grades)
	build := new(time.Duration)
	w := &harness.Workload{
		Info:  info(c, len(out)),
		Items: int64(len(out)),
		Unit:  "cells",
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		for i := range out {
			out[i] = math.Inf(1) // a target the library skipped fails the check
		}
		t0 := time.Now()
		ix, err := neighbor.NewIndex(c.Coords, c.Grades, nil, knnParams)
		if err != nil {
			return err
		}
		*build = time.Since(t0)
		return estimate(ctx, ix, c.Grades, targets, out, progress)
	}
	w.Check = func() error {
		if _, err := checkValues(name, out, lo, hi, len(out)/2); err != nil {
			return err
		}
		return oracle(c, targets, out)
	}
	return w, build, nil
}

// oracleCand is a source of the brute-force oracle: its anisotropic
// distance to the target and its index.
type oracleCand struct {
	d float64
	i int
}

// bruteOracle recomputes the estimate of a spread of knnOracleTargets
// targets by brute force: the MaxSamples nearest sources of knnParams in
// anisotropic distance ≤ 1 (ties by index) go to want, which gives the
// estimate from them (no value, NaN, with fewer than MinSamples). It fails
// when an estimate in out differs by more than 1e-9 relative.
func bruteOracle(c *synthetic.Case, targets, out []float64, name string, want func(grades []float64, cs []oracleCand) float64) error {
	a, err := knnParams.Ellipsoid.Anisotropy()
	if err != nil {
		return err
	}
	n := len(out)
	var cs []oracleCand
	for k := 0; k < knnOracleTargets; k++ {
		t := min((k*n)/knnOracleTargets+k%7, n-1)
		x, y, z := targets[3*t], targets[3*t+1], targets[3*t+2]
		cs = cs[:0]
		for i := range c.Grades {
			if d := a.Norm(c.Coords[3*i]-x, c.Coords[3*i+1]-y, c.Coords[3*i+2]-z); d <= 1 {
				cs = append(cs, oracleCand{d, i})
			}
		}
		slices.SortFunc(cs, func(p, q oracleCand) int {
			if r := cmp.Compare(p.d, q.d); r != 0 {
				return r
			}
			return p.i - q.i
		})
		wantT := math.NaN()
		if m := min(len(cs), knnParams.MaxSamples); m >= max(knnParams.MinSamples, 1) {
			wantT = want(c.Grades, cs[:m])
		}
		got := out[t]
		if math.IsNaN(wantT) != math.IsNaN(got) || (!math.IsNaN(wantT) && math.Abs(got-wantT) > 1e-9*math.Abs(wantT)) {
			return fmt.Errorf("%s at target %d = %v, brute force gives %v", name, t, got, wantT)
		}
	}
	return nil
}
