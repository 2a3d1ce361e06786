package workertest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/server"
)

// StartApp runs a server.App on 127.0.0.1 until the test ends, over real
// HTTP. Fields of opts left zero get test defaults: a free port, a temporary
// data directory, discarded logs and start-up hint, and, when neither Getenv
// nor TokensFile is set, an environment whose only variable is
// GEOSTAT_TOKEN=token.
func StartApp(tb testing.TB, opts server.Options, token string) *server.App {
	tb.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.DataDir == "" {
		opts.DataDir = tb.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Getenv == nil {
		opts.Getenv = func(k string) string {
			if k == server.TokenEnv && opts.TokensFile == "" {
				return token
			}
			return ""
		}
	}
	app, err := server.New(opts)
	if err != nil {
		tb.Fatalf("starting the worker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("the worker stopped with %v", err)
			}
		case <-time.After(10 * time.Second):
			tb.Error("the worker did not stop")
		}
	})
	return app
}

// Runner is a worker that serves until its context ends (a
// *service.Service, a *server.App).
type Runner interface {
	Run(ctx context.Context) error
}

// Run runs r until the test ends, or until the returned stop is called
// (stop is idempotent): it cancels r's context, waits for Run to return
// and fails the test when it returned an error.
func Run(tb testing.TB, r Runner) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("the worker stopped with %v", err)
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}
