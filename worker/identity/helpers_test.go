package identity

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
)

const (
	org1 = "4f0c2a6e-9f3b-4c1d-8a2e-1b3c5d7e9f01"
	org2 = "5a1d3b7f-0a4c-4d2e-9b3f-2c4d6e8f0a12"
	ws1  = "91aa4b2c-3d5e-4f60-8172-93a4b5c6d7e8"
	ws2  = "82bb5c3d-4e6f-4071-9283-a4b5c6d7e8f9"
)

// testClock is an injectable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startServer starts an embedded JetStream server with its state in dir.
func startServer(t testing.TB, dir string) *server.Server {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

func connect(t testing.TB, ns *server.Server) *nats.Conn {
	t.Helper()
	nc, err := cluster.ConnectInProcess(ns, "identity-test")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// open opens a store on ns; cfg.Now defaults to clock when given.
func open(t testing.TB, ns *server.Server, cfg Config) *Store {
	t.Helper()
	s, err := Open(testCtx(t), connect(t, ns), cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// fixture is a store with an admin principal of org1.
type fixture struct {
	s     *Store
	clock *testClock
	admin *Principal // static owner of every workspace of org1
}

const adminToken = "static-admin-token"

var adminUser = UserRef{ID: "0d6f1c1e-7b8a-4b9c-8d0e-1f2a3b4c5d6e", Name: "ops", Email: "ops@mine.example"}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ns := startServer(t, t.TempDir())
	clock := newClock()
	s := open(t, ns, Config{Now: clock.Now, Static: []Static{{Token: adminToken, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}}}})
	p, err := s.Authenticate(adminToken)
	require.NoError(t, err)
	return fixture{s: s, clock: clock, admin: p}
}

func ptr[T any](v T) *T { return &v }

// user creates a user of org1 and returns it with a principal of a token.
func (f fixture) user(t *testing.T, email string, role InstanceRole) (User, *Principal) {
	t.Helper()
	ctx := testCtx(t)
	u, err := f.s.CreateUser(ctx, f.admin, org1, email, email, role)
	require.NoError(t, err)
	tok, err := f.s.CreateToken(ctx, u.ID, "test", nil)
	require.NoError(t, err)
	p, err := f.s.Authenticate(tok.Secret)
	require.NoError(t, err)
	return u, p
}

// eventually waits on s's change events until cond holds, at most limit.
func eventually(t *testing.T, s *Store, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		ch := s.Changed()
		if cond() {
			return time.Since(start)
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("condition not met within %s", limit)
		}
	}
}
