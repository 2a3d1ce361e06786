// Package service assembles the geostat worker: the object API and auth of
// package server, the compute tasks and their jobs, the file area where
// reports live, Prometheus metrics, the OpenAPI document and the demo
// workspace. The worker's main only parses flags into Options; tests and
// the bench command run the same Service in-process.
package service

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmapi"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/identity"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/metrics"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/openapi"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/geostat-engine/geostat/worker/workspaces"
)

// Version is the worker's version, shown in the OpenAPI document.
const Version = "0.1.0"

// Defaults of Options.
const (
	DefaultMaxJobs  = 2
	DefaultSyncWait = 60 * time.Second
	// DefaultMemoryFraction of the machine's memory bounds the estimated
	// needs of the running jobs together when MaxMemory is 0.
	DefaultMemoryFraction = 0.75
	// DefaultJobRetention is how long finished job records are kept.
	DefaultJobRetention = 30 * 24 * time.Hour
	// DefaultMaxJobsPerUser bounds the queued and running jobs of one user.
	DefaultMaxJobsPerUser = 100
)

// Options configure a Service: the server's options plus the compute
// settings. Zero values mean the defaults.
type Options struct {
	server.Options
	// MaxJobs is the number of jobs that run at once; the rest wait as
	// "requested" (default 2).
	MaxJobs int
	// Threads bounds the cores one job computes with (0 = all).
	Threads int
	// MaxMemory bounds the estimated memory needs of the running jobs
	// together, in bytes (0 = 75 % of the machine's memory): a job above it
	// on its own is refused at submit with 422, one that fits alone but not
	// beside the running jobs waits queued.
	MaxMemory int64
	// BlockModelSweep is the pause between two sweeps of the block model
	// area's jobs (0 = bmapi.SweepInterval): pending jobs past their
	// lifetime expire and old query outputs are deleted.
	BlockModelSweep time.Duration
	// JobRetention is how long finished job records are kept (0 = 30 days;
	// negative = forever). Queued and running jobs are never pruned.
	JobRetention time.Duration
	// MaxJobsPerUser bounds the queued and running jobs of one user; more
	// are refused with 429 (0 = 100, negative = unbounded).
	MaxJobsPerUser int
	// JobMaxAttempts bounds the starts of a job whose api worker stops
	// while it runs (jobs.Options.MaxAttempts; 0: jobs.DefaultMaxAttempts,
	// 3): it runs again until then, and is failed as interrupted after.
	JobMaxAttempts int
	// MetricsToken, when set, is a bearer token that may read /metrics
	// besides the owner tokens (for a scraper that needs no other access).
	MetricsToken string
	// SyncWait is how long a submit of the seed's shape waits for its job
	// before answering 303 (default 60 s).
	SyncWait time.Duration
	// OnJobProgress, when set, is called on each progress report of a
	// running job (jobs.Options.OnProgress); tests use it to inject faults.
	OnJobProgress func(id, task string, percent int)
	// Cluster makes the worker a member of a NATS JetStream cluster that
	// runs large jobs as shards on its compute workers: turning-bands
	// simulations (simjob), knn, idw and kriging estimates onto many
	// targets (tilejob) and location-wise statistics of large ensembles
	// (lwjob) (zero: no cluster, every job runs in this process).
	Cluster ClusterOptions
}

// Service is a running worker.
type Service struct {
	opts    Options
	app     *server.App
	jobs    *jobs.Manager
	files   *files.Store
	metrics *metrics.Metrics
	routes  []string
	openapi []byte
	lock    *server.DataDirLock
	cluster *clusterMember // the NATS connection (and shard queue in a cluster)
	// identity is the one identity store (users, workspaces, roles,
	// tokens) in the NATS server's identity bucket, set when server.New
	// builds the authenticator.
	identity *workspaces.Identity
	// rebuilder makes the Func of a job from its queued request; it is set
	// when the compute routes are registered (then registered is closed).
	rebuilder  func(jobs.Record, []byte) (jobs.Func, error)
	registered chan struct{}
	// blockModels is the block model area (nil with a remote object
	// store: its files travel through the embedded store's blob URLs).
	blockModels *bmapi.Area
}

// New builds the worker. It binds its listener first, so that a busy port
// fails before anything is created in the data directory, then locks the
// data directory (one worker per directory: a second one fails at once,
// naming the directory and the holder's PID), then opens the stores.
func New(opts Options) (_ *Service, err error) {
	if opts.MaxJobs <= 0 {
		opts.MaxJobs = DefaultMaxJobs
	}
	if opts.Cluster.MaxShards <= 0 {
		opts.Cluster.MaxShards = opts.MaxJobs
	}
	if opts.Cluster.Threads <= 0 {
		opts.Cluster.Threads = opts.Threads
	}
	if opts.SyncWait <= 0 {
		opts.SyncWait = DefaultSyncWait
	}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = defaultMaxMemory()
	}
	if opts.Cluster.MaxMemory == 0 {
		opts.Cluster.MaxMemory = opts.MaxMemory
	}
	if opts.DataDir == "" {
		opts.DataDir = server.DefaultDataDir
	}
	if opts.JobRetention == 0 {
		opts.JobRetention = DefaultJobRetention
	}
	if opts.MaxJobsPerUser == 0 {
		opts.MaxJobsPerUser = DefaultMaxJobsPerUser
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Addr == "" {
		opts.Addr = server.DefaultAddr
	}
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", opts.Addr); err != nil {
			return nil, fmt.Errorf("service: listen: %w", err)
		}
	}
	lock, err := server.LockDataDir(opts.DataDir)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("service: %w", err)
	}
	handedOver := false
	defer func() {
		if err != nil {
			if !handedOver {
				ln.Close()
			}
			lock.Release()
		}
	}()
	s := &Service{opts: opts, metrics: metrics.New(), lock: lock}
	// Result blobs are spooled in DATA/tmp, whose leftovers the embedded
	// store clears when it opens.
	if err := os.MkdirAll(s.tmpDir(), 0o755); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	if s.files, err = files.Open(opts.DataDir); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	logger := opts.Logger
	switch opts.Cluster.Role {
	case "", RoleAll, RoleAPI:
	default:
		return nil, fmt.Errorf("service: role %q: a Service is an %q or %q worker (compute workers use RunCompute)", opts.Cluster.Role, RoleAll, RoleAPI)
	}
	// The job records and queue live in NATS JetStream: the embedded
	// server (no port unless -nats-listen) or the one joined with -nats.
	if s.cluster, err = joinCluster(context.Background(), opts.Cluster, opts.DataDir, "geostat-api", opts.Cluster.Enabled(), logger); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	defer func() {
		if err != nil {
			s.closeIdentity()
			s.cluster.close()
		}
	}()
	if opts.Cluster.Enabled() {
		s.cluster.collectOrphans(logger)
	}
	shared, err := s.cluster.openJobs(opts.Cluster)
	if err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	if err := importDirRecords(opts.DataDir, shared, logger); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	id, err := workerID(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	s.registered = make(chan struct{})
	if s.jobs, err = jobs.NewManager(jobs.Options{Shared: shared, ID: id, Rebuild: s.rebuild, OnInterrupted: s.interrupted, MaxJobs: opts.MaxJobs, Logger: logger,
		MaxMemory: opts.MaxMemory, Retention: max(opts.JobRetention, 0), MaxPerUser: max(opts.MaxJobsPerUser, 0),
		MaxAttempts: opts.JobMaxAttempts,
		OnProgress:  opts.OnJobProgress,
		OnFinish:    func(r jobs.Record, d time.Duration) { s.metrics.JobFinished(r.Topic, r.Task, string(r.Status), d) }}); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	s.metrics.WatchJobs(s.jobs.Counts)
	if s.cluster.queue != nil {
		s.metrics.WatchCluster(s.cluster.queue.CleanupFailures)
	}
	so := opts.Options
	onRequest := so.OnRequest
	so.OnRequest = func(method, pattern string, status int, d time.Duration) {
		s.metrics.Request(method, pattern, status, d)
		if onRequest != nil {
			onRequest(method, pattern, status, d)
		}
	}
	extra := so.ExtraRoutes
	so.ExtraRoutes = func(mux server.Router, deps server.Deps) {
		s.register(mux, deps)
		if extra != nil {
			extra(mux, deps)
		}
	}
	// Users, workspaces and roles live in the identity bucket of the same
	// NATS server, shared by every api worker of a cluster; the static
	// entries of the configuration are its read-only principals.
	so.Identity = func(entries []server.TokenEntry) (server.Authenticator, error) {
		ctx, cancel := context.WithTimeout(context.Background(), identityOpenTimeout)
		defer cancel()
		st, err := identity.Open(ctx, s.cluster.nc, identity.Config{Static: workspaces.StaticOf(entries), Replicas: opts.Cluster.Replicas})
		if err != nil {
			return nil, err
		}
		s.identity = workspaces.NewIdentity(st, entries, logger)
		return s.identity, nil
	}
	so.Listener, so.DataDirLock = ln, lock
	if s.files != nil {
		so.URLSigner = s.files.URLSigner() // one key file, read once
	}
	handedOver = true // server.New closes the listener when it fails
	if s.app, err = server.New(so); err != nil {
		s.jobs.Shutdown(context.Background())
		return nil, err
	}
	if err := s.registerExisting(); err != nil {
		s.app.Stop(context.Background())
		s.jobs.Shutdown(context.Background())
		return nil, fmt.Errorf("service: %w", err)
	}
	s.routes = s.app.Routes()
	doc, err := openapi.Document(s.routes, Version)
	if err != nil {
		s.app.Stop(context.Background())
		s.jobs.Shutdown(context.Background())
		return nil, err
	}
	if s.openapi, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return nil, err
	}
	if opts.Cluster.Enabled() {
		if opts.Cluster.Role == RoleAPI {
			s.cluster.reap()
		} else {
			s.cluster.work(logger, opts.Cluster.Threads)
		}
	}
	return s, nil
}

// register adds the compute, file, report and operations routes.
func (s *Service) register(mux server.Router, deps server.Deps) {
	env := &tasks.Env{
		Store:     &tasks.StoreAdapter{Store: deps.Store, TempDir: s.tmpDir()},
		Threads:   s.opts.Threads,
		MaxMemory: s.opts.MaxMemory,
		Logger:    deps.Logger,
		PublicURL: s.opts.PublicURL,
		Files:     reportFiles{fs: s.files, expiry: urlExpiry(s.opts.URLExpiry)},
		FreeDisk:  func() (int64, error) { return freeDisk(s.opts.DataDir) },
	}
	if _, embedded := deps.Store.(*store.Embedded); embedded && s.files != nil {
		area, err := bmapi.New(bmapi.Options{Dir: filepath.Join(s.opts.DataDir, "blockmodels"), TempDir: s.tmpDir(),
			Signer: s.files.URLSigner(), Jobs: s.jobs}, deps.Store, deps.Logger)
		if err != nil {
			deps.Logger.Error("the block model area cannot open its store; its routes are not served", "err", err)
		} else {
			s.blockModels = area
			env.BlockModels = blockModelTasks{area: area}
		}
	}
	if s.opts.Cluster.Enabled() {
		env.Cluster = s.cluster.runner(s.opts.Cluster)
		env.Tiles = s.cluster.tiles(s.opts.Cluster)
		env.Ensembles = s.cluster.ensembles(s.opts.Cluster)
	}
	co := tasks.ComputeOptions{Env: env, Jobs: s.jobs, SyncWait: s.opts.SyncWait, OnSubmit: s.metrics.Submitted, Roles: s.identity}
	tasks.Register(mux, deps, co)
	s.rebuilder = tasks.Rebuilder(co)
	if s.blockModels != nil {
		s.blockModels.Register(mux, deps)
	}
	close(s.registered)
	files.Register(mux, deps, s.files, files.Options{URLExpiry: s.opts.URLExpiry, MaxUploadBytes: s.opts.MaxBlobBytes})
	workspaces.Register(mux, deps, s.identity)
	mux.Handle("GET /compute/orgs/{org_id}/reports/{workspace_id}/{file_id}", deps.Auth.RequireWorkspace(server.RoleViewer, http.HandlerFunc(s.dashboard)))
	mux.Handle("GET /metrics", s.metricsAccess(deps.Auth, s.metrics.Handler()))
	mux.Handle("GET /openapi.json", deps.Auth.Authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.openapi)
	})))
}

// urlExpiry is the validity of signed URLs (Options.URLExpiry or its
// default).
func urlExpiry(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return server.DefaultURLExpiry
}

// metricsAccess lets through the -metrics-token and tokens that own every
// workspace of some organisation (operators); any other valid token is 403,
// no token 401.
func (s *Service) metricsAccess(auth *server.Auth, h http.Handler) http.Handler {
	metricsDigest := sha256.Sum256([]byte(s.opts.MetricsToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.MetricsToken != "" {
			scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			d := sha256.Sum256([]byte(strings.TrimSpace(tok)))
			if strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(d[:], metricsDigest[:]) == 1 {
				h.ServeHTTP(w, r)
				return
			}
		}
		p, err := auth.Authenticate(r)
		if err != nil {
			server.WriteProblem(w, r, s.opts.Logger, err)
			return
		}
		if !p.OwnsAnOrg() {
			server.WriteProblem(w, r, s.opts.Logger, store.NewError(http.StatusForbidden, store.TypeInsufficient, "Insufficient Role.",
				"/metrics needs an owner token (the owner of every workspace of an organisation) or the -metrics-token"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// identityOpenTimeout bounds the opening of the identity store (creating
// its bucket and loading it).
const identityOpenTimeout = 30 * time.Second

// closeIdentity stops the identity store's watch (its connection is the
// cluster member's).
func (s *Service) closeIdentity() {
	if s.identity != nil {
		s.identity.Store().Close()
	}
}

// registerExisting registers, on the first start with the identity store,
// every workspace id found in the object store, the file area, the job
// records and the tokens file, so that existing data keeps working (later
// starts do nothing: a workspace is then created over HTTP, or registered
// by a static "*" principal's first use of it).
func (s *Service) registerExisting() error {
	st := s.identity.Store()
	if !st.NeedsRegistration() {
		return nil
	}
	ids := s.identity.StaticWorkspaces()
	add := func(wss []store.Workspace) {
		for _, w := range wss {
			ids[w.Org] = append(ids[w.Org], w.ID)
		}
	}
	if e, ok := s.app.Store().(*store.Embedded); ok {
		add(e.Workspaces())
	}
	if s.files != nil {
		add(s.files.Workspaces())
	}
	orgs := make([]string, 0, len(ids))
	for org := range ids {
		orgs = append(orgs, org)
	}
	for _, org := range orgs { // a job's org holds its input objects
		for _, r := range s.jobs.List(org) {
			if r.Workspace != "" {
				ids[org] = append(ids[org], r.Workspace)
			}
		}
	}
	for org, wss := range ids { // ids of other shapes are not workspaces
		ids[org] = slices.DeleteFunc(wss, func(w string) bool { return !objects.IsUUID(w) })
		if !objects.IsUUID(org) || len(ids[org]) == 0 {
			delete(ids, org)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), identityOpenTimeout)
	defer cancel()
	done, err := st.RegisterExisting(ctx, ids)
	if err != nil {
		return fmt.Errorf("registering the existing workspaces: %w", err)
	}
	s.opts.Logger.Info("identity store: registered the workspaces of the existing data (first start)", "workspaces", len(done))
	return nil
}

func (s *Service) tmpDir() string { return filepath.Join(s.opts.DataDir, "tmp") }

// dashboard serves the latest version of a stored report as a page, under
// the stored-content headers (nosniff, a policy that runs no script), for
// the file may be any file of the workspace, uploaded by any editor.
func (s *Service) dashboard(w http.ResponseWriter, r *http.Request) {
	rec, content, err := s.files.Get(r.Context(), r.PathValue("org_id"), r.PathValue("workspace_id"), r.PathValue("file_id"), "", "")
	if err != nil {
		server.WriteProblem(w, r, s.opts.Logger, err)
		return
	}
	defer content.Close()
	ct := rec.ContentType
	if ct == "" {
		ct = "text/html; charset=utf-8"
	}
	server.SetStoredContentHeaders(w.Header(), ct, server.Inline, rec.Name)
	http.ServeContent(w, r, rec.Name, rec.CreatedAt, content)
}

// blockModelTasks is the block model area as the compute tasks use it
// (tasks.BlockModels).
type blockModelTasks struct{ area *bmapi.Area }

// Open implements tasks.BlockModels.
func (b blockModelTasks) Open(ctx context.Context, org, workspace, modelUUID string) (*tasks.BlockModel, error) {
	g, err := b.area.OpenModel(org, workspace, modelUUID)
	if errors.Is(err, bmapi.ErrModelNotFound) {
		return nil, fmt.Errorf("%w: %w", tasks.ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	return &tasks.BlockModel{Store: b.area.Store(), ModelID: strings.ToLower(modelUUID), Geometry: g}, nil
}

// WriteColumn implements tasks.BlockModels: the model version, then the
// linked object's version (bmapi.Area.WriteColumn).
func (b blockModelTasks) WriteColumn(ctx context.Context, m *tasks.BlockModel, w bmjob.ColumnWrite, by store.User) (*tasks.BlockModelWrite, error) {
	w.ModelID = m.ModelID
	v, objectID, objectVersion, err := b.area.WriteColumn(ctx, w, by)
	if err != nil {
		return nil, err
	}
	return &tasks.BlockModelWrite{Version: v, ObjectID: objectID, ObjectVersionID: objectVersion}, nil
}

// reportFiles stores the validation reports in the file area.
type reportFiles struct {
	fs     *files.Store
	expiry time.Duration // of the signed view URLs
}

func (f reportFiles) ViewURL(base, org, ws, id, version string) (string, error) {
	return f.fs.ViewURL(base, org, ws, id, version, f.expiry)
}

func (f reportFiles) PutFile(ctx context.Context, org, ws, path string, content io.Reader, contentType string, by store.User) (string, string, error) {
	rec, err := f.fs.Put(ctx, org, ws, path, content, contentType, by)
	if err != nil {
		return "", "", err
	}
	return rec.ID, rec.VersionID, nil
}

func (f reportFiles) FileURL(base, org, ws, id, version string) string {
	u := files.FileURL(base, &files.Record{ID: id, Org: org, Workspace: ws})
	if version != "" {
		u += "?version_id=" + version
	}
	return u
}

func (f reportFiles) CheckPath(p string) error { return files.CheckPath(p) }

func (f reportFiles) DashboardURL(base, org, ws, id string) string {
	return strings.TrimRight(base, "/") + "/compute/orgs/" + org + "/reports/" + ws + "/" + id
}

// Run serves until ctx ends. Then the HTTP server stops accepting requests
// while the running jobs get until the shutdown timeout to finish; jobs
// still running after it are cancelled and put back in the shared queue to
// run again (up to Options.JobMaxAttempts starts), and queued ones are put
// back to run after the restart or on another worker.
func (s *Service) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.app.Run(ctx) }()
	stopSweeps := s.sweepBlockModels(ctx)
	select {
	case err := <-errc: // the server failed on its own
		stopSweeps()
		sctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout())
		defer cancel()
		s.jobs.Shutdown(sctx)
		s.closeIdentity()
		s.cluster.close()
		s.lock.Release()
		return err
	case <-ctx.Done():
	}
	stopSweeps()
	// The server shuts down (app.Run saw ctx) while the jobs wind down, so
	// synchronous submits waiting for a job get its outcome.
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout())
	defer cancel()
	s.jobs.Shutdown(sctx)
	err := <-errc
	s.closeIdentity()
	s.cluster.close()
	// The data directory is released only once no job can write to it.
	s.lock.Release()
	return err
}

// sweepBlockModels runs the block model area's sweeps (bmapi.Area.RunSweeps:
// expired uploads, old query outputs) once its routes are registered, until
// ctx ends or the returned stop is called; stop returns once the sweeps
// have stopped.
func (s *Service) sweepBlockModels(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-s.registered:
		case <-ctx.Done():
			return
		}
		if s.blockModels != nil {
			s.blockModels.RunSweeps(ctx, s.opts.BlockModelSweep)
		}
	}()
	return func() { cancel(); <-done }
}

func (s *Service) shutdownTimeout() time.Duration {
	if s.opts.ShutdownTimeout > 0 {
		return s.opts.ShutdownTimeout
	}
	return server.DefaultShutdownTimeout
}

// Stop stops the HTTP server and then the jobs (bounded by ctx).
func (s *Service) Stop(ctx context.Context) error {
	err := s.app.Stop(ctx)
	s.jobs.Shutdown(ctx)
	s.closeIdentity()
	s.cluster.close()
	s.lock.Release()
	return err
}

// URL returns the worker's base URL (http://host:port).
func (s *Service) URL() string { return s.app.URL() }

// App returns the underlying server application.
func (s *Service) App() *server.App { return s.app }

// BlockModels returns the block model area (nil when the worker has a
// remote object store).
func (s *Service) BlockModels() *bmapi.Area { return s.blockModels }

// Jobs returns the job manager.
func (s *Service) Jobs() *jobs.Manager { return s.jobs }

// Routes returns the route patterns the worker serves.
func (s *Service) Routes() []string { return s.routes }

// OpenAPI returns the OpenAPI document.
func (s *Service) OpenAPI() []byte { return s.openapi }

// SeedDemo stores the demo workspace (see package demo) in the object
// store, and the demo's block model in the block model area. Objects of
// the demo that exist already are kept, so running it on a data directory
// it seeded before reuses the workspace. It returns the number of objects
// and models it stored (0: the whole demo was there).
func (s *Service) SeedDemo(ctx context.Context) (int, error) {
	c, err := demo.Case()
	if err != nil {
		return 0, err
	}
	set, err := demo.Build(c)
	if err != nil {
		return 0, err
	}
	n, err := demo.Seed(ctx, s.app.Store(), store.Workspace{Org: demo.Org, ID: demo.Workspace}, server.LocalUser, set)
	if err != nil || s.blockModels == nil {
		return n, err
	}
	// The demo's block model, in the block model area.
	if _, ok, err := s.blockModels.FindModel(demo.Org, demo.Workspace, demo.BlockModelName); err != nil || ok {
		return n, err
	}
	body, err := demo.BlockModelBody(c)
	if err != nil {
		return n, err
	}
	if _, err := s.blockModels.CreateModel(ctx, demo.Org, demo.Workspace, body, server.LocalUser); err != nil {
		return n, fmt.Errorf("the demo's block model: %w", err)
	}
	return n + 1, nil
}

// DemoBlockModel returns the bm_uuid of the demo's block model (ok false
// when SeedDemo made none: a worker without the block model area).
func (s *Service) DemoBlockModel() (string, bool) {
	if s.blockModels == nil {
		return "", false
	}
	rec, ok, err := s.blockModels.FindModel(demo.Org, demo.Workspace, demo.BlockModelName)
	if err != nil || !ok {
		return "", false
	}
	return rec.BMUUID, true
}

// defaultMaxMemory is the memory limit of a worker given none:
// DefaultMemoryFraction of the machine's.
func defaultMaxMemory() int64 {
	return int64(DefaultMemoryFraction * float64(machineMemory()))
}

// machineMemory returns MemTotal from /proc/meminfo in bytes (0 when
// unknown).
func machineMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// freeDisk returns the bytes available to the worker in dir's file system.
func freeDisk(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
