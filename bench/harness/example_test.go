package harness_test

import (
	"fmt"
	"os"

	"github.com/geostat-engine/geostat/bench/harness"
)

func ExampleCompare() {
	run := func(name string, median float64) harness.Result {
		return harness.Result{Name: name, Size: "medium", Threads: 2, Wall: harness.Wall{Median: median}}
	}
	baseline := &harness.Report{Results: []harness.Result{run("knn", 1.0), run("kriging-sk", 0.8)}}
	current := &harness.Report{Results: []harness.Result{run("knn", 1.1), run("kriging-sk", 1.2)}}
	rows, regressed := harness.Compare(baseline, current, 1.25)
	for _, r := range rows {
		fmt.Printf("%s %.2fx slower=%v\n", r.Name, r.Ratio, r.Slower)
	}
	fmt.Println("regressed:", regressed)
	_ = harness.WriteComparison(os.Stdout, rows, 1.25)
	// Output:
	// knn 1.10x slower=false
	// kriging-sk 1.50x slower=true
	// regressed: true
	// scenario    baseline  current  ratio  status (tolerance 1.25x)  note
	// knn         1.000 s   1.100 s  1.10x  ok
	// kriging-sk  800.0 ms  1.200 s  1.50x  SLOWER
}
