package harness_test

import (
	"fmt"
	"os"

	"github.com/geostat-engine/geostat/bench/harness"
)

func ExampleCompare() {
	run := func(name string, times ...float64) harness.Result {
		w := harness.Wall{Median: times[1], Min: times[0], Max: times[2], Runs: times}
		return harness.Result{Name: name, Size: "medium", Threads: 2, Runs: len(times), Wall: w}
	}
	baseline := &harness.Report{Results: []harness.Result{run("knn", 0.98, 1.0, 1.02), run("kriging-sk", 0.79, 0.8, 0.81), run("tbsim-cond", 2, 3, 5)}}
	current := &harness.Report{Results: []harness.Result{run("knn", 1.08, 1.1, 1.12), run("kriging-sk", 1.19, 1.2, 1.21), run("tbsim-cond", 4, 4.5, 6)}}
	rows, regressed := harness.Compare(baseline, current, 1.25)
	for _, r := range rows {
		fmt.Printf("%s %.2fx %s\n", r.Name, r.Ratio, r.Status)
	}
	fmt.Println("regressed:", regressed)
	_ = harness.WriteComparison(os.Stdout, rows, 1.25)
	// Output:
	// knn 1.10x ok
	// kriging-sk 1.50x SLOWER
	// tbsim-cond 1.50x within noise
	// regressed: true
	// scenario    baseline (runs, spread)  current (runs, spread)  ratio  status (tolerance 1.25x)  note
	// knn         1.000 s (3, 4%)          1.100 s (3, 4%)         1.10x  ok
	// kriging-sk  800.0 ms (3, 3%)         1.200 s (3, 2%)         1.50x  SLOWER
	// tbsim-cond  3.000 s (3, 100%)        4.500 s (3, 44%)        1.50x  within noise  the runs overlap: the difference is not beyond the noise
	// spread: (slowest - fastest run) / median. SLOWER: the ratio of the medians above 1.25x and every run slower than every baseline run.
}
