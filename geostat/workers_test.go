package geostat

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWorkers(t *testing.T) {
	ctx := context.Background()
	all := runtime.GOMAXPROCS(0)
	assert.Equal(t, all, Workers(ctx))
	assert.Equal(t, 1, Workers(WithWorkers(ctx, 1)))
	assert.Equal(t, all, Workers(WithWorkers(ctx, all+5)), "never above GOMAXPROCS")
	assert.Equal(t, all, Workers(WithWorkers(ctx, 0)))
}
