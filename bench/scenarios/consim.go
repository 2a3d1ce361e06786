package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/internal/cputime"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/demo"
)

// consimOps are the location-wise statistics both sides of the consim
// scenario compute: consim's defaults (summary, P10, P50, P90) and two
// cutoffs for P(X > c) and E[X | X > c].
var consimOps = ensemble.Operations{Summary: true, Quantiles: []float64{0.1, 0.5, 0.9}, ProbabilityAbove: []float64{0.5, 1.5}, MeanAbove: []float64{0.5, 1.5}}

func consimScenario() harness.Scenario {
	return harness.Scenario{
		Name: "consim",
		Description: "in-process worker: the consim workflow over HTTP (500 lines, SK, location-wise statistics, no saved " +
			"realisations, so that both sides write about as many columns), then " +
			"conditional-turning-bands alone and location-wise alone (geostat/ensemble over its ensemble's Parquet blob); " +
			"details give the three times and consim / (conditional-turning-bands + location-wise) of the last run, " +
			"that ratio's median and maximum over the timed runs, the three parts' CPU time (the process's) and " +
			"consim_cpu_ratio, the same ratio of CPU seconds summed over the timed runs, and consim's own " +
			"peak memory (RSS and Go heap objects above their level at its start, sampled every 2 ms, the largest over " +
			"the timed runs) against the issue's bound 2 × tile × realisations × 8 bytes + outputs (a tile: the cells " +
			"tbsim streams at once; outputs: the statistics' float64 columns)",
		Setup: setupConsim,
	}
}

func setupConsim(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, set, err := simulationSet(cfg)
	if err != nil {
		return nil, err
	}
	client, closeAll, err := startWorker("geostat-bench-consim-")
	if err != nil {
		return nil, err
	}
	const ws = "00000000-0000-4000-8000-00000000c0c0"
	if err := uploadSet(ctx, client, demo.Org, ws, set); err != nil {
		closeAll()
		return nil, err
	}
	url := func(p string) string { return client.ObjectURL(demo.Org, ws, p) }

	// Both simulations use the same explicit neighbourhood: the ellipsoid
	// of the structure with the longest major range, 32 samples (the
	// default of conditional-turning-bands).
	longest := c.Variogram.Structures[0].Ellipsoid
	for _, s := range c.Variogram.Structures {
		if s.Ellipsoid.Major > longest.Major {
			longest = s.Ellipsoid
		}
	}
	nb := map[string]any{"max_samples": 32, "ellipsoid": map[string]any{
		"ellipsoid_ranges": map[string]any{"major": longest.Major, "semi_major": longest.SemiMajor, "minor": longest.Minor},
		"rotation":         map[string]any{"dip_azimuth": longest.Rotation.DipAzimuth, "dip": longest.Rotation.Dip, "pitch": longest.Rotation.Pitch}}}
	realisations := simulationRealisations(cfg.Size)
	cells := c.Grid.NumCells()
	seed := cfg.Seed % (1 << 53)
	var consimS, ctbS, lwS float64
	// The timed runs' ratios consim / (conditional-turning-bands +
	// location-wise), each of three jobs run back to back.
	var ratios []float64
	// The process's CPU seconds (every goroutine: the in-process worker's
	// jobs and, for consim, the memory sampler's reads) of each part, of the
	// last run and summed over the timed runs: less sensitive than wall
	// time to the other load of a shared machine.
	var consimCPU, ctbCPU, lwCPU float64
	var cpuSums [3]float64
	cpu := func() float64 { return cputime.Process().Seconds() }
	// consim's peak memory over the timed runs (the first call of Run is
	// the warm-up).
	var calls int
	var consimMem harness.MemoryPeak
	// The bound: a tile is what tbsim streams at once (AutoTileRows rows of
	// nx cells, one sub-point per cell: consim's default discretisation);
	// the outputs are the statistics' columns (no saved realisations).
	g := c.Grid.Size
	tileCells := min(cells, tbsim.AutoTileRows(g[0], g[1]*g[2], 1, realisations)*g[0])
	nStats := 4 + len(consimOps.Quantiles) + len(consimOps.ProbabilityAbove) + len(consimOps.MeanAbove)
	bound := float64(2*tileCells*realisations*8 + nStats*cells*8)
	var stats *ensemble.Statistics
	w := &harness.Workload{
		Info: fmt.Sprintf("%d data, %d cells (%v), %s, 500 lines, SK; statistics: summary, 3 quantiles, 2 cutoffs",
			len(c.Grades), cells, c.Grid.Size, plural(realisations, "realisation")),
		Items:  int64(cells),
		Unit:   "cells",
		Counts: []harness.Count{{Name: "cell realisations", PerRun: float64(cells * realisations)}},
		Close:  closeAll,
	}
	run := func(ctx context.Context, task string, params map[string]any) (float64, error) {
		t0 := time.Now()
		job, err := client.RunTask(ctx, demo.Org, task, params)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", task, err)
		}
		if job.Status != "succeeded" {
			return 0, fmt.Errorf("%s job %s: %s", task, job.Status, job.Error)
		}
		return time.Since(t0).Seconds(), nil
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		stats = nil
		calls++
		sampler := harness.StartMemorySampler(2 * time.Millisecond)
		c0 := cpu()
		var err error
		consimS, err = run(ctx, "consim", map[string]any{
			"source_object": url(demo.PointsPath), "source_attribute": "locations.attributes[?name=='cu']",
			"target_object": url(demo.GridPath), "variogram_model": url(demo.VariogramPath), "neighborhood": nb,
			"number_of_simulations": realisations, "number_of_lines": simulationLines, "random_seed": seed,
			"kriging_method": "simple", "number_of_simulations_to_save": 0,
			"location_wise_quantiles":  consimOps.Quantiles,
			"probability_above_cutoff": consimOps.ProbabilityAbove, "mean_above_cutoff": consimOps.MeanAbove,
		})
		consimCPU = cpu() - c0
		if m := sampler.Stop(); calls > 1 && (consimMem.Samples == 0 || m.RSSAbove() > consimMem.RSSAbove()) {
			consimMem = m
		}
		if err != nil {
			return err
		}
		c0 = cpu()
		if ctbS, err = run(ctx, "conditional-turning-bands", map[string]any{
			"source": url(demo.PointsPath), "source_attribute": "locations.attributes[?name=='cu']",
			"target": url(demo.GridPath), "distribution": url(demo.DistributionPath), "variogram_model": url(demo.VariogramPath),
			"neighborhood": nb, "realizations": realisations, "number_of_lines": simulationLines, "random_seed": seed,
			"kriging_method": "simple",
		}); err != nil {
			return err
		}
		ctbCPU = cpu() - c0
		blob, err := downloadEnsemble(ctx, client, demo.Org, ws, demo.GridPath, "simulation-results")
		if err != nil {
			return err
		}
		// location-wise alone: stream the stored ensemble's Parquet blob
		// row group by row group through the statistics.
		t0, c0 := time.Now(), cpu()
		src, err := newParquetSource(bytes.NewReader(blob), int64(len(blob)), cells, realisations)
		if err != nil {
			return err
		}
		if stats, err = ensemble.Compute(ctx, src, consimOps); err != nil {
			return err
		}
		lwS, lwCPU = time.Since(t0).Seconds(), cpu()-c0
		if calls > 1 {
			ratios = append(ratios, consimS/(ctbS+lwS))
			cpuSums[0] += consimCPU
			cpuSums[1] += ctbCPU
			cpuSums[2] += lwCPU
		}
		return nil
	}
	w.Check = func() error {
		if stats == nil {
			return fmt.Errorf("no statistics")
		}
		if _, err := checkValues("mean", stats.Mean, c.Distribution.Min(), c.Distribution.Max(), cells); err != nil {
			return err
		}
		if !(consimS > 0 && ctbS > 0 && lwS > 0) {
			return fmt.Errorf("timings %v, %v, %v", consimS, ctbS, lwS)
		}
		return nil
	}
	w.Release = func() { stats = nil }
	w.Details = func() map[string]float64 {
		ratio := math.NaN()
		if ctbS+lwS > 0 {
			ratio = consimS / (ctbS + lwS)
		}
		const mib = 1 << 20
		d := map[string]float64{"consim_seconds": consimS, "conditional_turning_bands_seconds": ctbS,
			"location_wise_seconds": lwS, "consim_ratio": ratio,
			"consim_ratio_median": median(ratios), "consim_ratio_max": slices.Max(append([]float64{0}, ratios...)),
			"consim_cpu_seconds": consimCPU, "conditional_turning_bands_cpu_seconds": ctbCPU, "location_wise_cpu_seconds": lwCPU,
			"consim_tile_cells": float64(tileCells), "consim_bound_mib": bound / mib,
			"consim_peak_heap_above_start_mib": float64(consimMem.HeapAbove()) / mib}
		if cpuSums[1]+cpuSums[2] > 0 {
			d["consim_cpu_ratio"] = cpuSums[0] / (cpuSums[1] + cpuSums[2])
		}
		if consimMem.RSSOK {
			d["consim_peak_rss_above_start_mib"] = float64(consimMem.RSSAbove()) / mib
		}
		return d
	}
	return w, nil
}
