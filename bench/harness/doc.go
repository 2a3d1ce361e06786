// Package harness measures benchmark scenarios honestly: one untimed
// set-up, one warm-up run, then N timed runs of the same work, each result
// checked for sanity before any figure is reported.
//
// Per scenario it records the median, minimum and maximum wall time of the
// timed runs, throughput (items per second and any further counts a scenario
// declares, such as node-line evaluations), the heap allocations per run
// (runtime.MemStats Mallocs and TotalAlloc deltas), the peak resident set
// size and the number of threads (GOMAXPROCS).
//
// The peak RSS is the largest VmHWM of /proc/self/status over the timed
// runs: before each run the heap is collected, its free pages are returned
// to the OS and the peak is reset to the current RSS by writing "5" to
// /proc/self/clear_refs, so the figure holds the resident case data plus
// what the run itself needs, not the set-up's or the sanity checks'
// garbage. Where the reset is impossible the peak of the whole process is
// reported and marked so ("process").
//
// A Report holds the results with a description of the machine; it prints as
// a text table (WriteTable) and marshals to the JSON document whose schema is
// bench/schema/bench-result.schema.json. Compare sets a report against a
// saved baseline.
package harness
