package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
	"github.com/geostat-engine/geostat/worker/jobs"
)

// Roles of a worker (-role).
const (
	// RoleAll serves HTTP, assembles and, in a cluster, computes shards.
	RoleAll = "all"
	// RoleAPI serves HTTP and assembles; it computes no shards.
	RoleAPI = "api"
	// RoleCompute only computes shards (see RunCompute).
	RoleCompute = "compute"
)

// ClusterOptions configure the NATS JetStream cluster a worker belongs to.
// With both NATS and Listen empty the worker embeds a NATS server that
// listens on no port (its job records and queue live there, under
// DATA/nats) and runs every job in its own process.
type ClusterOptions struct {
	// NATS is a comma-separated list of NATS server URLs to join instead of
	// embedding a server.
	NATS string
	// Listen is the HOST:PORT the embedded server (state under
	// DATA/nats) accepts other workers on. It needs Users (or
	// InsecureNoAuth).
	Listen string
	// Users is the users file of a listening worker (-nats-users): the
	// public NKeys the embedded server accepts and their roles (package
	// natsauth). Written by natsauth.NewCredentials (-nats-new-credentials).
	Users string
	// Credentials is the NKey seed file a joining worker signs in with
	// (-nats-credentials): an api credential for roles all and api, a
	// compute credential for role compute.
	Credentials string
	// TLSCert and TLSKey are the certificate and key of a listening
	// worker's port (-nats-tls-cert, -nats-tls-key): every connection
	// then uses TLS. TLSCA is the CA certificate a joining worker verifies
	// the server with (-nats-tls-ca), and then connects with TLS.
	TLSCert, TLSKey, TLSCA string
	// InsecureNoAuth lets a worker listen without Users
	// (-nats-insecure-no-auth): anyone reaching the port can read every
	// queued request and run any job. For a laptop only; logged loudly.
	InsecureNoAuth bool
	// Role is RoleAll (default) or RoleAPI for a Service.
	Role string
	// ShardBytes bounds the ensemble values of one shard (0: 200 MiB).
	ShardBytes int64
	// ShardCells is the number of targets of one knn, idw or kriging
	// shard, rounded up to a multiple of 4,096 (0: 1,048,576); an estimate
	// onto more targets runs as shards, and so do the location-wise
	// statistics of an ensemble of more cells (one shard per row group).
	ShardCells int
	// AckWait is the shard ack deadline, after which a shard held by a
	// dead or stalled compute worker is redelivered (0: 60 s). Every
	// worker of a cluster must use the same.
	AckWait time.Duration
	// Replicas of the JetStream stream, bucket and object store (0: 1);
	// 3 or 5 on a NATS cluster of as many servers.
	Replicas int
	// Threads bounds the cores one shard computes with (0 = all); the
	// worker's -threads.
	Threads int
	// JobAckWait is the time after which a job taken by an api worker that
	// went silent (killed, or stalled) is taken by another (0: 60 s): a
	// job that had started runs again there while it has attempts left
	// (Options.JobMaxAttempts), one that had not simply runs there. Every
	// worker of a cluster must use the same.
	JobAckWait time.Duration
	// MaxShards is the number of shards this process computes at once
	// (0: 1); the worker's -max-jobs. A Service of role all takes
	// Options.Threads and Options.MaxJobs when these are zero.
	MaxShards int
	// MaxMemory bounds the memory estimates of the shards this process
	// holds at once (computing or uploading) and, on an api worker, of
	// any one shard of a job it submits (a job with a larger shard fails
	// before anything is queued); the worker's -max-memory (0: 75 % of the
	// machine's memory; a Service takes Options.MaxMemory).
	MaxMemory int64
}

// Enabled reports whether the worker is a member of a cluster that other
// workers can join (the shards of large simulations, estimates and
// location-wise statistics run on it: simjob, tilejob, lwjob).
func (o ClusterOptions) Enabled() bool { return o.NATS != "" || o.Listen != "" }

// clusterMember is a worker's connection to the cluster.
type clusterMember struct {
	ns    *server.Server // embedded server, or nil
	nc    *nats.Conn
	queue *cluster.Queue
	wg    sync.WaitGroup
	stop  context.CancelFunc
	once  sync.Once
}

// joinCluster starts the embedded server (under dataDir/nats) or connects
// to o.NATS, and opens the shard queue when shards is set: a worker of
// role compute binds to the queue an api worker created, waiting for it
// until ctx ends; others create it, waiting at most a minute.
func joinCluster(ctx context.Context, o ClusterOptions, dataDir, name string, shards bool, logger *slog.Logger) (_ *clusterMember, err error) {
	if logger == nil {
		logger = slog.Default()
	}
	m := &clusterMember{}
	defer func() {
		if err != nil {
			m.close()
		}
	}()
	if err := o.checkAuthFlags(); err != nil {
		return nil, err
	}
	role := natsauth.RoleAPI
	if o.Role == RoleCompute {
		role = natsauth.RoleCompute
	}
	if o.NATS != "" {
		opts := []nats.Option{nats.CustomInboxPrefix(natsauth.InboxPrefix(role)), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			logger.Error("NATS", "err", err)
		}), nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			// Shards held meanwhile are redelivered to others once their
			// ack wait passes without a heartbeat.
			logger.Warn("lost the NATS connection; reconnecting", "nats", o.NATS, "err", err)
		}), nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("NATS connection regained", "nats", nc.ConnectedUrlRedacted())
		})}
		if o.Credentials != "" {
			key, err := natsauth.ReadKey(o.Credentials)
			if err != nil {
				return nil, fmt.Errorf("-nats-credentials: %w", err)
			}
			opts = append(opts, key.Option())
		}
		if o.TLSCA != "" {
			tlsOpt, err := natsauth.ClientTLS(o.TLSCA)
			if err != nil {
				return nil, fmt.Errorf("-nats-tls-ca: %w", err)
			}
			opts = append(opts, tlsOpt)
		}
		if m.nc, err = cluster.Connect(o.NATS, name, opts...); err != nil {
			if natsauth.IsAuthError(err) {
				if o.Credentials == "" {
					return nil, fmt.Errorf("joining NATS at %s: the server requires a credential: give -nats-credentials FILE (the %s.nk written by -nats-new-credentials): %w", o.NATS, role, err)
				}
				return nil, fmt.Errorf("joining NATS at %s: the server refused the credential of -nats-credentials %s (is its public key in the listening worker's -nats-users file?): %w", o.NATS, o.Credentials, err)
			}
			return nil, fmt.Errorf("joining NATS at %s: %w", o.NATS, err)
		}
	} else {
		so := cluster.ServerOptions{Name: "geostat", Dir: filepath.Join(dataDir, "nats"), Listen: o.Listen, InsecureNoAuth: o.InsecureNoAuth}
		var local []nats.Option
		if o.Listen != "" {
			if o.Users != "" {
				if so.Users, err = natsauth.ReadUsers(o.Users); err != nil {
					return nil, fmt.Errorf("-nats-users: %w", err)
				}
				// This worker's own connection signs in with a key that
				// never leaves the process.
				key, err := natsauth.NewKey()
				if err != nil {
					return nil, err
				}
				so.Users = append(so.Users, natsauth.User{Name: "local", Role: natsauth.RoleAPI, NKey: key.Public})
				local = append(local, key.Option())
			} else {
				logger.Warn("INSECURE: -nats-insecure-no-auth: the NATS port accepts anyone who reaches it; they can read every queued request (user, body), queue jobs in any user's name, run any job and delete the queues. Use -nats-users on any network but a private laptop.", "nats_listen", o.Listen)
			}
			if o.TLSCert != "" {
				if so.TLS, err = natsauth.ServerTLS(o.TLSCert, o.TLSKey); err != nil {
					return nil, fmt.Errorf("-nats-tls-cert, -nats-tls-key: %w", err)
				}
			}
		}
		if m.ns, err = cluster.StartServer(so); err != nil {
			return nil, fmt.Errorf("starting the embedded NATS server: %w", err)
		}
		if m.nc, err = cluster.ConnectInProcess(m.ns, name, local...); err != nil {
			return nil, err
		}
	}
	if !shards {
		return m, nil
	}
	if role != natsauth.RoleCompute {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	if m.queue, err = cluster.Open(ctx, m.nc, cluster.Config{AckWait: o.AckWait, Replicas: o.Replicas, Concurrency: o.MaxShards, MaxMemory: o.MaxMemory, Bind: role == natsauth.RoleCompute, Logger: logger, WorkerID: shardHolderID(name)}); err != nil {
		return nil, fmt.Errorf("opening the shard queue: %w", err)
	}
	return m, nil
}

// checkAuthFlags refuses options that do not go together: a listening
// worker without users (unless InsecureNoAuth), options of a listening
// worker on a joining one and the other way round.
func (o ClusterOptions) checkAuthFlags() error {
	switch {
	case o.NATS != "" && o.Listen != "":
		return errors.New("-nats and -nats-listen exclude each other: a worker either joins a NATS server or embeds one")
	case o.NATS != "":
		if o.Users != "" || o.TLSCert != "" || o.TLSKey != "" || o.InsecureNoAuth {
			return errors.New("-nats-users, -nats-tls-cert, -nats-tls-key and -nats-insecure-no-auth are for the worker whose embedded server listens (-nats-listen); a worker joining with -nats gives -nats-credentials and -nats-tls-ca")
		}
	case o.Listen != "":
		if o.Credentials != "" || o.TLSCA != "" {
			return errors.New("-nats-credentials and -nats-tls-ca are for a worker joining with -nats; the listening worker (-nats-listen) gives -nats-users (and -nats-tls-cert, -nats-tls-key)")
		}
		if o.Users == "" && !o.InsecureNoAuth {
			return fmt.Errorf("-nats-listen %s needs -nats-users FILE: without credentials anyone who reaches the port could read every queued request and run any job. Write the users file and the credentials of joining workers with: go run ./worker -nats-new-credentials DIR (then -nats-users DIR/users.json here, -nats-credentials DIR/compute.nk or DIR/api.nk on joining workers); -nats-insecure-no-auth opts out, on a private laptop only", o.Listen)
		}
		if o.Users != "" && o.InsecureNoAuth {
			return errors.New("-nats-users and -nats-insecure-no-auth exclude each other")
		}
		if (o.TLSCert == "") != (o.TLSKey == "") {
			return errors.New("-nats-tls-cert and -nats-tls-key go together")
		}
	default:
		if o.Users != "" || o.Credentials != "" || o.TLSCert != "" || o.TLSKey != "" || o.TLSCA != "" || o.InsecureNoAuth {
			return errors.New("-nats-users, -nats-credentials, -nats-tls-* and -nats-insecure-no-auth need -nats-listen or -nats")
		}
	}
	return nil
}

// collectOrphans deletes the Object Store chunks no result refers to
// (puts of compute workers killed half-way) when an api worker starts, and
// logs how many it found.
func (m *clusterMember) collectOrphans(logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := m.queue.CollectOrphans(ctx)
	if err != nil {
		logger.Warn("collecting orphan shard-result chunks", "err", err)
		return
	}
	logger.Info("collected orphan shard-result chunks", "objects", n)
}

// work runs shards, each with at most threads cores (0 = all), until close.
func (m *clusterMember) work(logger *slog.Logger, threads int) {
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.queue.WorkKinds(ctx, computeShards(logger, threads, m.queue), shardLogger(logger)); err != nil {
			logger.Error("shard worker stopped", "err", err)
		}
	}()
}

// reap fails the jobs of shards that reached their maximum deliveries,
// until close (for an api worker, which runs no shard loop).
func (m *clusterMember) reap() {
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.queue.Reap(ctx)
	}()
}

// close stops the shard loop and closes the connection and the embedded
// server.
func (m *clusterMember) close() {
	if m == nil {
		return
	}
	m.once.Do(m.shutdown)
}

func (m *clusterMember) shutdown() {
	if m.stop != nil {
		m.stop()
		m.wg.Wait()
	}
	if m.nc != nil {
		m.nc.Close()
	}
	if m.ns != nil {
		m.ns.Shutdown()
		m.ns.WaitForShutdown()
	}
}

func (m *clusterMember) runner(o ClusterOptions) *simjob.Runner {
	return &simjob.Runner{Queue: m.queue, Sizes: shard.Sizes{ShardBytes: o.ShardBytes}, MaxMemory: o.MaxMemory, Threads: o.Threads, Notice: jobs.Notify}
}

func (m *clusterMember) tiles(o ClusterOptions) *tilejob.Runner {
	return &tilejob.Runner{Queue: m.queue, TileTargets: o.ShardCells, Notice: jobs.Notify}
}

func (m *clusterMember) ensembles(o ClusterOptions) *lwjob.Runner {
	return &lwjob.Runner{Queue: m.queue, Cells: o.ShardCells, Notice: jobs.Notify}
}

// shardKind computes and sizes the shards of one kind of cluster job.
type shardKind interface {
	Compute(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error)
	Estimate(ctx context.Context, job string, spec json.RawMessage, key string) (int64, error)
}

// computeShards returns the shard handlers of a worker by kind (the
// ShardKind of simjob, tilejob and lwjob; a shard of another kind fails its
// job with cluster.ErrUnknownKind): each logs the shards it starts and
// computes them with at most threads cores (0 = all), and sizes them.
func computeShards(logger *slog.Logger, threads int, q *cluster.Queue) map[string]cluster.Kind {
	kinds := map[string]cluster.Kind{}
	for name, k := range map[string]shardKind{
		simjob.ShardKind:  &simjob.Handler{Threads: threads},
		tilejob.ShardKind: &tilejob.Handler{Inputs: q},
		lwjob.ShardKind:   &lwjob.Handler{Inputs: q},
	} {
		kinds[name] = cluster.Kind{
			Compute: func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
				logger.Info("shard started", "job", job, "shard", key, "kind", name)
				if threads > 0 {
					ctx = geostat.WithWorkers(ctx, threads)
				}
				return k.Compute(ctx, job, spec, key)
			},
			Estimate: k.Estimate,
		}
	}
	return kinds
}

// shardHolderID names a process in the lease records of the shards it holds:
// name, the host and the process id.
func shardHolderID(name string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s-%d", name, host, os.Getpid())
}

// shardLogger logs what happened to every shard message.
func shardLogger(logger *slog.Logger) func(cluster.Event) {
	return func(ev cluster.Event) {
		args := []any{"job", ev.Job, "shard", ev.Shard, "delivery", ev.Delivery, "outcome", ev.Outcome, "kind", ev.Kind}
		var pe *geostat.PanicError
		if errors.As(ev.Err, &pe) {
			logger.Error("shard failed: internal error (panic)", append(args, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))...)
			return
		}
		if ev.Err != nil {
			logger.Warn("shard", append(args, "err", ev.Err)...)
			return
		}
		logger.Info("shard", args...)
	}
}

// RunCompute runs a compute-only worker (-role compute): it joins the NATS
// server or cluster at o.NATS and computes shards until ctx ends, serving
// no HTTP: o.MaxShards at a time (0: 1), each with at most o.Threads cores
// (0 = all), their memory estimates within o.MaxMemory. A shard's spec carries every input, so it needs no object
// store.
func RunCompute(ctx context.Context, o ClusterOptions, logger *slog.Logger) error {
	if o.Listen != "" {
		return errors.New("-role compute joins a NATS server (-nats); it embeds none (-nats-listen)")
	}
	if o.NATS == "" {
		return errors.New("-role compute needs -nats URL of the api worker's NATS server or of a NATS cluster")
	}
	if logger == nil {
		logger = slog.Default()
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = defaultMaxMemory()
	}
	logger.Info("geostat compute worker joining", "nats", o.NATS)
	m, err := joinCluster(ctx, o, "", "geostat-compute", true, logger)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer m.close()
	logger.Info("geostat compute worker running", "nats", o.NATS, "max_shards", max(o.MaxShards, 1), "threads", o.Threads, "max_memory", o.MaxMemory)
	err = m.queue.WorkKinds(ctx, computeShards(logger, o.Threads, m.queue), shardLogger(logger))
	logger.Info("geostat compute worker stopped")
	return err
}

// NATSStats returns the message and byte counters of the worker's NATS
// connection (to its embedded server, or to the one joined with -nats)
// since it connected: every request and publish of the job records and
// queue (and of the shard queue in a cluster) goes through it, and every
// reply, acknowledgement and delivery comes back on it. The bench's
// jobs-overhead scenario divides their growth by the jobs it ran.
func (s *Service) NATSStats() nats.Statistics { return s.cluster.nc.Stats() }
