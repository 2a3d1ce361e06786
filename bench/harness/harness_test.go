package harness

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/synthetic"
)

func TestSummarise(t *testing.T) {
	w := summarise([]float64{3, 1, 2})
	assert.Equal(t, Wall{Median: 2, Min: 1, Max: 3, Runs: []float64{3, 1, 2}}, w)
	w = summarise([]float64{4, 1, 3, 2})
	assert.Equal(t, 2.5, w.Median)
	assert.Equal(t, 1.0, w.Min)
	assert.Equal(t, 4.0, w.Max)
	assert.Equal(t, []float64{4, 1, 3, 2}, w.Runs, "the run order is kept")
}

func TestProcParsers(t *testing.T) {
	status := []byte("Name:\tbench\nVmPeak:\t  20000 kB\nVmHWM:\t   1944 kB\nVmRSS:\t 1000 kB\n")
	v, ok := statusField(status, "VmHWM:")
	require.True(t, ok)
	assert.Equal(t, int64(1944*1024), v)
	_, ok = statusField(status, "VmSwap:")
	assert.False(t, ok)
	assert.Equal(t, "AMD EPYC 7B13", cpuModel([]byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n")))
	assert.Equal(t, "Raspberry Pi 4", cpuModel([]byte("processor\t: 0\nModel\t\t: Raspberry Pi 4\n")))
	assert.Equal(t, "", cpuModel([]byte("processor\t: 0\n")))
}

// The kernel interface used for the peak RSS: after a reset the peak is
// close to the current RSS, and touching 64 MiB raises it by about that much.
func TestPeakRSSReset(t *testing.T) {
	if !resetPeakRSS() {
		t.Skip("/proc/self/clear_refs is not writable here")
	}
	before, ok := peakRSS()
	require.True(t, ok)
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after, ok := peakRSS()
	require.True(t, ok)
	assert.Greater(t, after-before, int64(60<<20))
	b = nil
}

func workload(check error, runErr error) *Workload {
	calls, released := 0, 0
	return &Workload{
		Release: func() { released++ },
		Info:    "test",
		Run: func(ctx context.Context, progress func(done, total int)) error {
			calls++
			if progress != nil {
				progress(1, 2)
				progress(2, 2)
			}
			time.Sleep(time.Millisecond)
			if calls > 1 && runErr != nil {
				return runErr
			}
			return nil
		},
		Check:  func() error { return check },
		Items:  1000,
		Unit:   "cells",
		Counts: []Count{{Name: "node-line evaluations", PerRun: 5e6}},
		Details: func() map[string]float64 {
			return map[string]float64{"calls": float64(calls), "released": float64(released)}
		},
	}
}

func scenarioOf(w *Workload) Scenario {
	return Scenario{Name: "t", Description: "test", Setup: func(context.Context, Config) (*Workload, error) { return w, nil }}
}

func TestMeasure(t *testing.T) {
	var log, bar bytes.Buffer
	res, err := Measure(context.Background(), scenarioOf(workload(nil, nil)), Config{Size: synthetic.Small},
		Options{Runs: 3, Log: &log, Progress: NewProgress(&bar)})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Runs)
	assert.Len(t, res.Wall.Runs, 3)
	assert.GreaterOrEqual(t, res.Wall.Median, 1e-3)
	assert.LessOrEqual(t, res.Wall.Min, res.Wall.Median)
	assert.GreaterOrEqual(t, res.Wall.Max, res.Wall.Median)
	assert.InDelta(t, 1000/res.Wall.Median, res.Throughput.PerSecond, 1e-6)
	require.Len(t, res.Rates, 1)
	assert.InDelta(t, 5e6/res.Wall.Median, res.Rates[0].PerSecond, 1e-3)
	assert.Equal(t, 4.0, res.Details["calls"], "one warm-up and three timed runs")
	assert.Equal(t, 4.0, res.Details["released"], "every checked result is released")
	assert.Equal(t, "small", res.Size)
	assert.Contains(t, log.String(), "warm-up and 3 timed runs")
	if res.PeakRSSScope != "unavailable" {
		require.NotNil(t, res.PeakRSS)
		assert.Greater(t, *res.PeakRSS, int64(0))
	}
}

func TestMeasureRefusesUncheckedFigures(t *testing.T) {
	_, err := Measure(context.Background(), scenarioOf(workload(errors.New("NaN everywhere"), nil)), Config{}, Options{Runs: 1})
	assert.ErrorContains(t, err, "sanity check after the warm-up run: NaN everywhere")
	_, err = Measure(context.Background(), scenarioOf(workload(nil, errors.New("boom"))), Config{}, Options{Runs: 2})
	assert.ErrorContains(t, err, "run 1: boom")
	_, err = Measure(context.Background(), Scenario{Name: "x", Missing: "tbsim"}, Config{}, Options{Runs: 1})
	assert.ErrorIs(t, err, ErrNotAvailable)
	assert.ErrorContains(t, err, "not available yet (needs package tbsim)")
	_, err = Measure(context.Background(), scenarioOf(workload(nil, nil)), Config{}, Options{Runs: 0})
	assert.ErrorContains(t, err, "runs")
}

// wall is the Wall of run times.
func wall(times ...float64) Wall {
	s := slices.Clone(times)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Wall{Median: med, Min: s[0], Max: s[n-1], Runs: times}
}

func TestCompare(t *testing.T) {
	res := func(name, size string, threads int, times ...float64) Result {
		return Result{Name: name, Size: size, Threads: threads, Runs: len(times), Wall: wall(times...)}
	}
	base := &Report{Results: []Result{
		res("a", "medium", 2, 1, 1, 1),
		res("b", "medium", 2, 0.95, 1, 1.05),
		res("c", "small", 2, 1, 1, 1),
		res("d", "medium", 1, 2, 2, 2),
		res("noisy", "medium", 2, 0.8, 1, 2),
		res("one", "medium", 2, 1),
		res("few", "medium", 2, 1, 1, 1),
	}}
	cur := &Report{Results: []Result{
		res("a", "medium", 2, 1.2, 1.2, 1.2),
		res("b", "medium", 2, 1.3, 1.35, 1.4),
		res("c", "medium", 2, 9, 9, 9),
		res("d", "medium", 2, 1, 1, 1),
		res("e", "medium", 2, 1, 1, 1),
		res("noisy", "medium", 2, 1.5, 1.6, 1.9),
		res("one", "medium", 2, 3, 3, 3),
		res("few", "medium", 2, 3),
	}}
	rows, regressed := Compare(base, cur, 1.25)
	require.Len(t, rows, 8)
	assert.True(t, regressed)
	by := map[string]Comparison{}
	for _, r := range rows {
		by[r.Name] = r
	}
	assert.InDelta(t, 1.2, by["a"].Ratio, 1e-12)
	assert.Equal(t, StatusOK, by["a"].Status)
	assert.Equal(t, StatusSlower, by["b"].Status, "1.35x, every run slower than every baseline run")
	assert.InDelta(t, 0.1, by["b"].BaselineSpread, 1e-12)
	assert.InDelta(t, 0.1/1.35, by["b"].CurrentSpread, 1e-12)
	assert.Equal(t, 3, by["b"].BaselineRuns)
	assert.Equal(t, StatusNotCompared, by["c"].Status)
	assert.Zero(t, by["c"].Ratio)
	assert.Contains(t, by["c"].Note, "baseline size small, this run medium")
	assert.InDelta(t, 0.5, by["d"].Ratio, 1e-12)
	assert.Equal(t, StatusOK, by["d"].Status)
	assert.Contains(t, by["d"].Note, "baseline threads 1")
	assert.Equal(t, StatusNotCompared, by["e"].Status)
	assert.Contains(t, by["e"].Note, "not in the baseline")
	assert.Equal(t, StatusNoise, by["noisy"].Status, "1.6x but the runs overlap (baseline up to 2 s)")
	assert.InDelta(t, 1.2, by["noisy"].BaselineSpread, 1e-12)
	for _, name := range []string{"one", "few"} {
		assert.Equal(t, StatusNotCompared, by[name].Status, name)
		assert.Contains(t, by[name].Note, "need at least 3 on each side", name)
	}
	assert.Equal(t, []string{"c", "e", "one", "few"}, NotCompared(rows))

	_, regressed = Compare(base, &Report{Results: []Result{res("a", "medium", 2, 1.25, 1.25, 1.25)}}, 1.25)
	assert.False(t, regressed, "exactly at the tolerance is not slower")
	_, regressed = Compare(base, &Report{Results: []Result{res("noisy", "medium", 2, 9, 9, 9)}}, 1.25)
	assert.True(t, regressed, "beyond the noise")

	var buf bytes.Buffer
	require.NoError(t, WriteComparison(&buf, rows, 1.25))
	out := buf.String()
	assert.Contains(t, out, "SLOWER")
	assert.Contains(t, out, "within noise")
	assert.Contains(t, out, "not compared")
	assert.Contains(t, out, "1.20x")
	assert.Contains(t, out, "1.000 s (3, 120%)", "the noisy baseline's runs and spread")
	assert.Contains(t, out, "spread: (slowest - fastest run) / median")
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "1.500 s", FormatSeconds(1.5))
	assert.Equal(t, "12.3 ms", FormatSeconds(0.0123))
	assert.Equal(t, "45.0 µs", FormatSeconds(45e-6))
	assert.Equal(t, "2.50 M", FormatCount(2.5e6))
	assert.Equal(t, "1.20 G", FormatCount(1.2e9))
	assert.Equal(t, "12.0 k", FormatCount(12000))
	assert.Equal(t, "999", FormatCount(999))
	assert.Equal(t, "1.5 MiB", FormatBytes(1.5*(1<<20)))
	assert.Equal(t, "2.00 GiB", FormatBytes(2*(1<<30)))
	assert.Equal(t, "3.20 M cells/s", FormatRate(Rate{Name: "cells", PerSecond: 3.2e6}))
}

func TestWriteTable(t *testing.T) {
	rss := int64(80 << 20)
	rep := &Report{
		Machine:  Machine{Cores: 2, CPUModel: "Test CPU", GoVersion: "go1.26", OS: "linux", Arch: "amd64"},
		Settings: Settings{Seed: 1},
		Results: []Result{{Name: "knn", Size: "medium", Threads: 2, Runs: 3, Workload: "50000 sources",
			Wall: Wall{Median: 1, Min: 0.9, Max: 1.1}, Throughput: Rate{Name: "cells", PerSecond: 1e6},
			Rates: []Rate{{Name: "node-line evaluations", PerSecond: 2e9}}, PeakRSS: &rss, PeakRSSScope: "scenario",
			Details: map[string]float64{"factorisation_reuse": 0.1}}},
		Skipped: []Skipped{{Name: "tbsim-cond", Reason: "not available yet (needs package tbsim)"}},
		Failed:  []Failed{{Name: "x", Error: "bad"}},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteTable(&buf, rep))
	s := buf.String()
	for _, want := range []string{"Test CPU, 2 cores", "knn", "1.000 s", "1.00 M cells/s", "2.00 G node-line evaluations/s",
		"80.0 MiB", "factorisation_reuse 0.1", "skipped tbsim-cond: not available yet", "FAILED x: bad"} {
		assert.Contains(t, s, want)
	}
}

// A sampler sees 64 MiB allocated and touched between its start and a
// sample, in the heap and (where /proc/self/statm is readable) in the RSS.
func TestMemorySampler(t *testing.T) {
	debug.FreeOSMemory()               // no free heap pages resident for b to reuse
	s := StartMemorySampler(time.Hour) // only the explicit samples
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	s.Sample()
	runtime.KeepAlive(b)
	p := s.Stop()
	assert.Equal(t, 3, p.Samples, "start, the explicit sample and the stop's")
	assert.Greater(t, p.HeapAbove(), int64(60<<20))
	assert.Less(t, p.HeapAbove(), int64(80<<20))
	if p.RSSOK {
		assert.Greater(t, p.RSSAbove(), int64(60<<20))
	}
	assert.Equal(t, p, s.Stop(), "a second Stop returns the same peaks")
}

// TestHeapPeak: a 64 MiB buffer held while f runs shows in the peak, and
// nothing held shows next to nothing.
func TestHeapPeak(t *testing.T) {
	var sink []byte
	peak := HeapPeak(func() {
		sink = make([]byte, 64<<20)
		for i := range sink {
			sink[i] = byte(i)
		}
	})
	require.GreaterOrEqual(t, peak, uint64(60<<20), "the base may shrink by what the collector frees meanwhile")
	sink = nil
	require.Less(t, HeapPeak(func() {}), uint64(8<<20))
}
