package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/bench/schema"
	"github.com/geostat-engine/geostat/geostat/synthetic"
)

// Exit codes.
const (
	exitOK         = 0
	exitFailed     = 1
	exitUsage      = 2
	exitRegression = 3
	// exitNotCompared: -compare was given but a scenario (or the whole
	// run) could not be compared with the baseline.
	exitNotCompared = 4
)

// app is the command with its outputs and scenario registry, so that tests
// run it in-process.
type app struct {
	stdout, stderr io.Writer
	scenarios      []harness.Scenario
	// terminal enables the progress bar (stderr is a terminal).
	terminal bool
}

const usage = `usage:
  go run ./bench                          list the scenarios
  go run ./bench run SCENARIO|all ... [-size small|medium|large] [-runs N] [-threads N]
        [-seed N] [-json FILE] [-compare BASELINE.json] [-tolerance 1.25]
        [-cpuprofile FILE] [-memprofile FILE]
`

func (a *app) main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "list" {
		a.list()
		return exitOK
	}
	switch args[0] {
	case "run":
		return a.run(ctx, args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Fprint(a.stdout, usage)
		return exitOK
	}
	fmt.Fprintf(a.stderr, "bench: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

func (a *app) list() {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTATUS\tDESCRIPTION")
	for _, s := range a.scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Status(), s.Description)
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "\n%s", usage)
}

// runOptions are the parsed arguments of "run".
type runOptions struct {
	names      []string
	size       synthetic.Size
	runs       int
	threads    int
	seed       uint64
	jsonPath   string
	compare    string
	tolerance  float64
	cpuProfile string
	memProfile string
}

// parseRunArgs parses the arguments of "run". Flags may come before, among
// or after the scenario names; "--" ends the flags.
func parseRunArgs(args []string) (runOptions, error) {
	o := runOptions{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	size := fs.String("size", "medium", "")
	fs.IntVar(&o.runs, "runs", 3, "")
	fs.IntVar(&o.threads, "threads", 0, "")
	fs.Uint64Var(&o.seed, "seed", synthetic.DefaultSeed, "")
	fs.StringVar(&o.jsonPath, "json", "", "")
	fs.StringVar(&o.compare, "compare", "", "")
	fs.Float64Var(&o.tolerance, "tolerance", 1.25, "")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "")
	fs.StringVar(&o.memProfile, "memprofile", "", "")

	var flags []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			o.names = append(o.names, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			o.names = append(o.names, arg)
			continue
		}
		flags = append(flags, arg)
		name := strings.TrimLeft(arg, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // reported by Parse
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 >= len(args) {
			return o, fmt.Errorf("flag -%s needs a value", name)
		}
		i++
		flags = append(flags, args[i])
	}
	if err := fs.Parse(flags); err != nil {
		return o, err
	}
	var err error
	if o.size, err = synthetic.ParseSize(*size); err != nil {
		return o, fmt.Errorf("-size: %w", err)
	}
	switch {
	case len(o.names) == 0:
		return o, errors.New("no scenario named (use a name of the listing or all)")
	case o.runs < 1:
		return o, fmt.Errorf("-runs %d: must be at least 1", o.runs)
	case o.threads < 0:
		return o, fmt.Errorf("-threads %d: must be at least 1 (0 = all cores)", o.threads)
	case !(o.tolerance > 0):
		return o, fmt.Errorf("-tolerance %v: must be positive", o.tolerance)
	case o.compare != "" && o.runs < harness.MinRuns:
		return o, fmt.Errorf("-compare needs -runs %d or more (got %d): a comparison is of medians of at least %d runs on each side", harness.MinRuns, o.runs, harness.MinRuns)
	}
	return o, nil
}

// selectScenarios expands "all" and checks the names: an unknown or an
// explicitly named unavailable scenario is an error; "all" skips the
// unavailable ones.
func (a *app) selectScenarios(names []string) (run []harness.Scenario, skipped []harness.Skipped, err error) {
	byName := make(map[string]harness.Scenario, len(a.scenarios))
	for _, s := range a.scenarios {
		byName[s.Name] = s
	}
	seen := map[string]bool{}
	add := func(s harness.Scenario) {
		if !seen[s.Name] {
			seen[s.Name] = true
			run = append(run, s)
		}
	}
	for _, n := range names {
		if n == "all" {
			for _, s := range a.scenarios {
				if s.Available() {
					add(s)
				} else if !seen["skip:"+s.Name] {
					seen["skip:"+s.Name] = true
					skipped = append(skipped, harness.Skipped{Name: s.Name, Reason: s.Status()})
				}
			}
			continue
		}
		s, ok := byName[n]
		if !ok {
			known := make([]string, 0, len(a.scenarios))
			for _, s := range a.scenarios {
				known = append(known, s.Name)
			}
			return nil, nil, fmt.Errorf("unknown scenario %q (known: %s, all)", n, strings.Join(known, ", "))
		}
		if !s.Available() {
			return nil, nil, fmt.Errorf("scenario %s is %s: it cannot run", s.Name, s.Status())
		}
		add(s)
	}
	if len(run) == 0 {
		return nil, skipped, errors.New("no available scenario to run")
	}
	return run, skipped, nil
}

func (a *app) run(ctx context.Context, args []string) int {
	o, err := parseRunArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(a.stdout, usage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "bench run: %v\n%s", err, usage)
		return exitUsage
	}
	sel, skipped, err := a.selectScenarios(o.names)
	if err != nil {
		fmt.Fprintf(a.stderr, "bench run: %v\n", err)
		return exitUsage
	}
	if (o.cpuProfile != "" || o.memProfile != "") && len(sel) != 1 {
		fmt.Fprintf(a.stderr, "bench run: -cpuprofile and -memprofile need exactly one scenario, got %d\n", len(sel))
		return exitUsage
	}
	var baseline *harness.Report
	if o.compare != "" {
		if baseline, err = readBaseline(o.compare); err != nil {
			fmt.Fprintf(a.stderr, "bench run: -compare: %v\n", err)
			return exitUsage
		}
		// A baseline that cannot be compared with this run is refused
		// before anything is measured.
		if why := incomparable(baseline, o); why != "" {
			fmt.Fprintf(a.stderr, "bench run: -compare %s: not compared: %s\n", o.compare, why)
			fmt.Fprintf(a.stdout, "%s\n", verdictLine(exitNotCompared))
			return exitNotCompared
		}
	}
	if o.threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.threads))
	}

	var progress *harness.Progress
	if a.terminal {
		progress = harness.NewProgress(a.stderr)
	}
	rep := &harness.Report{
		SchemaVersion: harness.SchemaVersion, Tool: "geostat-bench",
		Date: time.Now().UTC().Truncate(time.Second), Machine: harness.ThisMachine(),
		Settings: harness.Settings{Size: o.size.String(), Runs: o.runs, Threads: runtime.GOMAXPROCS(0),
			Seed: o.seed, Progress: progress != nil},
		Results: []harness.Result{}, Skipped: []harness.Skipped{}, Failed: []harness.Failed{},
	}
	rep.Skipped = append(rep.Skipped, skipped...)
	cfg := harness.Config{Size: o.size, Seed: o.seed}
	opts := harness.Options{Runs: o.runs, Progress: progress, Log: a.stderr}
	if err := profiles(&opts, o); err != nil {
		fmt.Fprintf(a.stderr, "bench run: %v\n", err)
		return exitFailed
	}
	for _, s := range sel {
		res, err := harness.Measure(ctx, s, cfg, opts)
		if err != nil {
			fmt.Fprintf(a.stderr, "bench: %v\n", err)
			rep.Failed = append(rep.Failed, harness.Failed{Name: s.Name, Error: err.Error()})
			if ctx.Err() != nil {
				break
			}
			continue
		}
		rep.Results = append(rep.Results, *res)
	}

	fmt.Fprintln(a.stdout)
	if err := harness.WriteTable(a.stdout, rep); err != nil {
		fmt.Fprintf(a.stderr, "bench: %v\n", err)
		return exitFailed
	}
	code := exitOK
	if len(rep.Failed) > 0 {
		code = exitFailed
	}
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, rep); err != nil {
			fmt.Fprintf(a.stderr, "bench: %v\n", err)
			return exitFailed
		}
	}
	if baseline != nil {
		rows, regressed := harness.Compare(baseline, rep, o.tolerance)
		fmt.Fprintf(a.stdout, "\ncompared with %s (%s, %s):\n", o.compare, baseline.Machine.CPUModel, baseline.Date.Format("2006-01-02"))
		if err := harness.WriteComparison(a.stdout, rows, o.tolerance); err != nil {
			fmt.Fprintf(a.stderr, "bench: %v\n", err)
			return exitFailed
		}
		if regressed && code == exitOK {
			fmt.Fprintf(a.stderr, "bench: slower than %.2fx the baseline\n", o.tolerance)
			code = exitRegression
		}
		if names := harness.NotCompared(rows); len(names) > 0 && code == exitOK {
			fmt.Fprintf(a.stderr, "bench: not compared with the baseline: %s\n", strings.Join(names, ", "))
			code = exitNotCompared
		}
	}
	fmt.Fprintf(a.stdout, "\n%s\n", verdictLine(code))
	return code
}

// incomparable says why a baseline cannot be compared with the run o asks
// for at all (another size, too few runs), or "".
func incomparable(baseline *harness.Report, o runOptions) string {
	switch {
	case baseline.Settings.Size != o.size.String():
		return fmt.Sprintf("the baseline was measured at size %s, this run is %s; times of different sizes are not compared", baseline.Settings.Size, o.size)
	case baseline.Settings.Runs < harness.MinRuns:
		return fmt.Sprintf("the baseline has %d timed run(s) per scenario; a comparison needs medians of at least %d runs on each side", baseline.Settings.Runs, harness.MinRuns)
	}
	return ""
}

// verdictLine is the last line of "bench run": a machine-readable verdict
// that scripts can read even through "go run", which turns every non-zero
// exit status into 1: "bench verdict: ok|failed|slower|not compared (exit
// status N)".
func verdictLine(code int) string {
	word := map[int]string{exitOK: "ok", exitFailed: "failed", exitRegression: "slower", exitNotCompared: "not compared"}[code]
	if word == "" {
		word = "usage"
	}
	return fmt.Sprintf("bench verdict: %s (exit status %d)", word, code)
}

// profiles wires -cpuprofile and -memprofile into the measurement.
func profiles(opts *harness.Options, o runOptions) error {
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		opts.StartProfile = func() error {
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return fmt.Errorf("-cpuprofile: %w", err)
			}
			return nil
		}
		opts.StopProfile = func() error {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				return fmt.Errorf("-cpuprofile: %w", err)
			}
			return nil
		}
	}
	if o.memProfile != "" {
		opts.AfterRuns = func() error {
			f, err := os.Create(o.memProfile)
			if err != nil {
				return fmt.Errorf("-memprofile: %w", err)
			}
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				f.Close()
				return fmt.Errorf("-memprofile: %w", err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("-memprofile: %w", err)
			}
			return nil
		}
	}
	return nil
}

// readBaseline reads and validates a saved JSON report.
func readBaseline(path string) (*harness.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := schema.Validate(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return harness.ReadReport(path)
}

func writeJSON(path string, rep *harness.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("-json: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}
