package scenarios

import (
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
	c, err := synthetic.New(synthetic.KNN(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	targets := c.Grid.CellCentres(nil)
	out := make([]float64, len(targets)/3)
	lo, hi := minMax(c.Grades)
	var build time.Duration
	w := &harness.Workload{
		Info: fmt.Sprintf("%d sources, %d cells (%v), k = %d, ranges (%g, %g, %g)",
			len(c.Grades), len(out), c.Grid.Size, knnParams.MaxSamples,
			knnParams.Ellipsoid.Major, knnParams.Ellipsoid.SemiMajor, knnParams.Ellipsoid.Minor),
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
		build = time.Since(t0)
		return ix.Mean(ctx, c.Grades, targets, out, progress)
	}
	w.Check = func() error {
		// A mean of neighbours lies within the range of the values.
		if _, err := checkValues("knn mean", out, lo, hi, len(out)/2); err != nil {
			return err
		}
		return knnOracle(c, targets, out)
	}
	w.Details = func() map[string]float64 {
		return map[string]float64{"index_build_seconds": build.Seconds()}
	}
	return w, nil
}

// knnOracle recomputes the mean of a spread of targets by brute force: the
// MaxSamples nearest sources in anisotropic distance ≤ 1, ties by index.
func knnOracle(c *synthetic.Case, targets, out []float64) error {
	a, err := knnParams.Ellipsoid.Anisotropy()
	if err != nil {
		return err
	}
	n := len(out)
	type cand struct {
		d float64
		i int
	}
	var cs []cand
	for k := 0; k < knnOracleTargets; k++ {
		t := (k*n)/knnOracleTargets + k%7
		if t >= n {
			t = n - 1
		}
		x, y, z := targets[3*t], targets[3*t+1], targets[3*t+2]
		cs = cs[:0]
		for i := range c.Grades {
			d := a.Norm(c.Coords[3*i]-x, c.Coords[3*i+1]-y, c.Coords[3*i+2]-z)
			if d <= 1 {
				cs = append(cs, cand{d, i})
			}
		}
		slices.SortFunc(cs, func(p, q cand) int {
			if p.d != q.d {
				if p.d < q.d {
					return -1
				}
				return 1
			}
			return p.i - q.i
		})
		want := math.NaN()
		if m := min(len(cs), knnParams.MaxSamples); m >= max(knnParams.MinSamples, 1) {
			var s float64
			for _, q := range cs[:m] {
				s += c.Grades[q.i]
			}
			want = s / float64(m)
		}
		got := out[t]
		if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-9*math.Abs(want)) {
			return fmt.Errorf("knn mean at target %d = %v, brute force gives %v", t, got, want)
		}
	}
	return nil
}
