package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/bench/scenarios"
	"github.com/geostat-engine/geostat/bench/schema"
	"github.com/geostat-engine/geostat/geostat/synthetic"
)

func TestParseRunArgs(t *testing.T) {
	o, err := parseRunArgs([]string{"knn", "kriging-sk", "-size", "small", "-runs=2", "-threads", "1", "-json", "out.json"})
	require.NoError(t, err)
	assert.Equal(t, []string{"knn", "kriging-sk"}, o.names)
	assert.Equal(t, synthetic.Small, o.size)
	assert.Equal(t, 2, o.runs)
	assert.Equal(t, 1, o.threads)
	assert.Equal(t, "out.json", o.jsonPath)
	assert.Equal(t, 1.25, o.tolerance)
	assert.Equal(t, synthetic.DefaultSeed, o.seed)

	// Flags before, among and after the names; -- ends the flags.
	o, err = parseRunArgs([]string{"-size=large", "knn", "--compare", "b.json", "all", "-tolerance", "1.5", "--", "-odd"})
	require.NoError(t, err)
	assert.Equal(t, []string{"knn", "all", "-odd"}, o.names)
	assert.Equal(t, synthetic.Large, o.size)
	assert.Equal(t, "b.json", o.compare)
	assert.Equal(t, 1.5, o.tolerance)
	assert.Equal(t, 3, o.runs)

	o, err = parseRunArgs([]string{"knn", "-cpuprofile", "c.out", "-memprofile", "m.out", "-seed", "9"})
	require.NoError(t, err)
	assert.Equal(t, "c.out", o.cpuProfile)
	assert.Equal(t, "m.out", o.memProfile)
	assert.Equal(t, uint64(9), o.seed)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"knn", "-size", "huge"}, "huge"},
		{[]string{"knn", "-runs", "0"}, "-runs"},
		{[]string{"knn", "-threads", "-1"}, "-threads"},
		{[]string{"knn", "-tolerance", "0"}, "-tolerance"},
		{[]string{"knn", "-runs"}, "needs a value"},
		{[]string{"knn", "-bogus"}, "bogus"},
		{[]string{"-size", "small"}, "no scenario"},
		{[]string{"knn", "-runs", "x"}, "runs"},
	} {
		_, err := parseRunArgs(tc.args)
		assert.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
}

func fakeApp() (*app, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	ok := func(context.Context, harness.Config) (*harness.Workload, error) {
		return &harness.Workload{Run: func(context.Context, func(int, int)) error { return nil },
			Check: func() error { return nil }, Items: 1, Unit: "things"}, nil
	}
	return &app{stdout: &out, stderr: &errOut, scenarios: []harness.Scenario{
		{Name: "a", Description: "first", Setup: ok},
		{Name: "b", Description: "second", Missing: "nothing/yet"},
		{Name: "c", Description: "third", Setup: ok},
		{Name: "bad", Description: "fails its check", Setup: func(context.Context, harness.Config) (*harness.Workload, error) {
			return &harness.Workload{Run: func(context.Context, func(int, int)) error { return nil },
				Check: func() error { return errors.New("result is nonsense") }, Items: 1, Unit: "things"}, nil
		}},
	}}, &out, &errOut
}

func TestSelectScenarios(t *testing.T) {
	a, _, _ := fakeApp()
	run, skipped, err := a.selectScenarios([]string{"c", "all"})
	require.NoError(t, err)
	var names []string
	for _, s := range run {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"c", "a", "bad"}, names)
	require.Len(t, skipped, 1)
	assert.Equal(t, "b", skipped[0].Name)
	assert.Equal(t, "not available yet (needs package nothing/yet)", skipped[0].Reason)

	_, _, err = a.selectScenarios([]string{"b"})
	assert.ErrorContains(t, err, "b is not available yet (needs package nothing/yet)")
	_, _, err = a.selectScenarios([]string{"zz"})
	assert.ErrorContains(t, err, `unknown scenario "zz"`)
}

func TestUsageErrorsAndListing(t *testing.T) {
	a, out, errOut := fakeApp()
	assert.Equal(t, exitOK, a.main(context.Background(), nil))
	assert.Contains(t, out.String(), "not available yet (needs package nothing/yet)")
	assert.Contains(t, out.String(), "first")

	assert.Equal(t, exitUsage, a.main(context.Background(), []string{"run", "b", "-size", "small"}))
	assert.Contains(t, errOut.String(), "b is not available yet")
	assert.Equal(t, exitUsage, a.main(context.Background(), []string{"frobnicate"}))
	out.Reset()
	assert.Equal(t, exitOK, a.main(context.Background(), []string{"run", "-h"}))
	assert.Contains(t, out.String(), "usage:")
	assert.Equal(t, exitUsage, a.main(context.Background(), []string{"run", "all", "-cpuprofile", filepath.Join(t.TempDir(), "c")}))
	assert.Contains(t, errOut.String(), "exactly one scenario")

	// A failing sanity check is reported, without figures, and fails the run.
	out.Reset()
	assert.Equal(t, exitFailed, a.main(context.Background(), []string{"run", "a", "bad", "-runs", "1", "-size", "small"}))
	assert.Contains(t, out.String(), "FAILED bad")
	assert.Contains(t, out.String(), "result is nonsense")
}

// The real listing names every scenario of the bench issue.
func TestListingNamesEveryScenario(t *testing.T) {
	var out bytes.Buffer
	a := &app{stdout: &out, stderr: &out, scenarios: scenarios.All()}
	require.Equal(t, exitOK, a.main(context.Background(), []string{"list"}))
	for _, n := range []string{"knn", "idw", "declustering", "declus-cell", "normal-score", "kriging-sk", "kriging-ok", "kriging-block", "tbsim-uncond", "tbsim-cond",
		"tbsim-cond-block", "break-ties", "variogram-experimental", "variogram-fit", "location-wise", "report", "parquet-write", "parquet-read", "worker-e2e", "jobs-overhead", "auth-lookup", "consim", "cluster-two-computes"} {
		assert.Contains(t, out.String(), n+" ")
	}
}

// run all -size small -runs 1 works end to end and its JSON validates
// against the schema.
func TestRunAllSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every available scenario")
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut, scenarios: scenarios.All()}
	jsonPath := filepath.Join(dir, "r.json")
	code := a.main(context.Background(), []string{"run", "all", "-size", "small", "-runs", "1", "-json", jsonPath})
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())

	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	require.NoError(t, schema.Validate(b))
	var rep harness.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	var available, unavailable int
	for _, s := range scenarios.All() {
		if s.Available() {
			available++
		} else {
			unavailable++
		}
	}
	assert.Len(t, rep.Results, available)
	assert.Len(t, rep.Skipped, unavailable)
	assert.Empty(t, rep.Failed)
	for _, r := range rep.Results {
		assert.Equal(t, "small", r.Size)
		assert.Greater(t, r.Wall.Median, 0.0, r.Name)
		assert.Greater(t, r.Throughput.PerSecond, 0.0, r.Name)
		assert.Contains(t, out.String(), r.Name)
	}
	assert.Greater(t, rep.Machine.Cores, 0)
	assert.NotEmpty(t, rep.Machine.GoVersion)
}

// rewriteReport writes to dir/name the report at src changed by edit, and
// returns its path; the result still validates against the schema.
func rewriteReport(t *testing.T, src, name string, edit func(*harness.Report)) string {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	var rep harness.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	edit(&rep)
	p := filepath.Join(filepath.Dir(src), name)
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, rep.WriteJSON(f))
	require.NoError(t, f.Close())
	out, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, schema.Validate(out))
	return p
}

// scaleWall multiplies every wall time of a report by factor.
func scaleWall(factor float64) func(*harness.Report) {
	return func(rep *harness.Report) {
		for i := range rep.Results {
			w := &rep.Results[i].Wall
			w.Median *= factor
			w.Min *= factor
			w.Max *= factor
			for j := range w.Runs {
				w.Runs[j] *= factor
			}
		}
	}
}

func TestCompareExitsOnRegression(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut, scenarios: scenarios.All()}
	args := []string{"run", "parquet-read", "-size", "small", "-runs", "3"}
	require.Equal(t, exitOK, a.main(context.Background(), append(args, "-json", base)), errOut.String())

	// A baseline 100 times faster than this machine: the current run is a
	// regression. One 100 times slower: fine.
	out.Reset()
	code := a.main(context.Background(), append(args, "-compare", rewriteReport(t, base, "fast.json", scaleWall(0.01))))
	assert.Equal(t, exitRegression, code, out.String())
	assert.Contains(t, out.String(), "SLOWER")
	assert.Contains(t, out.String(), "(3, ", "the runs and spread of each side")
	assert.True(t, strings.HasSuffix(out.String(), "\nbench verdict: slower (exit status 3)\n"), out.String())

	out.Reset()
	code = a.main(context.Background(), append(args, "-compare", rewriteReport(t, base, "slow.json", scaleWall(100)), "-tolerance", "1.1"))
	assert.Equal(t, exitOK, code, out.String())
	assert.Contains(t, out.String(), "ok")
	assert.True(t, strings.HasSuffix(out.String(), "\nbench verdict: ok (exit status 0)\n"), out.String())

	// 100 times faster in the median, but one baseline run as slow as 1000
	// times this machine's: the difference is within the baseline's noise.
	out.Reset()
	noisy := rewriteReport(t, base, "noisy.json", func(rep *harness.Report) {
		scaleWall(0.01)(rep)
		for i := range rep.Results {
			w := &rep.Results[i].Wall
			w.Max *= 1e5
			w.Runs[0] = w.Max
		}
	})
	code = a.main(context.Background(), append(args, "-compare", noisy))
	assert.Equal(t, exitOK, code, out.String())
	assert.Contains(t, out.String(), "within noise")
	assert.True(t, strings.HasSuffix(out.String(), "\nbench verdict: ok (exit status 0)\n"), out.String())

	// A baseline that does not validate is refused.
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema_version": 1}`), 0o644))
	assert.Equal(t, exitUsage, a.main(context.Background(), append(args, "-compare", bad)))
	assert.Contains(t, errOut.String(), "does not validate")
}

// TestCompareNotCompared: a comparison that cannot happen says so, with
// the verdict "not compared" and exit status 4, never "ok": a baseline of
// another size or with fewer than 3 runs is refused before anything runs,
// a scenario missing from the baseline is reported after the run; -runs
// below 3 with -compare is a usage error.
func TestCompareNotCompared(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut, scenarios: scenarios.All()}
	args := []string{"run", "parquet-read", "-size", "small", "-runs", "3"}
	require.Equal(t, exitOK, a.main(context.Background(), append(args, "-json", base)), errOut.String())
	const notCompared = "bench verdict: not compared (exit status 4)\n"

	// Across sizes: a medium baseline against a small run.
	medium := rewriteReport(t, base, "medium.json", func(rep *harness.Report) {
		rep.Settings.Size = "medium"
		for i := range rep.Results {
			rep.Results[i].Size = "medium"
		}
	})
	out.Reset()
	errOut.Reset()
	assert.Equal(t, exitNotCompared, a.main(context.Background(), append(args, "-compare", medium)))
	assert.Equal(t, notCompared, out.String(), "nothing is measured")
	assert.Contains(t, errOut.String(), "not compared: the baseline was measured at size medium, this run is small")

	// A baseline of one run per scenario.
	one := rewriteReport(t, base, "one.json", func(rep *harness.Report) {
		rep.Settings.Runs = 1
		for i := range rep.Results {
			r := &rep.Results[i]
			r.Runs = 1
			r.Wall = harness.Wall{Median: r.Wall.Median, Min: r.Wall.Median, Max: r.Wall.Median, Runs: []float64{r.Wall.Median}}
		}
	})
	out.Reset()
	errOut.Reset()
	assert.Equal(t, exitNotCompared, a.main(context.Background(), append(args, "-compare", one)))
	assert.Equal(t, notCompared, out.String())
	assert.Contains(t, errOut.String(), "the baseline has 1 timed run(s) per scenario; a comparison needs medians of at least 3 runs on each side")

	// This run with one run: a usage error before anything runs.
	out.Reset()
	errOut.Reset()
	assert.Equal(t, exitUsage, a.main(context.Background(), []string{"run", "parquet-read", "-size", "small", "-runs", "1", "-compare", base}))
	assert.Contains(t, errOut.String(), "-compare needs -runs 3 or more (got 1)")
	assert.Empty(t, out.String())

	// A scenario that is not in the baseline.
	renamed := rewriteReport(t, base, "renamed.json", func(rep *harness.Report) {
		for i := range rep.Results {
			rep.Results[i].Name = "other-scenario"
		}
	})
	out.Reset()
	errOut.Reset()
	assert.Equal(t, exitNotCompared, a.main(context.Background(), append(args, "-compare", renamed)))
	assert.Contains(t, out.String(), "not in the baseline")
	assert.True(t, strings.HasSuffix(out.String(), "\n"+notCompared), out.String())
	assert.NotContains(t, out.String(), "verdict: ok")
	assert.Contains(t, errOut.String(), "bench: not compared with the baseline: parquet-read")
}

func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.out"), filepath.Join(dir, "mem.out")
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut, scenarios: scenarios.All()}
	code := a.main(context.Background(), []string{"run", "parquet-read", "-size", "small", "-runs", "1", "-cpuprofile", cpu, "-memprofile", mem})
	require.Equal(t, exitOK, code, errOut.String())
	for _, p := range []string{cpu, mem} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(0), p)
	}
	assert.False(t, strings.Contains(errOut.String(), "FAILED"))
}
