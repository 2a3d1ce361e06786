//go:build !unix

package neighbor

import "time"

// processCPU is not available here; benchmarks report 0 CPU time.
func processCPU() time.Duration { return 0 }
