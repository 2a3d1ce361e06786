// Command bench runs the geostat benchmark scenarios on deterministic
// synthetic cases and reports honest figures.
//
//	go run ./bench                       list the scenarios and whether they are available
//	go run ./bench run SCENARIO... [flags]
//	go run ./bench run all -size small -runs 1
//
// Flags of run (they may come before or after the scenario names):
//
//	-size small|medium|large   case sizes (default medium; small is for CI)
//	-runs N                    timed runs after one warm-up run (default 3)
//	-threads N                 GOMAXPROCS (default: all cores)
//	-seed N                    seed of the synthetic cases
//	-json FILE                 also write the results as JSON (schema: bench/schema)
//	-compare BASELINE.json     ratio of each median time to a saved run of the same
//	                           size; at least 3 runs on each side (-runs 3 or more)
//	-tolerance X               slowdown ratio that fails -compare (default 1.25),
//	                           when the runs of the two sides do not overlap
//	-cpuprofile FILE           CPU profile of the first timed run (one scenario only)
//	-memprofile FILE           allocation profile of the process after the timed runs
//	                           (one scenario only; includes the set-up's allocations)
//
// Every scenario sets up its case untimed, runs once to warm up, then runs
// -runs times; each result is checked for sanity before a time is reported.
// The table shows the median, minimum and maximum wall time, throughput,
// allocations per run, peak RSS and threads; the JSON adds the machine.
//
// Exit status: 0 success, 1 a scenario failed (error or sanity check),
// 2 bad usage (unknown or unavailable scenario, bad flag, -compare with
// -runs below 3), 3 a scenario is slower than -tolerance times the
// -compare baseline beyond the noise, 4 -compare could not compare (a
// baseline of another size or with fewer than 3 runs, refused before
// anything runs; a scenario not in the baseline). The last line of the
// output says the same: "bench verdict: ok|failed|slower|not compared
// (exit status N)".
package main

import (
	"context"
	"os"
	"os/signal"

	"golang.org/x/term"

	"github.com/geostat-engine/geostat/bench/scenarios"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := (&app{
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		scenarios: scenarios.All(),
		terminal:  term.IsTerminal(int(os.Stderr.Fd())),
	}).main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
