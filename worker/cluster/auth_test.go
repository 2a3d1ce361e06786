package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
)

// authServer starts an embedded server listening on 127.0.0.1 (any port)
// with the users of new credentials (and tlsCfg when not nil), and opens
// the shard queue and the job store on an in-process connection signed in
// with an api key of its own, as a listening worker does.
func authServer(t *testing.T, ctx context.Context, tlsFiles *natsauth.TLSFiles) (*server.Server, natsauth.Credentials, *cluster.Queue, *nats.Conn) {
	t.Helper()
	return authServerConfig(t, ctx, tlsFiles, cluster.Config{AckWait: 2 * time.Second})
}

// authServerConfig is authServer with the shard queue's configuration.
func authServerConfig(t *testing.T, ctx context.Context, tlsFiles *natsauth.TLSFiles, cfg cluster.Config) (*server.Server, natsauth.Credentials, *cluster.Queue, *nats.Conn) {
	t.Helper()
	creds, err := natsauth.NewCredentials(filepath.Join(t.TempDir(), "creds"))
	require.NoError(t, err)
	users, err := natsauth.ReadUsers(creds.Users)
	require.NoError(t, err)
	local, err := natsauth.NewKey()
	require.NoError(t, err)
	so := cluster.ServerOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0",
		Users: append(users, natsauth.User{Name: "local", Role: natsauth.RoleAPI, NKey: local.Public})}
	if tlsFiles != nil {
		so.TLS, err = natsauth.ServerTLS(tlsFiles.Cert, tlsFiles.Key)
		require.NoError(t, err)
	}
	ns, err := cluster.StartServer(so)
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	nc, err := cluster.ConnectInProcess(ns, "api", local.Option())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	q, err := cluster.Open(ctx, nc, cfg)
	require.NoError(t, err)
	_, err = jskv.Open(ctx, nc, jskv.Config{})
	require.NoError(t, err)
	return ns, creds, q, nc
}

// violations collects the permission violations a connection's server
// reports.
type violations struct {
	mu  sync.Mutex
	all []string
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrPermissionViolation) {
		v.mu.Lock()
		v.all = append(v.all, err.Error())
		v.mu.Unlock()
	}
}

func (v *violations) seen(subject string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.all {
		if strings.Contains(e, `"`+subject+`"`) || strings.HasSuffix(e, " "+subject) || strings.Contains(e, " "+subject+" ") {
			return true
		}
	}
	return false
}

// connectAs connects over TCP with the credential file seed (none when
// empty) and the inbox prefix of role.
func connectAs(t *testing.T, url, seed, role string, v *violations, extra ...nats.Option) (*nats.Conn, error) {
	t.Helper()
	opts := []nats.Option{nats.CustomInboxPrefix(natsauth.InboxPrefix(role)), nats.MaxReconnects(0)}
	if v != nil {
		opts = append(opts, nats.ErrorHandler(v.handler))
	}
	if seed != "" {
		key, err := natsauth.ReadKey(seed)
		require.NoError(t, err)
		opts = append(opts, key.Option())
	}
	nc, err := cluster.Connect(url, "test-"+role, append(opts, extra...)...)
	if err == nil {
		t.Cleanup(nc.Close)
	}
	return nc, err
}

// The listening server refuses connections without a credential and with
// a key it does not know; a server asked to listen without users refuses
// to start.
func TestAuthRefusesAnonymous(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, _, _, _ := authServer(t, ctx, nil)
	_, err := connectAs(t, ns.ClientURL(), "", natsauth.RoleAPI, nil)
	require.Error(t, err)
	assert.True(t, natsauth.IsAuthError(err), "%v", err)

	// A key of the right form that the users file does not list.
	stranger, err := natsauth.NewCredentials(filepath.Join(t.TempDir(), "other"))
	require.NoError(t, err)
	_, err = connectAs(t, ns.ClientURL(), stranger.API, natsauth.RoleAPI, nil)
	require.Error(t, err)
	assert.True(t, natsauth.IsAuthError(err), "%v", err)

	_, err = cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	require.ErrorContains(t, err, "needs users")
	_, err = cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir(), ClusterListen: "127.0.0.1:0", Users: []natsauth.User{{Role: natsauth.RoleAPI, NKey: mustKey(t).Public}}})
	require.ErrorContains(t, err, "route password")
}

func mustKey(t *testing.T) *natsauth.Key {
	k, err := natsauth.NewKey()
	require.NoError(t, err)
	return k
}

// A compute credential does the shard work of a job (its result is
// accepted), and the server refuses it every other thing: deleting or
// purging a stream, reading or writing the job records, queueing a job,
// taking a queued job, queueing a shard, reading a shard message outside
// the consumer, reading the job secrets, creating consumers, listening to
// api workers' replies. A job it forges never runs; a result it forges
// for a shard not delivered to it is refused.
func TestAuthComputeLeastPrivilege(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ns, creds, q, apiNC := authServer(t, ctx, nil)
	url := ns.ClientURL()
	v := &violations{}
	nc, err := connectAs(t, url, creds.Compute, natsauth.RoleCompute, v)
	require.NoError(t, err)

	// Shard work: bind, compute, and the api worker reads the result.
	const job = "job-auth"
	input, err := q.PutInput(ctx, job, []byte("-input"))
	require.NoError(t, err)
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{"n":1}`), []string{"a", "b"}))
	cq, err := cluster.Open(ctx, nc, cluster.Config{Bind: true})
	require.NoError(t, err)
	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() {
		worked <- cq.Work(wctx, func(_ context.Context, _ string, spec json.RawMessage, key string) ([]byte, error) {
			in, err := cq.Input(ctx, job, input, nil)
			if err != nil {
				return nil, err
			}
			return []byte(key + string(spec) + string(in)), nil
		}, ev.add)
	}()
	stt, err := q.Wait(ctx, job, nil)
	stop()
	require.NoError(t, <-worked)
	require.NoError(t, err)
	require.Equal(t, 2, stt.Done, "events: %v", ev.list())
	res, err := q.Result(ctx, job, "a")
	require.NoError(t, err)
	assert.Equal(t, `a{"n":1}-input`, string(res))

	v.mu.Lock()
	assert.Empty(t, v.all, "the shard work needs nothing the credential may not do")
	v.mu.Unlock()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 1500*time.Millisecond) }
	request := func(subject string, body []byte) error {
		c, cancel := short()
		defer cancel()
		_, err := nc.RequestWithContext(c, subject, body)
		return err
	}
	forbidden := []struct {
		what, subject string
		do            func() error
	}{
		{"delete the shard stream", "$JS.API.STREAM.DELETE." + cluster.StreamName, func() error {
			c, cancel := short()
			defer cancel()
			return js.DeleteStream(c, cluster.StreamName)
		}},
		{"delete the job stream", "$JS.API.STREAM.DELETE." + jskv.Stream, func() error {
			c, cancel := short()
			defer cancel()
			return js.DeleteStream(c, jskv.Stream)
		}},
		{"purge the shard stream", "$JS.API.STREAM.PURGE." + cluster.StreamName, func() error {
			return request("$JS.API.STREAM.PURGE."+cluster.StreamName, nil)
		}},
		{"delete the shard bucket", "$JS.API.STREAM.DELETE.KV_" + cluster.BucketName, func() error {
			c, cancel := short()
			defer cancel()
			return js.DeleteKeyValue(c, cluster.BucketName)
		}},
		{"open the job record bucket", "$JS.API.STREAM.INFO.KV_" + jskv.Bucket, func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.KeyValue(c, jskv.Bucket)
			return err
		}},
		{"read a job record", "$JS.API.DIRECT.GET.KV_" + jskv.Bucket + ".$KV." + jskv.Bucket + ".rec.x", func() error {
			return request("$JS.API.DIRECT.GET.KV_"+jskv.Bucket+".$KV."+jskv.Bucket+".rec.x", nil)
		}},
		{"write a job record", "$KV." + jskv.Bucket + ".rec.forged", func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.Publish(c, "$KV."+jskv.Bucket+".rec.forged", []byte(`{}`))
			return err
		}},
		{"queue a job", "geostat_job.forged", func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.Publish(c, "geostat_job.forged", []byte(`{"grants":{"org":{"*":"owner"}}}`))
			return err
		}},
		{"take a queued job", "$JS.API.CONSUMER.MSG.NEXT." + jskv.Stream + "." + jskv.Consumer, func() error {
			return request("$JS.API.CONSUMER.MSG.NEXT."+jskv.Stream+"."+jskv.Consumer, []byte(`{"batch":1,"expires":1000000000}`))
		}},
		{"read the job queue", "$JS.API.STREAM.MSG.GET." + jskv.Stream, func() error {
			return request("$JS.API.STREAM.MSG.GET."+jskv.Stream, []byte(`{"seq":1}`))
		}},
		{"create a consumer on the job queue", "$JS.API.CONSUMER.CREATE." + jskv.Stream + ".spy", func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.CreateConsumer(c, jskv.Stream, jetstream.ConsumerConfig{Name: "spy"})
			return err
		}},
		{"queue a shard", "shard.forged.s", func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.Publish(c, "shard.forged.s", []byte("x"))
			return err
		}},
		{"read a shard message outside the consumer", "$JS.API.STREAM.MSG.GET." + cluster.StreamName, func() error {
			return request("$JS.API.STREAM.MSG.GET."+cluster.StreamName, []byte(`{"seq":1}`))
		}},
		{"read a job secret", "$JS.API.DIRECT.GET.KV_" + cluster.BucketName + ".$KV." + cluster.BucketName + ".key." + job, func() error {
			return request("$JS.API.DIRECT.GET.KV_"+cluster.BucketName+".$KV."+cluster.BucketName+".key."+job, nil)
		}},
		{"read the lease records (which worker holds what: the api workers' view)", "$JS.API.DIRECT.GET.KV_" + cluster.BucketName + ".$KV." + cluster.BucketName + ".lease." + job + ".a", func() error {
			return request("$JS.API.DIRECT.GET.KV_"+cluster.BucketName+".$KV."+cluster.BucketName+".lease."+job+".a", nil)
		}},
		{"read the shard bucket by sequence", "$JS.API.STREAM.MSG.GET.KV_" + cluster.BucketName, func() error {
			return request("$JS.API.STREAM.MSG.GET.KV_"+cluster.BucketName, []byte(`{"seq":1}`))
		}},
		{"write a job spec", "$KV." + cluster.BucketName + ".job.forged", func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.Publish(c, "$KV."+cluster.BucketName+".job.forged", []byte(`{}`))
			return err
		}},
		{"cancel a job", "$KV." + cluster.BucketName + ".cancel." + job, func() error {
			c, cancel := short()
			defer cancel()
			_, err := js.Publish(c, "$KV."+cluster.BucketName+".cancel."+job, []byte(`x`))
			return err
		}},
		{"delete the shard consumer", "$JS.API.CONSUMER.DELETE." + cluster.StreamName + "." + cluster.ConsumerName, func() error {
			c, cancel := short()
			defer cancel()
			return js.DeleteConsumer(c, cluster.StreamName, cluster.ConsumerName)
		}},
		{"listen to api workers' replies", "_INBOX_api.>", func() error {
			sub, err := nc.SubscribeSync("_INBOX_api.>")
			if err != nil {
				return err
			}
			defer sub.Unsubscribe()
			c, cancel := short()
			defer cancel()
			_, err = sub.NextMsgWithContext(c)
			return err
		}},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(forbidden))
	for i, f := range forbidden {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f.do() }()
	}
	wg.Wait()
	for i, f := range forbidden {
		assert.Error(t, errs[i], "a compute credential may not %s", f.what)
		assert.True(t, v.seen(f.subject), "the server refused %q (%s); violations: %v", f.subject, f.what, v.all)
	}

	// Everything is still there; the forged job was never queued.
	_, _, err = q.Pending(ctx)
	require.NoError(t, err)
	apiJS, err := jetstream.New(apiNC)
	require.NoError(t, err)
	jobStream, err := apiJS.Stream(ctx, jskv.Stream)
	require.NoError(t, err)
	info, err := jobStream.Info(ctx)
	require.NoError(t, err)
	assert.Zero(t, info.State.Msgs, "no job was queued")

	// Not even an api credential may delete the queues.
	anc, err := connectAs(t, url, creds.API, natsauth.RoleAPI, v)
	require.NoError(t, err)
	ajs, err := jetstream.New(anc)
	require.NoError(t, err)
	dctx, dcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	require.Error(t, ajs.DeleteStream(dctx, jskv.Stream))
	dcancel()
	assert.True(t, v.seen("$JS.API.STREAM.DELETE."+jskv.Stream))
	_, err = apiJS.Stream(ctx, jskv.Stream)
	require.NoError(t, err, "the job stream is still there")

	// A done record forged for a shard not delivered to the credential is
	// refused by the api worker: it lacks the HMAC of the shard's token.
	kv, err := js.KeyValue(ctx, cluster.BucketName)
	require.NoError(t, err)
	forged := []byte("1234.5")
	_, err = kv.Put(ctx, "done."+job+".b", cluster.DoneValue("guessed-token", job, "b", cluster.Digest(forged)))
	require.NoError(t, err, "compute workers write done records")
	_, err = q.Result(ctx, job, "b")
	require.ErrorIs(t, err, cluster.ErrForgedResult)

	// A done record forged before the shard is computed: the worker the
	// shard is delivered to computes it and replaces the record, and the
	// api worker reads the true result.
	const job2 = "job-auth-forged-first"
	require.NoError(t, q.Submit(ctx, job2, json.RawMessage(`{"n":2}`), []string{"c"}))
	_, err = kv.Put(ctx, "done."+job2+".c", cluster.DoneValue("guessed-token", job2, "c", cluster.Digest(forged)))
	require.NoError(t, err)
	ev2 := newEvents()
	wctx, stop = context.WithCancel(ctx)
	go func() {
		worked <- cq.Work(wctx, func(_ context.Context, _ string, spec json.RawMessage, key string) ([]byte, error) {
			return []byte(key + string(spec)), nil
		}, ev2.add)
	}()
	for handled := false; !handled; {
		select {
		case e := <-ev2.ch:
			// (a redelivery of the first job's shard b, whose done record
			// was forged above, may come first: it is replaced the same way)
			if e.Job == job2 {
				assert.Equal(t, "done", e.Outcome, "%v", e.Err)
				handled = true
			}
		case <-ctx.Done():
			t.Fatal("the shard was not handled")
		}
	}
	stop()
	require.NoError(t, <-worked)
	res, err = q.Result(ctx, job2, "c")
	require.NoError(t, err)
	assert.Equal(t, `c{"n":2}`, string(res))
}

// With TLS on the port, a worker verifying the server with the CA joins
// and does shard work; one without the CA, or with another CA, is refused
// before it signs in; in-process connections need no TLS.
func TestAuthTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	files, err := natsauth.NewTLS(filepath.Join(dir, "tls"), []string{"127.0.0.1", "localhost"}, time.Hour)
	require.NoError(t, err)
	other, err := natsauth.NewTLS(filepath.Join(dir, "other"), []string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	ns, creds, q, _ := authServer(t, ctx, &files)

	good, err := natsauth.ClientTLS(files.CA)
	require.NoError(t, err)
	nc, err := connectAs(t, ns.ClientURL(), creds.Compute, natsauth.RoleCompute, nil, good)
	require.NoError(t, err)
	require.True(t, nc.TLSRequired())
	state, err := nc.TLSConnectionState()
	require.NoError(t, err)
	require.True(t, state.HandshakeComplete)
	cq, err := cluster.Open(ctx, nc, cluster.Config{Bind: true})
	require.NoError(t, err)
	const job = "job-tls"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"s"}))
	wctx, stop := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() {
		worked <- cq.Work(wctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) { return []byte("over TLS"), nil }, nil)
	}()
	_, err = q.Wait(ctx, job, nil)
	stop()
	require.NoError(t, <-worked)
	require.NoError(t, err)
	res, err := q.Result(ctx, job, "s")
	require.NoError(t, err)
	assert.Equal(t, "over TLS", string(res))

	_, err = connectAs(t, ns.ClientURL(), creds.Compute, natsauth.RoleCompute, nil)
	require.Error(t, err, "without the CA the server's certificate is not trusted")
	wrong, err := natsauth.ClientTLS(other.CA)
	require.NoError(t, err)
	_, err = connectAs(t, ns.ClientURL(), creds.Compute, natsauth.RoleCompute, nil, wrong)
	require.ErrorContains(t, err, "certificate")
}

// A compute worker that joins before any api worker waits until one has
// created the queue, then binds to it; a shard that dies on compute
// workers (which do not reap) is failed by the api worker's reaper.
func TestAuthComputeBindsAndAPIReaps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	creds, err := natsauth.NewCredentials(filepath.Join(t.TempDir(), "creds"))
	require.NoError(t, err)
	users, err := natsauth.ReadUsers(creds.Users)
	require.NoError(t, err)
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0", Users: users})
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	v := &violations{}
	cnc, err := connectAs(t, ns.ClientURL(), creds.Compute, natsauth.RoleCompute, v)
	require.NoError(t, err)
	bound := make(chan *cluster.Queue, 1)
	go func() {
		cq, err := cluster.Open(ctx, cnc, cluster.Config{Bind: true})
		assert.NoError(t, err)
		bound <- cq
	}()
	select {
	case <-bound:
		t.Fatal("bound before any api worker created the queue")
	case <-time.After(1500 * time.Millisecond): // a bounded wait: the binder retries every second
	}
	anc, err := connectAs(t, ns.ClientURL(), creds.API, natsauth.RoleAPI, nil)
	require.NoError(t, err)
	q, err := cluster.Open(ctx, anc, cluster.Config{AckWait: time.Second, MaxDeliver: 2})
	require.NoError(t, err)
	var cq *cluster.Queue
	select {
	case cq = <-bound:
	case <-ctx.Done():
		t.Fatal("the compute worker never bound")
	}
	require.NotNil(t, cq)

	const job = "job-dies-on-compute"
	require.NoError(t, q.Submit(ctx, job, json.RawMessage(`{}`), []string{"only"}))
	dieOnDeliveries(t, ctx, cq, 2)
	// A healthy compute worker's fetch makes the server give up on the
	// message (the advisory); the api worker's reaper fails the job.
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); q.Reap(rctx) }()
	go func() {
		defer wg.Done()
		_ = cq.Work(rctx, func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			return nil, errors.New("a third delivery must not happen")
		}, nil)
	}()
	st, err := q.Wait(ctx, job, nil)
	stop()
	wg.Wait()
	require.NoError(t, err)
	assert.Equal(t, "shard only: delivered 2 times without completing (workers killed or stalled each time)", st.Failed)
	v.mu.Lock()
	defer v.mu.Unlock()
	assert.Empty(t, v.all, "compute workers asked for nothing they may not do")
}
