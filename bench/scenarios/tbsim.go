package scenarios

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/tbsim"
)

// simulationLines is the number of turning-bands lines of the tbsim issue's
// benchmarks.
const simulationLines = 500

type tbsimKind int

const (
	tbsimUncond tbsimKind = iota
	tbsimCond
	tbsimCondBlock
)

func tbsimScenario(name string, kind tbsimKind) harness.Scenario {
	desc := map[tbsimKind]string{
		tbsimUncond:    "unconditional turning-bands field on the grid, 500 lines, 1 realisation, one spherical structure (tbsim.Run)",
		tbsimCond:      "conditional turning-bands simulation of the grades, SK, 32 samples, 500 lines, two structures (tbsim.Run)",
		tbsimCondBlock: "conditional turning-bands simulation with 2 x 2 x 2 block discretisation (tbsim.Run)",
	}[kind]
	return harness.Scenario{
		Name: name, Description: desc,
		Setup: func(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
			return setupTBSim(ctx, cfg, kind)
		},
	}
}

// uncondVariogram is the tbsim issue's unconditional benchmark model: one
// spherical structure of unit sill with the case's short ranges.
func uncondVariogram() *geostat.Variogram {
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 30, Rotation: synthetic.ModelRotation}})
	if err != nil {
		panic("scenarios: the unconditional variogram is invalid: " + err.Error())
	}
	return v
}

func setupTBSim(_ context.Context, cfg harness.Config, kind tbsimKind) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.Simulation(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	p := tbsim.DefaultParams()
	p.Lines = simulationLines
	p.Seed = int64(cfg.Seed % (1 << 62))
	p.Method = kriging.Simple
	in := tbsim.Input{Grid: c.Grid, Variogram: c.Variogram}
	switch kind {
	case tbsimUncond:
		p.Realisations = 1
		in.Variogram = uncondVariogram()
	case tbsimCond, tbsimCondBlock:
		p.Realisations = simulationRealisations(cfg.Size)
		in.Coords, in.Values, in.Distribution = c.Coords, c.Grades, c.Distribution
	}
	if kind == tbsimCondBlock {
		p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}
	}
	cells := c.Grid.NumCells()
	sub := max(1, p.Discretisation.Count())
	data := len(in.Coords) / 3
	evals := float64(cells*sub+data) * float64(p.Lines) * float64(len(in.Variogram.Structures)) * float64(p.Realisations)

	conditioning := fmt.Sprintf("%d data, %s kriging", data, p.Method)
	if data == 0 {
		conditioning = "unconditional"
	}
	var res *tbsim.Result
	w := &harness.Workload{
		Info: fmt.Sprintf("%s, %d cells (%v), %s per cell, %s, %s, %s",
			conditioning, cells, c.Grid.Size, plural(sub, "sub-point"), plural(p.Realisations, "realisation"),
			plural(p.Lines, "line"), plural(len(in.Variogram.Structures), "structure")),
		Items: int64(cells),
		Unit:  "cells",
		Counts: []harness.Count{
			{Name: "cell realisations", PerRun: float64(cells * p.Realisations)},
			{Name: "node-line evaluations", PerRun: evals},
		},
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		res = nil
		q := p
		q.Progress = progress
		r, err := tbsim.Run(ctx, in, q)
		res = r
		return err
	}
	w.Check = func() error {
		if res == nil {
			return fmt.Errorf("no result")
		}
		if res.Cells != cells || res.Realisations != p.Realisations || len(res.Block) != cells*p.Realisations {
			return fmt.Errorf("result shape: %d cells x %d realisations, want %d x %d", res.Cells, res.Realisations, cells, p.Realisations)
		}
		if kind == tbsimUncond {
			return checkGaussianField(res.Block)
		}
		// Every cell simulated, inside the distribution's bounds, and the
		// ensemble mean near the distribution's (no bias).
		if _, err := checkValues("block", res.Block, c.Distribution.Min(), c.Distribution.Max(), len(res.Block)); err != nil {
			return err
		}
		var sum float64
		for _, v := range res.Block {
			sum += v
		}
		mean, want := sum/float64(len(res.Block)), meanOf(c.Grades)
		if math.Abs(mean-want) > 0.3*want {
			return fmt.Errorf("ensemble mean %.4g differs from the data mean %.4g by more than 30 %%", mean, want)
		}
		return nil
	}
	var stats tbsim.Stats
	w.Release = func() {
		stats = res.Stats
		res = nil
	}
	w.Details = func() map[string]float64 {
		d := map[string]float64{"tiles": float64(stats.Tiles), "output_bytes": float64(8 * cells * p.Realisations)}
		if data > 0 {
			d["unconditioned_cells"] = float64(stats.Unconditioned)
			d["factorisation_reuse"] = stats.Kriging.ReuseRate()
		}
		return d
	}
	return w, nil
}

// checkGaussianField checks one unconditional realisation of a unit-sill
// field over a domain many ranges wide: finite, mean near 0, variance near 1.
func checkGaussianField(v []float64) error {
	if _, err := checkValues("field", v, -10, 10, len(v)); err != nil {
		return err
	}
	m := meanOf(v)
	var s2 float64
	for _, x := range v {
		s2 += (x - m) * (x - m)
	}
	s2 /= float64(len(v))
	if math.Abs(m) > 0.3 || s2 < 0.6 || s2 > 1.4 {
		return fmt.Errorf("unconditional field mean %.3f and variance %.3f are not those of a unit-sill field", m, s2)
	}
	return nil
}

func meanOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
