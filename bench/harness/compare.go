package harness

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Comparison is one scenario of a report set against a baseline.
type Comparison struct {
	// Name is the scenario's name.
	Name string
	// Baseline and Current are the median wall times in seconds (0 when
	// the scenario is missing on that side).
	Baseline, Current float64
	// Ratio is Current / Baseline; 0 when not comparable.
	Ratio float64
	// Slower is true when Ratio exceeds the tolerance.
	Slower bool
	// Note says why a scenario is not comparable or what differs (size,
	// threads).
	Note string
}

// Compare matches the current results with the baseline's by scenario name
// and reports the ratio of the median times. A scenario is a regression
// when current/baseline > tolerance. Scenarios measured at another size are
// not compared; a different thread count is noted but compared.
func Compare(baseline, current *Report, tolerance float64) (rows []Comparison, regressed bool) {
	base := make(map[string]Result, len(baseline.Results))
	for _, r := range baseline.Results {
		base[r.Name] = r
	}
	for _, cur := range current.Results {
		c := Comparison{Name: cur.Name, Current: cur.Wall.Median}
		b, ok := base[cur.Name]
		switch {
		case !ok:
			c.Note = "not in the baseline"
		case b.Size != cur.Size:
			c.Baseline = b.Wall.Median
			c.Note = fmt.Sprintf("baseline size %s, not compared", b.Size)
		case !(b.Wall.Median > 0):
			c.Note = "baseline has no time"
		default:
			c.Baseline = b.Wall.Median
			c.Ratio = cur.Wall.Median / b.Wall.Median
			c.Slower = c.Ratio > tolerance
			if b.Threads != cur.Threads {
				c.Note = fmt.Sprintf("baseline threads %d", b.Threads)
			}
		}
		regressed = regressed || c.Slower
		rows = append(rows, c)
	}
	return rows, regressed
}

// WriteComparison prints the comparison as a table.
func WriteComparison(w io.Writer, rows []Comparison, tolerance float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tbaseline\tcurrent\tratio\tstatus (tolerance %.2fx)\tnote\n", tolerance)
	for _, c := range rows {
		b, ratio, status := "-", "-", "not compared"
		if c.Baseline > 0 {
			b = FormatSeconds(c.Baseline)
		}
		if c.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", c.Ratio)
			status = "ok"
			if c.Slower {
				status = "SLOWER"
			}
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", c.Name, b, FormatSeconds(c.Current), ratio, status)
		if c.Note != "" {
			line += "\t" + c.Note
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("harness: writing the comparison: %w", err)
	}
	return nil
}
