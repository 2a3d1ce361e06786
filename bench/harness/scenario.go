package harness

import (
	"context"

	"github.com/geostat-engine/geostat/geostat/synthetic"
)

// Config is what a scenario's set-up gets from the command line.
type Config struct {
	// Size selects the case sizes.
	Size synthetic.Size
	// Seed drives the synthetic case.
	Seed uint64
}

// Scenario is a named benchmark. A scenario whose library is not there yet
// has a nil Setup and names the missing packages in Missing.
type Scenario struct {
	// Name is the command-line name, e.g. "kriging-sk".
	Name string
	// Description is one line saying what is timed.
	Description string
	// Missing names the packages the scenario still needs (for the
	// "not available yet" message); empty when available.
	Missing string
	// Setup builds the case and the workload (untimed).
	Setup func(ctx context.Context, cfg Config) (*Workload, error)
}

// Available reports whether the scenario can run.
func (s Scenario) Available() bool { return s.Setup != nil }

// Status is the listing text of the scenario's availability.
func (s Scenario) Status() string {
	if s.Available() {
		return "available"
	}
	return "not available yet (needs package " + s.Missing + ")"
}

// Workload is a prepared scenario: the timed function and what one call
// of it does.
type Workload struct {
	// Info describes the workload's size and parameters in a few words.
	Info string
	// Run does the timed work once. progress may be nil; a non-nil one is
	// passed on to the library's progress callback.
	Run func(ctx context.Context, progress func(done, total int)) error
	// Check verifies the result of the last Run (for example that the
	// estimates are finite and present). It is not timed. A workload must
	// have one: no figure is reported for a result that was not checked.
	Check func() error
	// Items is the number of items one Run produces (targets, rows, ...),
	// counted in Unit ("cells", "points", "rows", ...).
	Items int64
	// Unit names the items.
	Unit string
	// Counts are further per-Run quantities whose rate is reported, for
	// example node-line evaluations of a simulation.
	Counts []Count
	// Details returns scenario-specific figures after the runs, for example
	// a factorisation reuse rate; nil when there are none.
	Details func() map[string]float64
	// Release, when not nil, drops the last run's result after its check,
	// so that the next run starts without it: the peak RSS of a run then
	// counts its own output once, not also the previous run's. Outputs the
	// caller preallocates and reuses (as a user would) are kept.
	Release func()
	// Close releases resources after the measurement; may be nil.
	Close func()
}

// Count is a quantity produced per run.
type Count struct {
	// Name of the quantity, plural, e.g. "node-line evaluations".
	Name string
	// PerRun is the amount one run produces.
	PerRun float64
}
