package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/geostat-engine/geostat/worker/problem"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/urlsign"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/store"
)

// Defaults of Options.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultDataDir         = "./geostat-data"
	DefaultMaxObjectBytes  = 64 << 20
	DefaultMaxBlobBytes    = 16 << 30
	DefaultURLExpiry       = time.Hour
	DefaultMaxConcurrent   = 64
	DefaultMaxPerPrincipal = 16
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configures the worker application. The zero value of each field
// means its default.
type Options struct {
	// Addr is the listen address (default 127.0.0.1:8080; port 0 picks a
	// free port, see App.Addr).
	Addr string
	// DataDir holds the embedded store, the development token and the URL
	// signing key (default ./geostat-data).
	DataDir string
	// TokensFile is a JSON tokens file (see TokenEntry). Without it the
	// GEOSTAT_TOKEN environment variable gives one owner-of-everything token;
	// without both a development token is generated in DataDir/dev-token.
	TokensFile string
	// ObjectsURL and ObjectsToken select a remote Geoscience Object API as
	// the store (base URL, e.g. https://hub.example.com, and bearer token).
	// The worker then serves no object routes of its own.
	ObjectsURL   string
	ObjectsToken string
	// SchemasDir overrides the evo schemas embedded in the binary with a
	// directory (the evo-schemas directory or its schema subdirectory);
	// empty means $GEOSTAT_SCHEMAS_DIR (read with Getenv) and, without it,
	// the embedded set. Every stored object is validated: a directory that
	// holds no schemas is an error of New.
	SchemasDir string
	// PublicURL is the base of the URLs the worker hands out (signed blob
	// URLs, object links); empty means the scheme and Host of each request.
	PublicURL string
	// MaxObjectBytes bounds object bodies (413 above); MaxBlobBytes bounds
	// uploaded blobs and blocks.
	MaxObjectBytes int64
	MaxBlobBytes   int64
	// URLExpiry is the validity of signed upload and download URLs.
	URLExpiry time.Duration
	// MaxConcurrent is the pool of in-flight requests shared fairly among
	// the callers with requests in flight: with n of them, each may hold
	// min(MaxPerPrincipal, MaxConcurrent/n) (at least 1); a caller at its
	// share waits briefly for one of its requests to finish, then gets 429.
	// A caller under its share is admitted even when callers that arrived
	// earlier still hold more than their new shares, up to a hard ceiling
	// of 5/4 MaxConcurrent (503 above, after a brief wait). /healthz is
	// exempt.
	MaxConcurrent int
	// MaxPerPrincipal bounds the in-flight requests of one caller (429
	// above), so that one token cannot take every slot: callers are told
	// apart by their Authorization header (its digest), callers without
	// one by their address. A handler that waits without using the server
	// (a synchronous submit waiting for its job) gives its slots back with
	// Detach.
	MaxPerPrincipal int
	// ShutdownTimeout bounds the graceful shutdown Run performs when its
	// context ends.
	ShutdownTimeout time.Duration
	// Listener, when set, is an already bound listener to serve on (Addr is
	// then not used); the App closes it on Stop or when New fails. Without
	// it New binds Addr, before it touches the data directory.
	Listener net.Listener
	// DataDirLock, when set, is the caller's lock of DataDir (LockDataDir);
	// the caller releases it. Without it New takes the lock itself (right
	// after binding the listener) and Stop releases it.
	DataDirLock *DataDirLock
	// URLSigner, when set, signs and checks the blob URLs: the signer the
	// caller already loaded for the file area (files.Store.URLSigner), so
	// that the data directory's one key file is read once. Without it New
	// loads the key of DataDir itself.
	URLSigner *urlsign.Signer
	// Logger receives structured logs (default: text to stderr).
	Logger *slog.Logger
	// Stdout receives the development-token hint (default os.Stderr).
	Stdout io.Writer
	// Getenv reads the environment (default os.Getenv); tests override it.
	Getenv func(string) string
	// OnRequest, when set, is told of every request once it is answered:
	// the method, the route pattern that served it ("" when none matched),
	// the status and the duration (for metrics; never the raw path).
	OnRequest func(method, pattern string, status int, d time.Duration)
	// Identity, when set, builds the authenticator of every request from
	// the static entries of the configuration (TokensFile, GEOSTAT_TOKEN or
	// the development token, already checked): the worker's identity store,
	// which also knows the tokens issued over HTTP and answers every role
	// question live. Without it the static entries alone authenticate, and
	// any UUID is a workspace.
	Identity func(static []TokenEntry) (Authenticator, error)
	// ExtraRoutes, when set, registers more routes (the compute tasks) on the
	// worker's mux after the built-in ones; deps gives the store, the
	// authenticator and helpers. Use Auth.RequireOrg or
	// Auth.RequireWorkspace to protect them and WriteProblem for errors.
	ExtraRoutes func(mux Router, deps Deps)
}

// Router registers routes: an *http.ServeMux, or the recording wrapper the
// App hands to ExtraRoutes so that App.Routes lists every pattern served.
type Router interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// recordingMux registers on a ServeMux and remembers the patterns.
type recordingMux struct {
	mux      *http.ServeMux
	patterns []string
}

func (m *recordingMux) Handle(pattern string, h http.Handler) {
	m.mux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

func (m *recordingMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.mux.HandleFunc(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

// Deps is what ExtraRoutes receives to build more routes.
type Deps struct {
	// Store is the object store (embedded or remote).
	Store store.Store
	// Auth authenticates requests (Auth.RequireOrg, Auth.RequireWorkspace,
	// PrincipalFrom).
	Auth *Auth
	// Schemas validates object documents (never nil).
	Schemas *objects.Schemas
	// Logger is the application's logger.
	Logger *slog.Logger
	// BaseURL returns the public base URL (scheme and host) of a request,
	// for building object reference URLs in responses.
	BaseURL func(r *http.Request) string
}

func (o *Options) setDefaults() {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if o.MaxObjectBytes == 0 {
		o.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if o.MaxBlobBytes == 0 {
		o.MaxBlobBytes = DefaultMaxBlobBytes
	}
	if o.URLExpiry == 0 {
		o.URLExpiry = DefaultURLExpiry
	}
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.MaxPerPrincipal == 0 {
		o.MaxPerPrincipal = DefaultMaxPerPrincipal
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if o.Stdout == nil {
		o.Stdout = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
}

func (o *Options) validate() error {
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fmt.Errorf("addr %q: %w", o.Addr, err)
	}
	if o.MaxObjectBytes < 0 || o.MaxBlobBytes < 0 || o.MaxConcurrent < 0 || o.MaxPerPrincipal < 0 || o.URLExpiry < 0 || o.ShutdownTimeout < 0 {
		return errors.New("limits must not be negative")
	}
	if (o.ObjectsURL == "") != (o.ObjectsToken == "") {
		return errors.New("objects-url and objects-token go together")
	}
	if o.ObjectsURL != "" && !strings.HasPrefix(o.ObjectsURL, "http://") && !strings.HasPrefix(o.ObjectsURL, "https://") {
		return fmt.Errorf("objects-url %q: want an http(s) URL", o.ObjectsURL)
	}
	return nil
}

// App is the worker: the object API over the embedded store (or a client of a
// remote one), authentication, signed blob URLs, /healthz and whatever
// ExtraRoutes adds. Create it with New, serve with Run, stop with Stop.
type App struct {
	opts     Options
	logger   *slog.Logger
	store    store.Store
	embedded *store.Embedded // nil with a remote store
	schemas  *objects.Schemas
	auth     *Auth
	signer   *signer
	mux      *http.ServeMux
	routes   *recordingMux
	handler  http.Handler
	ln       net.Listener
	srv      *http.Server
	limits   *limiter

	lock     *DataDirLock // released by Stop when New took it
	stopOnce sync.Once
	stopErr  error
	running  chan struct{}
}

// New builds the application. It binds its listener first (so Addr is known
// before Run, and a busy port fails before anything is created in the data
// directory), then locks the data directory (one worker per directory, see
// LockDataDir), then opens the store.
func New(opts Options) (_ *App, err error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		if opts.Listener != nil {
			opts.Listener.Close()
		}
		return nil, fmt.Errorf("server: %w", err)
	}
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", opts.Addr); err != nil {
			return nil, fmt.Errorf("server: listen: %w", err)
		}
	}
	a := &App{opts: opts, logger: opts.Logger, limits: newLimiter(opts.MaxConcurrent, opts.MaxPerPrincipal), running: make(chan struct{}), ln: ln}
	defer func() {
		if err != nil {
			ln.Close()
			if a.store != nil {
				a.store.Close()
			}
			if a.lock != nil {
				a.lock.Release()
			}
		}
	}()
	schemas, err := objects.OpenSchemas(opts.SchemasDir, opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	a.schemas = schemas
	if opts.DataDirLock == nil {
		if a.lock, err = LockDataDir(opts.DataDir); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	if err := a.setupAuth(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	urls := opts.URLSigner
	if urls == nil {
		if urls, err = urlsign.Load(opts.DataDir, time.Now()); err != nil {
			return nil, fmt.Errorf("server: signing key: %w", err)
		}
	}
	a.signer = &signer{urls: urls, now: time.Now}
	if opts.ObjectsURL != "" {
		remote, err := store.NewRemote(opts.ObjectsURL, opts.ObjectsToken, nil)
		if err != nil {
			return nil, fmt.Errorf("server: store: %w", err)
		}
		a.store = remote
	} else {
		embedded, err := store.OpenEmbedded(store.EmbeddedOptions{Dir: opts.DataDir, Schemas: a.schemas})
		if err != nil {
			return nil, fmt.Errorf("server: store: %w", err)
		}
		a.embedded, a.store = embedded, embedded
	}
	a.mux = http.NewServeMux()
	a.routes = &recordingMux{mux: a.mux}
	a.routes.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	if a.embedded != nil {
		a.routeObjects(a.routes)
	}
	if opts.ExtraRoutes != nil {
		opts.ExtraRoutes(a.routes, a.Deps())
	}
	a.handler = a.middleware(a.mux)
	a.srv = &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
	}
	return a, nil
}

func (a *App) setupAuth() error {
	var entries []TokenEntry
	switch {
	case a.opts.TokensFile != "":
		e, err := LoadTokensFile(a.opts.TokensFile)
		if err != nil {
			return err
		}
		entries = e
	case a.opts.Getenv(TokenEnv) != "":
		entries = []TokenEntry{OwnerEverywhere(a.opts.Getenv(TokenEnv))}
	default:
		token, created, err := DevToken(a.opts.DataDir)
		if err != nil {
			return fmt.Errorf("development token: %w", err)
		}
		entries = []TokenEntry{OwnerEverywhere(token)}
		path, _ := filepath.Abs(filepath.Join(a.opts.DataDir, DevTokenFile))
		verb := "using"
		if created {
			verb = "created"
		}
		// The token itself is never printed or logged: the hint reads it
		// from the file.
		fmt.Fprintf(a.opts.Stdout, "geostat: no -tokens file and no %s; %s the development token in %s (owner of every workspace).\n"+
			"  Use it as: curl -H \"Authorization: Bearer $(cat %s)\" http://%s/...\n", TokenEnv, verb, path, path, a.opts.Addr)
	}
	auth, err := NewAuth(entries)
	if err != nil {
		return err
	}
	auth.logger = a.logger
	if a.opts.Identity != nil {
		if auth.ext, err = a.opts.Identity(entries); err != nil {
			return err
		}
	}
	a.auth = auth
	return nil
}

// Deps returns the dependencies handed to ExtraRoutes.
func (a *App) Deps() Deps {
	return Deps{Store: a.store, Auth: a.auth, Schemas: a.schemas, Logger: a.logger, BaseURL: a.baseURL}
}

// Addr returns the bound listen address (host:port).
func (a *App) Addr() string { return a.ln.Addr().String() }

// URL returns http://Addr.
func (a *App) URL() string { return "http://" + a.Addr() }

// Handler returns the application's HTTP handler (middleware included), for
// in-process tests.
func (a *App) Handler() http.Handler { return a.handler }

// Mux returns the route multiplexer (to add routes after New; prefer
// Options.ExtraRoutes).
func (a *App) Mux() *http.ServeMux { return a.mux }

// Routes returns the route patterns the application serves, built-in and
// ExtraRoutes alike, in registration order.
func (a *App) Routes() []string { return append([]string(nil), a.routes.patterns...) }

// Store returns the object store.
func (a *App) Store() store.Store { return a.store }

// Auth returns the authenticator.
func (a *App) Auth() *Auth { return a.auth }

// Run serves until ctx ends or Stop is called, then shuts down gracefully
// (bounded by Options.ShutdownTimeout). It returns nil after a clean stop.
func (a *App) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(a.ln) }()
	a.logger.Info("geostat worker listening", "addr", a.Addr(), "embedded_store", a.embedded != nil, "schemas", a.schemas.Source())
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return a.waitStopped()
		}
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), a.opts.ShutdownTimeout)
		defer cancel()
		return a.Stop(sctx)
	}
}

func (a *App) waitStopped() error {
	<-a.running
	return nil
}

// Stop shuts the application down: the HTTP server first (in-flight requests
// finish, bounded by ctx), then the store. It is idempotent.
func (a *App) Stop(ctx context.Context) error {
	a.stopOnce.Do(func() {
		err := a.srv.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			a.srv.Close()
		}
		a.ln.Close()
		if cerr := a.store.Close(); err == nil {
			err = cerr
		}
		if a.lock != nil {
			if lerr := a.lock.Release(); err == nil {
				err = lerr
			}
		}
		a.stopErr = err
		close(a.running)
	})
	return a.stopErr
}

// statusRecorder captures the status for logs.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ReadFrom passes io.Copy (http.ServeContent's copy of a blob or file) on
// to the connection's ReadFrom, which sends a file with sendfile(2): without
// it every download was read into user space and written again, 32 KiB at
// a time.
func (s *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(s.ResponseWriter, r)
}

type releaseKey struct{}

// Detach gives back the in-flight slots r holds: for a handler about to
// wait for long without using the server (a synchronous submit waiting for
// its job), so that waiting does not count against the request limits.
func Detach(r *http.Request) {
	if release, ok := r.Context().Value(releaseKey{}).(func()); ok {
		release()
	}
}

// middleware is the HTTP plumbing in one place: the default security
// headers (nosniff and a policy that runs nothing), the concurrency limits, the
// problem JSON of unknown routes and wrong methods (with Allow), and an
// access log by route pattern (never the raw path or query: signed URLs
// carry credentials in the query).
func (a *App) middleware(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		setDefaultSecurityHeaders(w.Header())
		rec := &statusRecorder{ResponseWriter: w}
		if r.URL.Path != "/healthz" {
			release, p := a.limits.acquire(r.Context(), callerKey(r))
			if p != nil {
				w.Header().Set("Retry-After", "1")
				problem.Write(rec, *p)
				a.observe(r, rec.status, start)
				return
			}
			defer release()
			r = r.WithContext(context.WithValue(r.Context(), releaseKey{}, release))
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			a.routeMiss(rec, r, mux)
		} else {
			mux.ServeHTTP(rec, r)
		}
		a.observe(r, rec.status, start)
	})
}

// observe logs an answered request and reports it to OnRequest.
func (a *App) observe(r *http.Request, status int, start time.Time) {
	d := time.Since(start)
	a.logger.Debug("request", "method", r.Method, "route", r.Pattern, "status", status, "duration", d)
	if a.opts.OnRequest != nil {
		a.opts.OnRequest(r.Method, r.Pattern, status, d)
	}
}

// routeMiss renders the mux's 404 / 405 (and redirects) as problem JSON.
func (a *App) routeMiss(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) {
	cap := &captureWriter{header: http.Header{}}
	mux.ServeHTTP(cap, r)
	switch cap.status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", cap.header.Get("Allow"))
		typ := problem.MethodNotAllowed
		if strings.HasPrefix(r.URL.Path, "/workspace/") {
			typ = problem.WorkspaceMethodNotAllowed // the seed's type of the area
		}
		problem.Write(w, problem.Problem{Type: typ, Title: "Method Not Allowed.", Status: http.StatusMethodNotAllowed,
			Detail: fmt.Sprintf("%s is not allowed here; allowed: %s", r.Method, cap.header.Get("Allow"))})
	case http.StatusNotFound:
		problem.Write(w, problem.Problem{Type: problem.RouteNotFound, Title: "Not Found.", Status: http.StatusNotFound,
			Detail: "no route for " + r.Method + " " + r.URL.Path})
	default:
		for k, v := range cap.header {
			w.Header()[k] = v
		}
		w.WriteHeader(cap.status)
		w.Write(cap.body)
	}
}

type captureWriter struct {
	header http.Header
	status int
	body   []byte
}

func (c *captureWriter) Header() http.Header { return c.header }
func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}
func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, p...)
	return len(p), nil
}
