package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/report"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/tbsim"
)

func reportScenario() harness.Scenario {
	return harness.Scenario{
		Name: "report",
		Description: "simulation report of a 2 x 2 x 2 block simulation on the kriging grid: statistics, variograms, " +
			"swaths, HTML and JSON (report.Compute + WriteHTML + WriteJSON)",
		Setup: setupReport,
	}
}

func setupReport(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.Kriging(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	// The ensembles come from a real simulation, made during the (untimed)
	// set-up.
	p := tbsim.DefaultParams()
	p.Realisations = simulationRealisations(cfg.Size)
	p.Lines = simulationLines
	p.Seed = int64(cfg.Seed % (1 << 62))
	p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}
	p.SaveGaussian = true
	sim, err := tbsim.Run(ctx, tbsim.Input{Grid: c.Grid, Coords: c.Coords, Values: c.Grades,
		Variogram: c.Variogram, Distribution: c.Distribution}, p)
	if err != nil {
		return nil, fmt.Errorf("simulating the report's ensembles: %w", err)
	}
	in := &report.Input{
		Context:                     report.Context{Title: "geostat bench: synthetic drill-hole grades"},
		Data:                        report.Data{Coords: c.Coords, Values: c.Grades},
		Reference:                   c.Distribution,
		Variogram:                   sim.Variogram,
		Grid:                        c.Grid,
		Discretisation:              p.Discretisation,
		PointSimulations:            sim.Point,
		PointSimulationsNormalScore: sim.PointGaussian,
		BlockSimulations:            sim.Block,
		BlockSimulationsNormalScore: sim.BlockGaussian,
		Units:                       "g/t",
	}
	cells := c.Grid.NumCells()
	var (
		rep       *report.Report
		html, doc bytes.Buffer
	)
	w := &harness.Workload{
		Info: fmt.Sprintf("%d data, %d cells (%v), %s x 4 ensembles, block 2x2x2",
			len(c.Grades), cells, c.Grid.Size, plural(p.Realisations, "realisation")),
		Items:  int64(cells),
		Unit:   "cells",
		Counts: []harness.Count{{Name: "ensemble values", PerRun: float64(4 * cells * p.Realisations)}},
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		rep = nil
		html.Reset()
		doc.Reset()
		var err error
		if rep, err = report.Compute(ctx, in, progress); err != nil {
			return err
		}
		if err := rep.WriteHTML(&html); err != nil {
			return err
		}
		return rep.WriteJSON(&doc)
	}
	w.Check = func() error {
		if rep == nil {
			return fmt.Errorf("no report")
		}
		s := rep.Summary
		switch {
		case s.Realisations != p.Realisations || s.Cells != cells:
			return fmt.Errorf("report of %d realisations x %d cells, want %d x %d", s.Realisations, s.Cells, p.Realisations, cells)
		case !s.Mean.Available() || !s.ReferenceMean.Available():
			return fmt.Errorf("report mean %v, reference mean %v", s.Mean, s.ReferenceMean)
		case s.Verdict != report.Acceptable && s.Verdict != report.Marginal && s.Verdict != report.Failing:
			return fmt.Errorf("report verdict %q", s.Verdict)
		case len(rep.Variograms) == 0 || len(rep.Swaths) == 0:
			return fmt.Errorf("report has %d variograms and %d swaths", len(rep.Variograms), len(rep.Swaths))
		case !strings.Contains(html.String(), "<svg") || !strings.Contains(html.String(), "</html>"):
			return fmt.Errorf("the HTML page (%d bytes) lacks plots or its end", html.Len())
		case !json.Valid(doc.Bytes()):
			return fmt.Errorf("the JSON document (%d bytes) is not valid JSON", doc.Len())
		}
		return nil
	}
	w.Release = func() { rep = nil }
	w.Details = func() map[string]float64 {
		return map[string]float64{"html_bytes": float64(html.Len()), "json_bytes": float64(doc.Len())}
	}
	return w, nil
}
