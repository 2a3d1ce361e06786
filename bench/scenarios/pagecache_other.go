//go:build !linux

package scenarios

import (
	"errors"
	"os"
)

// dropFromPageCache is supported on Linux only: elsewhere the location-wise
// scenario reports its page-cache figures alone.
func dropFromPageCache(*os.File) (float64, error) {
	return 0, errors.ErrUnsupported
}
