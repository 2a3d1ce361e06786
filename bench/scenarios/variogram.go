package scenarios

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/geostat/variogram"
)

// variogramParams are the experimental variograms of the variogram issue's
// benchmark: the three axes of the case model's rotation, 20 lags of 10 m,
// tolerances 22.5°, bandwidth 20 m and band height 10 m.
func variogramParams() variogram.Params {
	m := synthetic.ModelRotation.Matrix()
	var dirs []variogram.Direction
	for a := range 3 {
		u := [3]float64{m[a], m[3+a], m[6+a]}
		if u[2] > 0 {
			u = [3]float64{-u[0], -u[1], -u[2]} // the same line, pointing down
		}
		az := math.Atan2(u[0], u[1]) * 180 / math.Pi
		if az < 0 {
			az += 360
		}
		dirs = append(dirs, variogram.Direction{Azimuth: az, Dip: math.Asin(-u[2]) * 180 / math.Pi,
			AzimuthTolerance: 22.5, DipTolerance: 22.5, Bandwidth: 20, BandHeight: 10})
	}
	return variogram.Params{Directions: dirs, LagDistance: 10, NLags: 20}
}

func variogramExperimental() harness.Scenario {
	return harness.Scenario{
		Name:        "variogram-experimental",
		Description: "experimental semivariograms of uniform samples' normal scores, 3 directions × 20 lags (variogram.Compute)",
		Setup:       setupVariogramExperimental,
	}
}

func setupVariogramExperimental(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.KNN(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	p := variogramParams()
	var e *variogram.Experimental
	w := &harness.Workload{
		Info: fmt.Sprintf("%d samples in %v m, %d directions × %d lags of %g m",
			len(c.Normal), c.Spec.Box.Extent(), len(p.Directions), p.NLags, p.LagDistance),
		Items: int64(len(c.Normal)),
		Unit:  "samples",
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		pp := p
		pp.Progress = progress
		var err error
		e, err = variogram.Compute(ctx, c.Coords, c.Normal, nil, pp)
		return err
	}
	w.Check = func() error { return checkExperimental(e, len(p.Directions)) }
	w.Details = func() map[string]float64 {
		if e == nil {
			return nil
		}
		pairs := 0.0
		for _, l := range e.Lags {
			pairs += float64(l.Pairs)
		}
		return map[string]float64{"pairs_in_lags": pairs, "data_variance": e.DataVariance}
	}
	return w, nil
}

// checkExperimental verifies that every lag after the first of every
// direction has pairs and a finite γ̂ in [0, 5·variance].
func checkExperimental(e *variogram.Experimental, dirs int) error {
	if e == nil || len(e.Directions) != dirs {
		return fmt.Errorf("no experimental variogram")
	}
	if !(e.DataVariance > 0) {
		return fmt.Errorf("data variance %v", e.DataVariance)
	}
	for d := range e.Directions {
		for k, l := range e.DirectionLags(d)[1:] {
			if l.Pairs == 0 || math.IsNaN(l.Value) || l.Value < 0 || l.Value > 5*e.DataVariance {
				return fmt.Errorf("direction %d lag %d: %d pairs, γ̂ = %v", d, k+1, l.Pairs, l.Value)
			}
			if l.Centroid < l.Start || l.Centroid > l.End {
				return fmt.Errorf("direction %d lag %d: centroid %v outside [%v, %v]", d, k+1, l.Centroid, l.Start, l.End)
			}
		}
	}
	return nil
}

func variogramFit() harness.Scenario {
	return harness.Scenario{
		Name:        "variogram-fit",
		Description: "fit of a nugget + spherical + exponential model to 3 directional experimental variograms, axes given (variogram.Fit)",
		Setup:       setupVariogramFit,
	}
}

func setupVariogramFit(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.KNN(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	e, err := variogram.Compute(ctx, c.Coords, c.Normal, nil, variogramParams())
	if err != nil {
		return nil, err
	}
	series := e.Series()
	fp := variogram.FitParams{
		Structures: []variogram.StructureSpec{{Type: geostat.Spherical}, {Type: geostat.Exponential}},
		Anisotropy: variogram.AnisotropyGiven, Axes: [3]int{0, 1, 2},
		Sill: variogram.SillUnit, MinPairs: 30, Seed: cfg.Seed,
	}
	var res *variogram.FitResult
	w := &harness.Workload{
		Info:  fmt.Sprintf("2 structures + nugget, %d directions × %d lags, %d samples", len(series), len(series[0].Lags), len(c.Normal)),
		Items: 1,
		Unit:  "fits",
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		var err error
		res, err = variogram.Fit(ctx, series, fp)
		return err
	}
	w.Check = func() error {
		if res == nil || res.Variogram == nil {
			return fmt.Errorf("no fitted model")
		}
		if s := res.Variogram.TotalSill(); math.Abs(s-1) > 1e-9 {
			return fmt.Errorf("total sill %v, want 1", s)
		}
		if math.IsNaN(res.Residual) || res.Residual < 0 {
			return fmt.Errorf("residual %v", res.Residual)
		}
		return nil
	}
	w.Details = func() map[string]float64 {
		if res == nil {
			return nil
		}
		v := res.Variogram
		d := map[string]float64{"residual": res.Residual, "nugget": v.Nugget}
		for i, s := range v.Structures {
			d[fmt.Sprintf("structure%d_major", i+1)] = s.Ellipsoid.Major
		}
		return d
	}
	return w, nil
}
