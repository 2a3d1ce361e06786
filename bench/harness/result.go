package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// SchemaVersion is the version of the JSON document (Report). It changes
// when a field changes meaning or disappears.
const SchemaVersion = 1

// Report is a bench run: the machine, the settings and the per-scenario
// results. It marshals to the JSON document described by
// bench/schema/bench-result.schema.json.
type Report struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Tool is "geostat-bench".
	Tool string `json:"tool"`
	// Date is when the run started (UTC).
	Date time.Time `json:"date"`
	// Machine describes where the figures were measured.
	Machine Machine `json:"machine"`
	// Settings are the command-line settings.
	Settings Settings `json:"settings"`
	// Results are the figures of the scenarios that ran, in order.
	Results []Result `json:"results"`
	// Skipped are the scenarios asked for (by "all") that are not available.
	Skipped []Skipped `json:"skipped"`
	// Failed are scenarios whose set-up, run or sanity check failed; they
	// have no figures.
	Failed []Failed `json:"failed"`
}

// Settings are the command-line settings of a run.
type Settings struct {
	// Size is "small", "medium" or "large".
	Size string `json:"size"`
	// Runs is the number of timed runs per scenario.
	Runs int `json:"runs"`
	// Threads is GOMAXPROCS.
	Threads int `json:"threads"`
	// Seed is the seed of the synthetic cases.
	Seed uint64 `json:"seed"`
	// Progress reports whether a progress callback was passed to the
	// libraries during the timed runs (only when stderr is a terminal).
	Progress bool `json:"progress"`
}

// Result holds the figures of one scenario.
type Result struct {
	// Name is the scenario's name.
	Name string `json:"name"`
	// Description says what is timed.
	Description string `json:"description"`
	// Size is the case size.
	Size string `json:"size"`
	// Workload describes what one run does.
	Workload string `json:"workload"`
	// Threads is GOMAXPROCS during the runs.
	Threads int `json:"threads"`
	// Runs is the number of timed runs (after one warm-up run).
	Runs int `json:"runs"`
	// SetupSeconds is the untimed preparation (case generation, grid
	// centres).
	SetupSeconds float64 `json:"setup_seconds"`
	// WarmupSeconds is the wall time of the warm-up run.
	WarmupSeconds float64 `json:"warmup_seconds"`
	// Wall are the wall times of the timed runs.
	Wall Wall `json:"wall_seconds"`
	// Throughput is Items per second at the median time.
	Throughput Rate `json:"throughput"`
	// Rates are further per-run counts per second at the median time.
	Rates []Rate `json:"rates"`
	// Allocations are the heap allocations of one run (mean over the
	// timed runs).
	Allocations Allocations `json:"allocations"`
	// PeakRSS is the peak resident set size in bytes, see PeakRSSScope;
	// nil when it could not be read.
	PeakRSS *int64 `json:"peak_rss_bytes"`
	// PeakRSSScope is "scenario" (the largest peak of the timed runs, each
	// measured from a reset with the case data resident; see the package
	// documentation), "process" (the reset failed: the peak of the whole
	// process so far) or "unavailable".
	PeakRSSScope string `json:"peak_rss_scope"`
	// Details are scenario-specific figures (e.g. a reuse rate).
	Details map[string]float64 `json:"details,omitempty"`
}

// Wall summarises the timed runs' wall times, in seconds.
type Wall struct {
	// Median is the median (mean of the middle two for an even count).
	Median float64 `json:"median"`
	// Min and Max are the extremes.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Runs are the times in run order.
	Runs []float64 `json:"runs"`
}

// Rate is an amount per run and its rate at the median wall time.
type Rate struct {
	// Name is what is counted, plural ("cells").
	Name string `json:"name"`
	// PerRun is the amount of one run.
	PerRun float64 `json:"per_run"`
	// PerSecond is PerRun divided by the median wall time.
	PerSecond float64 `json:"per_second"`
}

// Allocations are heap allocation counts of one run.
type Allocations struct {
	// Mallocs is the number of heap objects allocated.
	Mallocs float64 `json:"mallocs_per_run"`
	// Bytes is the number of heap bytes allocated (TotalAlloc delta).
	Bytes float64 `json:"bytes_per_run"`
}

// Skipped is a scenario that was not run.
type Skipped struct {
	// Name is the scenario's name.
	Name string `json:"name"`
	// Reason is its status, "not available yet (needs package …)".
	Reason string `json:"reason"`
}

// Failed is a scenario that failed.
type Failed struct {
	// Name is the scenario's name.
	Name string `json:"name"`
	// Error is what went wrong.
	Error string `json:"error"`
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("harness: encoding the report: %w", err)
	}
	return nil
}

// ReadReport reads a JSON report file (for example a baseline). It checks
// the schema version only; validate against the schema for more.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("harness: reading report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("harness: report %s: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("harness: report %s has schema_version %d, want %d", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}
