package objects

import (
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/require"
)

// TestEachColumnHandsOnAPanic checks that a panic of a column's encoder on
// one of eachColumn's goroutines reaches the caller's goroutine, where the
// job's recover turns it into a failure, as a *geostat.PanicError with the
// stack of the goroutine that panicked. Before, it crashed the process.
func TestEachColumnHandsOnAPanic(t *testing.T) {
	var got any
	func() {
		defer func() { got = recover() }()
		eachColumn(4, 64, func(_, c int) {
			if c == 17 {
				panic("column encoder failed")
			}
		})
	}()
	pe, ok := got.(*geostat.PanicError)
	require.True(t, ok, "recovered %v", got)
	require.Equal(t, "column encoder failed", pe.Value)
	require.Contains(t, string(pe.Stack), "objects.eachColumn")
}
