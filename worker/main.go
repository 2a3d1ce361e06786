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
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is the worker's main: it returns the exit status (0 after a clean
// stop, 1 when the worker cannot start or fails, 2 for bad flags).
func run(args []string) int {
	var opts service.Options
	var seedDemo bool
	var maxMemory string
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: worker [flags]\n\n"+
			"Serves the geostatistics compute tasks over HTTP on a geoscience-object store (go run ./worker).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&opts.Addr, "addr", server.DefaultAddr, "listen address host:port")
	fs.StringVar(&opts.DataDir, "data", server.DefaultDataDir, "data directory of the embedded store, jobs and files (one worker per directory)")
	fs.StringVar(&opts.TokensFile, "tokens", "", "JSON tokens file of read-only static principals, besides the users and tokens managed under /workspace (default: $GEOSTAT_TOKEN, else a generated development token)")
	fs.StringVar(&opts.ObjectsURL, "objects-url", "", "base URL of a remote Geoscience Object API to use instead of the embedded store")
	fs.StringVar(&opts.ObjectsToken, "objects-token", "", "bearer token for -objects-url")
	fs.StringVar(&opts.SchemasDir, "schemas", "", "evo schema directory overriding the schemas built into the worker (default: $GEOSTAT_SCHEMAS_DIR, else the built-in set)")
	fs.StringVar(&opts.PublicURL, "public-url", "", "base URL in the links the worker hands out (default: from each request)")
	fs.IntVar(&opts.MaxJobs, "max-jobs", service.DefaultMaxJobs, "compute jobs run at once; the rest wait as requested (in a cluster, also the shards this process computes at once)")
	fs.IntVar(&opts.Threads, "threads", 0, "cores one job, or one shard in a cluster, computes with (0 = all)")
	fs.StringVar(&maxMemory, "max-memory", "", "estimated memory the running jobs may need together, e.g. 8GiB or 512MiB (default: 75% of the machine's memory)")
	fs.IntVar(&opts.MaxPerPrincipal, "max-requests-per-token", server.DefaultMaxPerPrincipal, "in-flight requests of one token (429 above); waiting for a job does not count")
	fs.IntVar(&opts.MaxJobsPerUser, "max-jobs-per-user", service.DefaultMaxJobsPerUser, "queued and running jobs of one user (429 above)")
	fs.StringVar(&opts.MetricsToken, "metrics-token", "", "bearer token that may read /metrics (instance admins always may)")
	fs.IntVar(&opts.JobMaxAttempts, "job-max-attempts", jobs.DefaultMaxAttempts, "how many times a job whose api worker stops while it runs (crash, or shutdown past -shutdown-timeout) is started in all: it runs again from its request until then, and is failed as interrupted (503) after")
	fs.DurationVar(&opts.JobRetention, "job-retention", service.DefaultJobRetention, "how long finished job records are kept (queued and running jobs never expire)")
	fs.DurationVar(&opts.SyncWait, "sync-wait", service.DefaultSyncWait, "how long a /geostat submit waits for its job before answering 303")
	fs.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "on SIGINT or SIGTERM, how long running jobs may finish before they are recorded as interrupted")
	fs.StringVar(&opts.Cluster.NATS, "nats", "", "comma-separated NATS server URLs to join (a NATS server or cluster with JetStream) instead of embedding one (by default the worker embeds one, state in DATA/nats, on no port); job records and queue then live there, and conditional turning-bands simulations and knn, idw, kriging and location-wise on large targets run as shards on the cluster")
	fs.StringVar(&opts.Cluster.Listen, "nats-listen", "", "HOST:PORT on which the embedded NATS server (state in DATA/nats) accepts other workers (default: no port); conditional turning-bands simulations and knn, idw, kriging and location-wise on large targets then run as shards on the cluster")
	fs.StringVar(&opts.Cluster.Users, "nats-users", "", "with -nats-listen: JSON users file of the credentials the embedded NATS server accepts (public NKeys and roles; see -nats-new-credentials); required unless -nats-insecure-no-auth")
	fs.StringVar(&opts.Cluster.Credentials, "nats-credentials", "", "with -nats: NKey seed file this worker signs in with (api.nk for -role all or api, compute.nk for -role compute, from -nats-new-credentials)")
	fs.StringVar(&opts.Cluster.TLSCert, "nats-tls-cert", "", "with -nats-listen: PEM certificate (chain) of the NATS port; every connection then uses TLS (with -nats-tls-key)")
	fs.StringVar(&opts.Cluster.TLSKey, "nats-tls-key", "", "with -nats-listen: PEM private key of -nats-tls-cert")
	fs.StringVar(&opts.Cluster.TLSCA, "nats-tls-ca", "", "with -nats: PEM CA certificate the NATS server's certificate is verified with; the connection then uses TLS")
	fs.BoolVar(&opts.Cluster.InsecureNoAuth, "nats-insecure-no-auth", false, "with -nats-listen: accept anyone on the NATS port, without credentials (a private laptop only: whoever reaches the port can read every queued request and run any job)")
	var newCreds, tlsHosts, serverConfig string
	fs.StringVar(&serverConfig, "nats-server-config", "", "print the authorization block of a nats-server configuration admitting the users of this users file (-nats-users) with the permissions of their roles, and exit: for a NATS server of your own joined with -nats")
	fs.StringVar(&newCreds, "nats-new-credentials", "", "write new NATS credentials in DIR and exit: users.json (for -nats-users), api.nk and compute.nk (for -nats-credentials), mode 0600; with -nats-tls-hosts also a CA and a server certificate")
	fs.StringVar(&tlsHosts, "nats-tls-hosts", "", "with -nats-new-credentials: comma-separated host names or IP addresses joining workers dial; writes ca.pem (for -nats-tls-ca), server-cert.pem and server-key.pem (for -nats-tls-cert, -nats-tls-key), valid 2 years")
	fs.StringVar(&opts.Cluster.Role, "role", service.RoleAll, "with -nats or -nats-listen: all (serve HTTP, assemble and compute shards), api (serve HTTP and assemble) or compute (only compute shards; needs -nats, serves no HTTP and reads no objects)")
	fs.DurationVar(&opts.Cluster.AckWait, "shard-ack-wait", 60*time.Second, "with a cluster: how long a shard may go without a sign of life from its compute worker before it is redelivered (the same on every worker)")
	fs.DurationVar(&opts.Cluster.JobAckWait, "job-ack-wait", 60*time.Second, "how long a job may go without a sign of life from the api worker that took it before another takes it (a job that had started then runs again, see -job-max-attempts; the same on every worker)")
	fs.IntVar(&opts.Cluster.Replicas, "nats-replicas", 1, "with a cluster: replicas of the shard queue, job state and results (3 or 5 on a NATS cluster of as many servers; the same on every worker)")
	var shardBytes string
	fs.StringVar(&shardBytes, "shard-size", "200MiB", "with a cluster: ensemble values per shard, e.g. 200MiB")
	fs.IntVar(&opts.Cluster.ShardCells, "shard-cells", 1<<20, "with a cluster: target cells (or points) per knn, idw or kriging shard, rounded up to a multiple of 4096; a larger target runs as shards, and so do location-wise statistics of a larger ensemble (one shard per row group)")
	fs.BoolVar(&seedDemo, "demo", false, "seed the demo workspace (kept when it is there from an earlier run) and print curl commands for every task")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "worker: unexpected argument %q (flags only)\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if newCreds != "" {
		if err := newCredentials(os.Stdout, newCreds, tlsHosts); err != nil {
			fmt.Fprintln(os.Stderr, "geostat: -nats-new-credentials:", err)
			return 1
		}
		return 0
	}
	if serverConfig != "" {
		users, err := natsauth.ReadUsers(serverConfig)
		if err == nil {
			var conf []byte
			if conf, err = natsauth.ServerConfig(users); err == nil {
				_, err = os.Stdout.Write(conf)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "geostat: -nats-server-config:", err)
			return 1
		}
		return 0
	}
	if tlsHosts != "" {
		fmt.Fprintln(os.Stderr, "geostat: -nats-tls-hosts goes with -nats-new-credentials")
		return 2
	}
	if maxMemory != "" {
		n, err := parseBytes(maxMemory)
		if err != nil {
			fmt.Fprintln(os.Stderr, "geostat: -max-memory:", err)
			return 2
		}
		opts.MaxMemory = n
	}
	if n, err := parseBytes(shardBytes); err != nil {
		fmt.Fprintln(os.Stderr, "geostat: -shard-size:", err)
		return 2
	} else {
		opts.Cluster.ShardBytes = n
	}
	if opts.Cluster.ShardCells < 1 {
		fmt.Fprintf(os.Stderr, "geostat: -shard-cells %d: want at least 1\n", opts.Cluster.ShardCells)
		return 2
	}
	switch opts.Cluster.Role {
	case service.RoleAll, service.RoleAPI, service.RoleCompute:
	default:
		fmt.Fprintf(os.Stderr, "geostat: -role %q: want all, api or compute\n", opts.Cluster.Role)
		return 2
	}
	if opts.Cluster.Role != service.RoleAll && !opts.Cluster.Enabled() {
		fmt.Fprintf(os.Stderr, "geostat: -role %s needs -nats or -nats-listen (a worker outside a cluster does everything)\n", opts.Cluster.Role)
		return 2
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	// In a cluster -max-jobs, -threads and -max-memory also bound the
	// shards this process computes.
	opts.Cluster.MaxShards, opts.Cluster.Threads, opts.Cluster.MaxMemory = opts.MaxJobs, opts.Threads, opts.MaxMemory
	if opts.Cluster.Role == service.RoleCompute {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := service.RunCompute(ctx, opts.Cluster, opts.Logger); err != nil {
			fmt.Fprintln(os.Stderr, "geostat:", err)
			return 1
		}
		return 0
	}
	s, err := service.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "geostat:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts the shutdown; a second one ends the process
	// at once, as without a handler.
	context.AfterFunc(ctx, stop)
	if seedDemo {
		n, err := s.SeedDemo(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "geostat:", err)
			s.Stop(context.Background())
			return 1
		}
		fmt.Print(demoHint(s, opts, n))
	}
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "geostat:", err)
		return 1
	}
	return 0
}

// demoHint prints the demo's curl commands with the token to use; created
// is the number of demo objects SeedDemo stored (0: reused).
func demoHint(s *service.Service, opts service.Options, created int) string {
	token := "$GEOSTAT_TOKEN"
	if opts.TokensFile == "" && os.Getenv(server.TokenEnv) == "" {
		abs, _ := filepath.Abs(filepath.Join(opts.DataDir, server.DevTokenFile))
		token = "$(cat " + abs + ")"
	} else if opts.TokensFile != "" {
		token = "<a token of " + opts.TokensFile + ">"
	}
	ready := "The demo workspace is ready."
	if created == 0 {
		ready = "The demo workspace from an earlier -demo run is there; reusing it as it is."
	}
	commands := demo.Commands(s.URL(), token)
	if bm, ok := s.DemoBlockModel(); ok {
		commands += demo.BlockModelCommands(s.URL(), bm)
	}
	return "\n" + ready + " In another shell, paste these commands to run every task:\n\n" + commands +
		"\n" + demo.Footer() +
		"Stop the worker with Ctrl-C.\n\n"
}

// newCredentials writes NATS credentials (and, for hosts, TLS files) in
// dir and tells how to use them.
func newCredentials(w io.Writer, dir, hosts string) error {
	c, err := natsauth.NewCredentials(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Wrote %s (for -nats-users of the worker with -nats-listen),\n%s (for -nats-credentials of joining workers of role all or api) and\n%s (for -nats-credentials of compute workers). Keep the .nk files secret.\n", c.Users, c.API, c.Compute)
	if hosts == "" {
		return nil
	}
	var list []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			list = append(list, h)
		}
	}
	f, err := natsauth.NewTLS(dir, list, 2*365*24*time.Hour)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Wrote %s and %s (for -nats-tls-cert and -nats-tls-key of the worker with -nats-listen, valid for %s) and\n%s (for -nats-tls-ca of joining workers).\n", f.Cert, f.Key, strings.Join(list, ", "), f.CA)
	return nil
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
