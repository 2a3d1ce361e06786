package cputime

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Busy work on this goroutine shows up in the process's CPU time.
func TestProcessCountsBusyWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no rusage here")
	}
	before := Process()
	x := 1.0
	for i := 0; i < 50_000_000; i++ {
		x = x*1.0000001 + 1e-9
	}
	assert.Greater(t, x, 1.0)
	assert.Greater(t, Process(), before)
}
