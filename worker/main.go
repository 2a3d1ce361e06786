// Command worker runs the geostat worker: the geostatistics compute tasks
// over HTTP, on the geoscience object API of an embedded on-disk store (or
// a client of a remote one), with jobs, a file area for reports, metrics
// and an OpenAPI document. Everything lives in package service; main only
// parses flags and handles signals.
//
//	go run ./worker                 # 127.0.0.1:8080, data in ./geostat-data
//	go run ./worker -demo           # seed a demo workspace and print curl commands
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
)

func main() {
	var opts service.Options
	var seedDemo bool
	var maxMemory string
	flag.StringVar(&opts.Addr, "addr", server.DefaultAddr, "listen address host:port")
	flag.StringVar(&opts.DataDir, "data", server.DefaultDataDir, "data directory of the embedded store, jobs and files")
	flag.StringVar(&opts.TokensFile, "tokens", "", "JSON tokens file (default: $GEOSTAT_TOKEN, else a generated development token)")
	flag.StringVar(&opts.ObjectsURL, "objects-url", "", "base URL of a remote Geoscience Object API to use instead of the embedded store")
	flag.StringVar(&opts.ObjectsToken, "objects-token", "", "bearer token for -objects-url")
	flag.StringVar(&opts.SchemasDir, "schemas", "", "evo schema directory (default: $GEOSTAT_SCHEMAS_DIR or ../shared/evo-schemas)")
	flag.StringVar(&opts.PublicURL, "public-url", "", "base URL in the links the worker hands out (default: from each request)")
	flag.IntVar(&opts.MaxJobs, "max-jobs", service.DefaultMaxJobs, "compute jobs run at once; the rest wait as requested")
	flag.IntVar(&opts.Threads, "threads", 0, "cores one job computes with (0 = all)")
	flag.StringVar(&maxMemory, "max-memory", "", "estimated memory the running jobs may need together, e.g. 8GiB or 512MiB (default: 75% of the machine's memory)")
	flag.IntVar(&opts.MaxPerPrincipal, "max-requests-per-token", server.DefaultMaxPerPrincipal, "in-flight requests of one token (429 above); waiting for a job does not count")
	flag.IntVar(&opts.MaxJobsPerUser, "max-jobs-per-user", service.DefaultMaxJobsPerUser, "queued and running jobs of one user (429 above)")
	flag.StringVar(&opts.MetricsToken, "metrics-token", "", "bearer token that may read /metrics (owner tokens always may)")
	flag.DurationVar(&opts.JobRetention, "job-retention", service.DefaultJobRetention, "how long finished job records are kept (queued and running jobs never expire)")
	flag.DurationVar(&opts.SyncWait, "sync-wait", service.DefaultSyncWait, "how long a /geostat submit waits for its job before answering 303")
	flag.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "on SIGTERM, how long running jobs may finish before they are interrupted")
	flag.BoolVar(&seedDemo, "demo", false, "seed an empty data directory with a demo workspace and print curl commands for every task")
	flag.Parse()

	if maxMemory != "" {
		n, err := parseBytes(maxMemory)
		if err != nil {
			fmt.Fprintln(os.Stderr, "geostat: -max-memory:", err)
			os.Exit(2)
		}
		opts.MaxMemory = n
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, err := service.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "geostat:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if seedDemo {
		if err := s.SeedDemo(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "geostat:", err)
			os.Exit(1)
		}
		fmt.Print(demoHint(s, opts))
	}
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "geostat:", err)
		os.Exit(1)
	}
}

// demoHint prints the demo's curl commands with the token to use.
func demoHint(s *service.Service, opts service.Options) string {
	token := "$GEOSTAT_TOKEN"
	if opts.TokensFile == "" && os.Getenv(server.TokenEnv) == "" {
		abs, _ := filepath.Abs(filepath.Join(opts.DataDir, server.DevTokenFile))
		token = "$(cat " + abs + ")"
	} else if opts.TokensFile != "" {
		token = "<a token of " + opts.TokensFile + ">"
	}
	return "\nThe demo workspace is ready. Run every task with:\n\n" + demo.Commands(s.URL(), token) + "\n"
}

// parseBytes reads a size such as 512MiB, 8GiB, 2GB or a plain byte count.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			var v float64
			if _, err := fmt.Sscanf(strings.TrimSuffix(s, u.suffix), "%g", &v); err != nil || v <= 0 {
				return 0, fmt.Errorf("%q is not a size like 8GiB", s)
			}
			return int64(v * float64(u.mult)), nil
		}
	}
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size like 8GiB", s)
	}
	return n, nil
}
