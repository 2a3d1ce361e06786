package demo_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/worker/demo"
)

// The footer printed after the demo's commands names the commands that
// print a report page's URL.
func ExampleFooter() {
	fmt.Print(demo.Footer())
	// Output:
	// 4 of these commands store a validation report (geostatistics/simulation-report, geostat/simulation-report, geostatistics/consim, geostatistics/simulation-report) and print a line "The report page, to open in a browser (the link works for an hour): URL":
	// open that URL in a browser (it needs no token and works for an hour; it is links.view of the job's results).
}
