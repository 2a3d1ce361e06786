package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"time"
)

// Options configure Measure.
type Options struct {
	// Runs is the number of timed runs after the warm-up (≥ 1).
	Runs int
	// Progress draws a bar; nil for none.
	Progress *Progress
	// StartProfile and StopProfile, when not nil, bracket the first timed
	// run, without its sanity check (CPU profile); AfterRuns is called after
	// the last timed run, before the workload is closed (allocation
	// profile).
	StartProfile func() error
	StopProfile  func() error
	AfterRuns    func() error
	// Log receives one status line per phase; nil for none.
	Log io.Writer
}

// ErrNotAvailable is returned by Measure for a scenario without Setup.
var ErrNotAvailable = errors.New("scenario not available")

// Measure sets the scenario up, runs it once to warm up and Runs times
// timed, checks every run's result and returns the figures. Sanity failures
// and run errors are returned as errors: no figure is reported for them.
func Measure(ctx context.Context, s Scenario, cfg Config, opt Options) (*Result, error) {
	if !s.Available() {
		return nil, fmt.Errorf("%s: %w: %s", s.Name, ErrNotAvailable, s.Status())
	}
	if opt.Runs < 1 {
		return nil, fmt.Errorf("%s: runs = %d must be at least 1", s.Name, opt.Runs)
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	res := &Result{
		Name: s.Name, Description: s.Description, Size: cfg.Size.String(),
		Threads: runtime.GOMAXPROCS(0), Runs: opt.Runs,
	}

	logf("%s (%s): setting up", s.Name, cfg.Size)
	t0 := time.Now()
	w, err := s.Setup(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: setup: %w", s.Name, err)
	}
	if w.Close != nil {
		defer w.Close()
	}
	if w.Run == nil || w.Check == nil {
		panic("harness: workload of " + s.Name + " lacks Run or Check")
	}
	res.SetupSeconds = time.Since(t0).Seconds()
	res.Workload = w.Info

	canReset := resetPeakRSS()
	res.PeakRSSScope = "scenario"
	if !canReset {
		res.PeakRSSScope = "process"
	}

	logf("%s (%s): %s; warm-up and %d timed runs", s.Name, cfg.Size, w.Info, opt.Runs)
	opt.Progress.begin(s.Name, opt.Runs+1)
	defer opt.Progress.end()

	t0 = time.Now()
	if err := w.Run(ctx, opt.Progress.run(0, opt.Runs+1, s.Name)); err != nil {
		return nil, fmt.Errorf("%s: warm-up run: %w", s.Name, err)
	}
	res.WarmupSeconds = time.Since(t0).Seconds()
	if err := w.Check(); err != nil {
		return nil, fmt.Errorf("%s: sanity check after the warm-up run: %w", s.Name, err)
	}
	if w.Release != nil {
		w.Release()
	}

	times := make([]float64, opt.Runs)
	var mallocs, bytes float64
	var before, after runtime.MemStats
	var peak int64
	peakOK := canReset
	for i := range times {
		// Every timed run starts from a collected heap whose free pages are
		// back with the OS, with the peak RSS reset to the current RSS: the
		// peak then covers the run with the case data resident, not the
		// set-up's or the checks' garbage.
		runtime.GC()
		debug.FreeOSMemory()
		if canReset {
			resetPeakRSS()
		}
		if i == 0 && opt.StartProfile != nil {
			if err := opt.StartProfile(); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
		}
		cb := opt.Progress.run(i+1, opt.Runs+1, s.Name)
		runtime.ReadMemStats(&before)
		t0 = time.Now()
		err := w.Run(ctx, cb)
		times[i] = time.Since(t0).Seconds()
		runtime.ReadMemStats(&after)
		if canReset {
			v, ok := peakRSS()
			peak, peakOK = max(peak, v), peakOK && ok
		}
		if i == 0 && opt.StopProfile != nil {
			if err := opt.StopProfile(); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", s.Name, i+1, err)
		}
		if err := w.Check(); err != nil {
			return nil, fmt.Errorf("%s: sanity check after run %d: %w", s.Name, i+1, err)
		}
		if w.Release != nil {
			w.Release()
		}
		mallocs += float64(after.Mallocs - before.Mallocs)
		bytes += float64(after.TotalAlloc - before.TotalAlloc)
	}
	if opt.AfterRuns != nil {
		if err := opt.AfterRuns(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	opt.Progress.end() // clear the bar before the status line
	if !canReset {
		peak, peakOK = peakRSS()
	}
	if peakOK {
		res.PeakRSS = &peak
	} else {
		res.PeakRSSScope = "unavailable"
	}

	res.Wall = summarise(times)
	res.Allocations = Allocations{Mallocs: mallocs / float64(opt.Runs), Bytes: bytes / float64(opt.Runs)}
	res.Throughput = rate(w.Unit, float64(w.Items), res.Wall.Median)
	res.Rates = []Rate{}
	for _, c := range w.Counts {
		res.Rates = append(res.Rates, rate(c.Name, c.PerRun, res.Wall.Median))
	}
	if w.Details != nil {
		res.Details = w.Details()
	}
	logf("%s (%s): median %s", s.Name, cfg.Size, FormatSeconds(res.Wall.Median))
	return res, nil
}

func rate(name string, perRun, seconds float64) Rate {
	r := Rate{Name: name, PerRun: perRun}
	if seconds > 0 {
		r.PerSecond = perRun / seconds
	}
	return r
}

// summarise returns the median, minimum and maximum of the run times (the
// median of an even count is the mean of the middle two).
func summarise(times []float64) Wall {
	s := slices.Clone(times)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = 0.5 * (s[n/2-1] + s[n/2])
	}
	return Wall{Median: med, Min: s[0], Max: s[n-1], Runs: times}
}

// HeapPeak runs f and returns the peak, above its level before, of the
// bytes in heap spans in use (runtime.MemStats.HeapInuse), sampled every
// 10 ms through runtime/metrics: runtime.ReadMemStats stops the world,
// which at this rate would slow what is measured.
func HeapPeak(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	inuse := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64() + sample[1].Value.Uint64()
	}
	base := inuse()
	peak := base
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, inuse())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return max(peak, inuse()) - base
}
