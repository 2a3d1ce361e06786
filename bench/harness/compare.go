package harness

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// MinRuns is the fewest timed runs each side of a comparison needs: a
// median of fewer runs says nothing about the noise, so such a scenario is
// not compared.
const MinRuns = 3

// Status is the verdict of one compared scenario.
type Status string

// The statuses of a Comparison.
const (
	// StatusOK: the current median is within the tolerance of the
	// baseline's.
	StatusOK Status = "ok"
	// StatusSlower: the current median exceeds the tolerance and every
	// current run is slower than every baseline run.
	StatusSlower Status = "SLOWER"
	// StatusNoise: the median ratio exceeds the tolerance but the two
	// sides' runs overlap, so the difference is not beyond the measured
	// noise; not a regression.
	StatusNoise Status = "within noise"
	// StatusNotCompared: the scenario could not be compared (see Note).
	StatusNotCompared Status = "not compared"
)

// Comparison is one scenario of a report set against a baseline.
type Comparison struct {
	// Name is the scenario's name.
	Name string
	// Baseline and Current are the median wall times in seconds (0 when
	// the scenario is missing on that side).
	Baseline, Current float64
	// BaselineRuns and CurrentRuns are the numbers of timed runs behind
	// the medians.
	BaselineRuns, CurrentRuns int
	// BaselineSpread and CurrentSpread are the noise of each side: the
	// range of its runs relative to its median, (max − min) / median.
	BaselineSpread, CurrentSpread float64
	// Ratio is Current / Baseline; 0 when not compared.
	Ratio float64
	// Status is the verdict.
	Status Status
	// Note says why a scenario is not compared or what differs (threads).
	Note string
}

// Compare matches the current results with the baseline's by scenario name
// and compares their median times. A scenario is compared only when it is
// in the baseline at the same size with a time, and both sides have at
// least MinRuns timed runs; otherwise its Status is StatusNotCompared. A
// compared scenario is a regression (StatusSlower) when current/baseline >
// tolerance and the difference is beyond the measured noise: the fastest
// current run is slower than the slowest baseline run. When the ratio
// exceeds the tolerance but the runs overlap, the status is StatusNoise. A
// different thread count is noted but compared.
func Compare(baseline, current *Report, tolerance float64) (rows []Comparison, regressed bool) {
	base := make(map[string]Result, len(baseline.Results))
	for _, r := range baseline.Results {
		base[r.Name] = r
	}
	for _, cur := range current.Results {
		c := Comparison{Name: cur.Name, Current: cur.Wall.Median, CurrentRuns: runsOf(cur), CurrentSpread: spread(cur.Wall),
			Status: StatusNotCompared}
		b, ok := base[cur.Name]
		if ok {
			c.Baseline, c.BaselineRuns, c.BaselineSpread = b.Wall.Median, runsOf(b), spread(b.Wall)
		}
		switch {
		case !ok:
			c.Note = "not in the baseline"
		case b.Size != cur.Size:
			c.Note = fmt.Sprintf("baseline size %s, this run %s: times of different sizes are not compared", b.Size, cur.Size)
		case !(b.Wall.Median > 0):
			c.Note = "baseline has no time"
		case c.BaselineRuns < MinRuns || c.CurrentRuns < MinRuns:
			c.Note = fmt.Sprintf("baseline %d runs, this run %d: need at least %d on each side", c.BaselineRuns, c.CurrentRuns, MinRuns)
		default:
			c.Ratio = cur.Wall.Median / b.Wall.Median
			switch {
			case !(c.Ratio > tolerance):
				c.Status = StatusOK
			case cur.Wall.Min > b.Wall.Max:
				c.Status = StatusSlower
			default:
				c.Status = StatusNoise
				c.Note = "the runs overlap: the difference is not beyond the noise"
			}
			if b.Threads != cur.Threads {
				if c.Note != "" {
					c.Note += "; "
				}
				c.Note += fmt.Sprintf("baseline threads %d", b.Threads)
			}
		}
		regressed = regressed || c.Status == StatusSlower
		rows = append(rows, c)
	}
	return rows, regressed
}

// NotCompared returns the names of the rows that were not compared.
func NotCompared(rows []Comparison) []string {
	var out []string
	for _, c := range rows {
		if c.Status == StatusNotCompared {
			out = append(out, c.Name)
		}
	}
	return out
}

// runsOf is the number of timed runs of a result: its run times, or its
// Runs count when they are absent.
func runsOf(r Result) int {
	if len(r.Wall.Runs) > 0 {
		return len(r.Wall.Runs)
	}
	return r.Runs
}

// spread is (max − min) / median of a result's wall times; 0 without a
// median.
func spread(w Wall) float64 {
	if !(w.Median > 0) || w.Max < w.Min {
		return 0
	}
	return (w.Max - w.Min) / w.Median
}

// WriteComparison prints the comparison as a table: each side's median,
// its number of runs and its spread (range relative to the median), the
// ratio and the status.
func WriteComparison(w io.Writer, rows []Comparison, tolerance float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tbaseline (runs, spread)\tcurrent (runs, spread)\tratio\tstatus (tolerance %.2fx)\tnote\n", tolerance)
	side := func(median float64, runs int, spread float64) string {
		if !(median > 0) {
			return "-"
		}
		return fmt.Sprintf("%s (%d, %.0f%%)", FormatSeconds(median), runs, 100*spread)
	}
	for _, c := range rows {
		ratio := "-"
		if c.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", c.Ratio)
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", c.Name, side(c.Baseline, c.BaselineRuns, c.BaselineSpread),
			side(c.Current, c.CurrentRuns, c.CurrentSpread), ratio, c.Status)
		if c.Note != "" {
			line += "\t" + c.Note
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("harness: writing the comparison: %w", err)
	}
	if _, err := fmt.Fprintf(w, "spread: (slowest - fastest run) / median. SLOWER: the ratio of the medians above %.2fx and every run slower than every baseline run.\n", tolerance); err != nil {
		return fmt.Errorf("harness: writing the comparison: %w", err)
	}
	return nil
}
