package geostat

import (
	"context"
	"runtime"
)

type workersKey struct{}

// WithWorkers returns a context that bounds the goroutines a library call
// computes with to n (n ≤ 0 removes the bound). The worker uses it for its
// -threads flag; results never depend on the number of goroutines.
func WithWorkers(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, workersKey{}, n)
}

// Workers returns the number of goroutines a parallel computation under ctx
// may use: runtime.GOMAXPROCS(0), lowered to the bound of WithWorkers.
func Workers(ctx context.Context) int {
	w := runtime.GOMAXPROCS(0)
	if ctx != nil {
		if n, ok := ctx.Value(workersKey{}).(int); ok && n > 0 && n < w {
			w = n
		}
	}
	return w
}
