// Package cputime reads the CPU time of the process, so benchmarks can
// report figures that are less sensitive than wall time to other load on a
// shared machine (per-query CPU nanoseconds beside ns/op).
package cputime
