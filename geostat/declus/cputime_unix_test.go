//go:build unix

package declus

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time of the process, to report
// benchmark figures that are less sensitive to other load on the machine
// than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
