package harness

import (
	"bufio"
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// resetPeakRSS resets the kernel's peak resident set size of this process
// (VmHWM) to the current RSS. It reports false when that is not possible
// (not Linux, or /proc/self/clear_refs not writable).
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns VmHWM of /proc/self/status in bytes.
func peakRSS() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	return statusField(b, "VmHWM:")
}

// statusField parses a "Name:   123 kB" line of a /proc status file.
func statusField(b []byte, name string) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		f := strings.Fields(line[len(name):])
		if len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			v *= 1024
		}
		return v, true
	}
	return 0, false
}

// MemoryPeak is what a MemorySampler saw, in bytes: the resident set size
// (RSS: resident pages of /proc/self/statm, so heap, stacks, the runtime's
// own memory and mapped files alike) and the Go heap's objects
// (runtime/metrics /memory/classes/heap/objects:bytes: live objects plus
// dead ones not yet swept, the heap the collector lets grow to about twice
// the live heap with GOGC=100), at the start and at their largest sample.
type MemoryPeak struct {
	StartRSS, PeakRSS   int64
	StartHeap, PeakHeap int64
	// RSSOK is false where /proc/self/statm cannot be read (RSS then 0).
	RSSOK bool
	// Samples counts the samples taken, the start's and the stop's
	// included.
	Samples int
}

// RSSAbove returns the peak RSS above the start's.
func (p MemoryPeak) RSSAbove() int64 { return p.PeakRSS - p.StartRSS }

// HeapAbove returns the peak of the heap's objects above the start's.
func (p MemoryPeak) HeapAbove() int64 { return p.PeakHeap - p.StartHeap }

// MemorySampler samples the process's RSS and heap objects from a goroutine
// at a fixed interval and keeps their peaks: the peak memory of one part of
// a run (one job of several), which the whole run's VmHWM cannot isolate.
// A peak shorter than the interval can be missed.
type MemorySampler struct {
	mu     sync.Mutex
	peak   MemoryPeak
	m      []metrics.Sample
	page   int64
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// StartMemorySampler takes a first sample (the start levels) and samples
// again every interval until Stop.
func StartMemorySampler(interval time.Duration) *MemorySampler {
	s := &MemorySampler{m: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}},
		page: int64(os.Getpagesize()), stop: make(chan struct{}), done: make(chan struct{})}
	rss, heap, ok := s.read()
	s.peak = MemoryPeak{StartRSS: rss, PeakRSS: rss, StartHeap: heap, PeakHeap: heap, RSSOK: ok, Samples: 1}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.Sample()
			}
		}
	}()
	return s
}

// read returns the current RSS and heap objects.
func (s *MemorySampler) read() (rss, heap int64, ok bool) {
	metrics.Read(s.m)
	if s.m[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(s.m[0].Value.Uint64())
	}
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, heap, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, heap, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, heap, false
	}
	return pages * s.page, heap, true
}

// Sample takes one sample now (also called by the sampling goroutine).
func (s *MemorySampler) Sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	rss, heap, ok := s.read()
	s.peak.PeakRSS = max(s.peak.PeakRSS, rss)
	s.peak.PeakHeap = max(s.peak.PeakHeap, heap)
	s.peak.RSSOK = s.peak.RSSOK && ok
	s.peak.Samples++
}

// Stop takes a last sample, stops the goroutine and returns the peaks.
// Later calls return the same peaks.
func (s *MemorySampler) Stop() MemoryPeak {
	s.Sample()
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	s.mu.Unlock()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}
