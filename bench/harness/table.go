package harness

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report's machine line, one table row per result,
// the scenario details, and the skipped and failed scenarios.
func WriteTable(w io.Writer, r *Report) error {
	m := r.Machine
	fmt.Fprintf(w, "%s, %d cores, %s, %s/%s, %s, seed %d\n",
		m.CPUModel, m.Cores, m.GoVersion, m.OS, m.Arch, r.Date.UTC().Format("2006-01-02 15:04 MST"), r.Settings.Seed)
	if len(r.Results) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "scenario\tsize\tthreads\truns\tmedian\tmin\tmax\tthroughput\tother rates\tallocs/run\talloc/run\tpeak RSS")
		for _, res := range r.Results {
			var other []string
			for _, x := range res.Rates {
				other = append(other, FormatRate(x))
			}
			rss := "n/a"
			if res.PeakRSS != nil {
				rss = FormatBytes(float64(*res.PeakRSS))
				if res.PeakRSSScope != "scenario" {
					rss += " (process)"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				res.Name, res.Size, res.Threads, res.Runs,
				FormatSeconds(res.Wall.Median), FormatSeconds(res.Wall.Min), FormatSeconds(res.Wall.Max),
				FormatRate(res.Throughput), orDash(strings.Join(other, ", ")),
				FormatCount(res.Allocations.Mallocs), FormatBytes(res.Allocations.Bytes), rss)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("harness: writing the table: %w", err)
		}
		for _, res := range r.Results {
			line := res.Name + ": " + res.Workload
			if len(res.Details) > 0 {
				keys := make([]string, 0, len(res.Details))
				for k := range res.Details {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				var kv []string
				for _, k := range keys {
					kv = append(kv, fmt.Sprintf("%s %s", k, formatDetail(res.Details[k])))
				}
				line += "; " + strings.Join(kv, ", ")
			}
			fmt.Fprintln(w, "  "+line)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Name, s.Reason)
	}
	for _, f := range r.Failed {
		fmt.Fprintf(w, "FAILED %s: %s\n", f.Name, f.Error)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func formatDetail(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// FormatSeconds prints a duration in s, ms or µs with 3–4 significant
// digits.
func FormatSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1f ms", s*1e3)
	default:
		return fmt.Sprintf("%.1f µs", s*1e6)
	}
}

// FormatCount prints a count with a k, M or G suffix.
func FormatCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.2f G", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1f k", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// FormatBytes prints a byte count in B, KiB, MiB or GiB.
func FormatBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}

// FormatRate prints a rate as "1.23 M cells/s".
func FormatRate(r Rate) string {
	return strings.TrimSpace(FormatCount(r.PerSecond)) + " " + r.Name + "/s"
}
