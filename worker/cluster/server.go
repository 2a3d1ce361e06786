// Package cluster runs shards of compute jobs on NATS JetStream: an
// embedded nats-server (the single-machine default, state under the data
// directory, no port unless asked) or an existing NATS server or cluster,
// a work-queue stream of shard messages, a key-value bucket of job state
// and done records, and the JetStream Object Store for shard results keyed
// by their SHA-256.
//
// The protocol relies on shards being deterministic (package shard): a
// shard message is delivered at least once; a consumer that dies or stalls
// without acknowledging lets the message be redelivered after the ack
// deadline, and whoever finishes first records the result's digest with a
// first-writer-wins create of the done record. A later completion with the
// same digest is a harmless duplicate; one with a different digest is a
// determinism bug and fails the job loudly.
package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
)

// MaxPayload is the embedded server's maximum message size: Object Store
// chunks of 1 MiB (the fastest measured) need more than the 1 MB default.
const MaxPayload = 8 << 20

// ServerOptions configure an embedded nats-server.
type ServerOptions struct {
	// Name is the server's name (unique within a cluster); empty means
	// "geostat".
	Name string
	// Dir holds the JetStream state (the worker uses DATA/nats).
	Dir string
	// Listen is "HOST:PORT" for other workers to connect to (port 0: any
	// free port, see the server's ClientURL); empty means no listening
	// port at all (in-process connections only). A listening
	// server needs Users (or InsecureNoAuth).
	Listen string
	// Users are the credentials the server accepts (NKeys, each with the
	// permissions of its role, package natsauth); with users, every
	// connection, in-process ones too, must sign in as one of them.
	Users []natsauth.User
	// TLS, when set, is required of every connection on the Listen port
	// (in-process connections need none).
	TLS *tls.Config
	// InsecureNoAuth lets the server listen with no Users: anyone who
	// reaches the port may read and write everything. For a laptop only.
	InsecureNoAuth bool
	// ClusterListen is "HOST:PORT" of the route listener when the server is
	// a member of a JetStream cluster, with Routes the other members'
	// route addresses ("nats://HOST:PORT") and ClusterName the cluster's
	// name. Empty means a standalone server.
	ClusterListen string
	ClusterName   string
	Routes        []string
	// RoutePassword is the secret the members of a JetStream cluster
	// authenticate their routes with (user "geostat-route"); required with
	// ClusterListen unless InsecureNoAuth.
	RoutePassword string
	// Log turns the server's log on (to standard error).
	Log bool
}

// routeUser is the user name of the routes between cluster members.
const routeUser = "geostat-route"

// StartServer starts an embedded nats-server with JetStream and waits (at
// most 30 s) until it accepts connections. Every write is synced to disk
// (the default interval sync could lose the last writes on power loss). A
// server that listens on a port (Listen or ClusterListen) is refused
// without Users (and RoutePassword for routes) unless InsecureNoAuth.
func StartServer(o ServerOptions) (*server.Server, error) {
	if o.Dir == "" {
		return nil, errors.New("cluster: the server needs a state directory")
	}
	if o.Listen != "" && len(o.Users) == 0 && !o.InsecureNoAuth {
		return nil, fmt.Errorf("cluster: the server would accept anyone on %s: it needs users (credentials) to listen", o.Listen)
	}
	if o.ClusterListen != "" && o.RoutePassword == "" && !o.InsecureNoAuth {
		return nil, fmt.Errorf("cluster: the route port %s needs a route password", o.ClusterListen)
	}
	if len(o.Users) > 0 {
		if err := natsauth.CheckUsers(o.Users); err != nil {
			return nil, fmt.Errorf("cluster: users: %w", err)
		}
	}
	opts := &server.Options{
		ServerName: o.Name,
		JetStream:  true,
		StoreDir:   o.Dir,
		SyncAlways: true,
		MaxPayload: MaxPayload,
		NoSigs:     true,
		NoLog:      !o.Log,
		DontListen: o.Listen == "",
	}
	if opts.ServerName == "" {
		opts.ServerName = "geostat"
	}
	if o.Listen != "" {
		host, port, err := splitHostPort("nats-listen", o.Listen)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
		if port == 0 { // any free port (nats-server's 0 means 4222)
			opts.Port = server.RANDOM_PORT
		}
	}
	if len(o.Users) > 0 {
		opts.Nkeys = natsauth.ServerUsers(o.Users)
	}
	if o.TLS != nil {
		opts.TLSConfig, opts.TLS, opts.TLSTimeout = o.TLS, true, 5
	}
	if o.ClusterListen != "" {
		host, port, err := splitHostPort("cluster listen", o.ClusterListen)
		if err != nil {
			return nil, err
		}
		if port == 0 {
			port = server.RANDOM_PORT
		}
		opts.Cluster = server.ClusterOpts{Name: o.ClusterName, Host: host, Port: port}
		if o.RoutePassword != "" {
			opts.Cluster.Username, opts.Cluster.Password = routeUser, o.RoutePassword
		}
		for _, r := range o.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("cluster: route %q: %w", r, err)
			}
			if o.RoutePassword != "" {
				u.User = url.UserPassword(routeUser, o.RoutePassword)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: starting nats-server: %w", err)
	}
	if o.Log {
		ns.ConfigureLogger()
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("cluster: nats-server not ready after 30 s")
	}
	return ns, nil
}

func splitHostPort(what, hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %q is not HOST:PORT: %w", what, hp, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s: %q: bad port", what, hp)
	}
	return host, port, nil
}

// ConnectInProcess connects to an embedded server without a socket; opts
// add to the defaults (a credential, for a server with users).
func ConnectInProcess(ns *server.Server, name string, opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect("", append([]nats.Option{nats.InProcessServer(ns), nats.Name(name), nats.MaxReconnects(-1)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("cluster: in-process connection: %w", err)
	}
	return nc, nil
}

// Connect joins an existing NATS server or cluster: urls is a comma-separated
// list ("nats://host1:4222,nats://host2:4222"); the client fails over
// between them; opts add to the defaults (a credential, TLS, an inbox
// prefix).
func Connect(urls, name string, opts ...nats.Option) (*nats.Conn, error) {
	if strings.TrimSpace(urls) == "" {
		return nil, errors.New("nats: no server URL given")
	}
	nc, err := nats.Connect(urls, append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.Timeout(10 * time.Second)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("nats: connecting to %s: %w", urls, err)
	}
	return nc, nil
}
