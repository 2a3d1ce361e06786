package scenarios

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
)

type krigingKind int

const (
	krigingSK krigingKind = iota
	krigingOK
	krigingBlock
)

// krigingSearch is the kriging issue's neighbourhood: the longest
// structure's ellipsoid, at most 32 samples.
func krigingSearch() neighbor.Params {
	return neighbor.Params{Ellipsoid: synthetic.SearchEllipsoid(), MaxSamples: 32, MinSamples: 4}
}

func krigingScenario(name string, kind krigingKind) harness.Scenario {
	desc := map[krigingKind]string{
		krigingSK:    "simple kriging (mean 0) of the normal scores at every cell centre, 32 samples (kriging.New + Estimate)",
		krigingOK:    "ordinary kriging of the normal scores at every cell centre, 32 samples (kriging.New + Estimate)",
		krigingBlock: "ordinary block kriging, 2 x 2 x 2 discretisation, of the normal scores on every cell, 32 samples",
	}[kind]
	return harness.Scenario{
		Name: name, Description: desc,
		Setup: func(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
			return setupKriging(ctx, cfg, kind)
		},
	}
}

func setupKriging(_ context.Context, cfg harness.Config, kind krigingKind) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.Kriging(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	p := kriging.Params{Variogram: c.Variogram, Method: kriging.Simple, Search: krigingSearch()}
	if kind != krigingSK {
		p.Method = kriging.Ordinary
	}
	if kind == krigingBlock {
		p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}
		p.CellSize = c.Grid.CellSize
		p.Rotation = c.Grid.Rotation
	}
	targets := c.Grid.CellCentres(nil)
	n := len(targets) / 3
	out := &kriging.Output{Estimate: make([]float64, n), Variance: make([]float64, n)}
	lo, hi := minMax(c.Normal)
	span := hi - lo
	var (
		build time.Duration
		stats kriging.Stats // of the last run's Kriger
		prio  float64
	)
	w := &harness.Workload{
		Info: fmt.Sprintf("%d data in %d holes, %d cells (%v of %g m), %s kriging, max %d samples, discretisation %dx%dx%d",
			len(c.Normal), c.Intervals.NumHoles(), n, c.Grid.Size, c.Grid.CellSize[0], p.Method,
			p.Search.MaxSamples, max(1, p.Discretisation.NX), max(1, p.Discretisation.NY), max(1, p.Discretisation.NZ)),
		Items: int64(n),
		Unit:  "cells",
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		for i := range out.Estimate {
			out.Estimate[i], out.Variance[i] = math.Inf(1), math.Inf(1)
		}
		t0 := time.Now()
		k, err := kriging.New(c.Coords, c.Normal, p)
		if err != nil {
			return err
		}
		build = time.Since(t0)
		if err := k.Estimate(ctx, targets, out, progress); err != nil {
			return err
		}
		stats, prio = k.Stats(), k.PriorVariance()
		return nil
	}
	w.Check = func() error {
		// Estimates stay within the data range widened by its span (kriging
		// weights may be negative but never wildly so). Simple kriging
		// variances lie in [0, prior variance]; ordinary kriging variances
		// may exceed the prior variance where the target extrapolates, but
		// stay far below a few times the point sill.
		m, err := checkValues("estimate", out.Estimate, lo-span, hi+span, 1)
		if err != nil {
			return err
		}
		vmax := prio * (1 + 1e-9)
		if p.Method == kriging.Ordinary {
			vmax = 4 * c.Variogram.TotalSill()
		}
		if _, err := checkValues("variance", out.Variance, 0, vmax, m); err != nil {
			return err
		}
		for i := range out.Estimate {
			if math.IsNaN(out.Estimate[i]) != math.IsNaN(out.Variance[i]) {
				return fmt.Errorf("target %d: estimate %v but variance %v", i, out.Estimate[i], out.Variance[i])
			}
		}
		if int64(n-m) != stats.Unestimated {
			return fmt.Errorf("%d targets without an estimate, the kriging stats count %d", n-m, stats.Unestimated)
		}
		return nil
	}
	w.Details = func() map[string]float64 {
		return map[string]float64{
			"build_seconds":         build.Seconds(),
			"factorisation_reuse":   stats.ReuseRate(),
			"factorisation_updates": float64(stats.Updated) / float64(max(1, stats.Systems)),
			"regularised_systems":   float64(stats.Regularised),
			"unestimated_cells":     float64(n) - float64(countFinite(out.Estimate)),
			"covariance_table_used": b2f(stats.Table),
		}
	}
	return w, nil
}

func countFinite(v []float64) int {
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			n++
		}
	}
	return n
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
