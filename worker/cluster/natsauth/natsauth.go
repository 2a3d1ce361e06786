// Package natsauth secures the NATS port of a geostat cluster: the users an
// embedded nats-server accepts (NKeys: the server holds only their public
// keys), the NATS permissions of each worker role, the credential (an NKey
// seed file) a joining worker signs in with, and TLS on the port.
//
// Two roles exist. An api credential (workers of role api or all) may do
// what the job layer needs: queue and take jobs, read and write job
// records, submit shards and read their results; it may not delete
// streams or purge the account. A compute credential (workers of role
// compute) may only do shard work: take shard messages from the shard
// consumer and acknowledge them, read the job specs, done and fail records
// of the shard bucket and watch its cancel records, read the Object Store
// of inputs and results, and write results, done, fail, "too large" and
// lease records. It cannot read the job records or the queued requests, queue a
// job or a shard, read a shard message other than through the consumer,
// nor create, update, purge or delete a stream, a consumer or a bucket.
//
// NewCredentials writes a users file (the listening worker's
// -nats-users) and one seed file per role (a joining worker's
// -nats-credentials).
package natsauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Roles of a credential.
const (
	// RoleAPI is the credential of api workers (-role api or all).
	RoleAPI = "api"
	// RoleCompute is the credential of compute workers (-role compute).
	RoleCompute = "compute"
)

// Names of the JetStream assets of the shard queue that the permissions
// name. Package cluster (which imports this one) takes its StreamName,
// ConsumerName, BucketName and ObjectBucket from these: one source, so
// that the permissions always name the assets the queue uses.
const (
	// ShardStream is the work-queue stream of shard messages.
	ShardStream = "GEOSTAT_SHARDS"
	// ShardConsumer is the durable pull consumer of ShardStream.
	ShardConsumer = "compute"
	// ShardBucket is the key-value bucket of job state.
	ShardBucket = "geostat_jobs"
	// ObjectBucket is the Object Store of inputs and shard results.
	ObjectBucket = "geostat_shards"
)

// The streams behind the bucket and the object store.
const (
	kvShardStream  = "KV_" + ShardBucket
	objShardStream = "OBJ_" + ObjectBucket
)

// InboxPrefix is the prefix of the reply subjects of a worker holding a
// credential of role: each role receives replies on its own subjects only,
// so that a compute credential cannot subscribe to the replies an api
// worker receives (job records, queued requests).
func InboxPrefix(role string) string {
	if role == RoleCompute {
		return "_INBOX_compute"
	}
	return "_INBOX_api"
}

// Permissions returns the NATS permissions of a role (nil for an unknown
// role).
func Permissions(role string) *server.Permissions {
	switch role {
	case RoleAPI:
		return &server.Permissions{
			Publish: &server.SubjectPermission{
				Allow: []string{">"},
				Deny: []string{
					"$JS.API.STREAM.DELETE.>", "$JS.API.ACCOUNT.PURGE.>",
					"$JS.API.SERVER.>", "$JS.API.META.>", "$SYS.>",
				},
			},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}
	case RoleCompute:
		kvGet := "$JS.API.DIRECT.GET." + kvShardStream + ".$KV." + ShardBucket + "."
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{
				"$JS.API.INFO",
				// Bind to the assets an api worker created.
				"$JS.API.STREAM.INFO." + ShardStream,
				"$JS.API.STREAM.INFO." + kvShardStream,
				"$JS.API.STREAM.INFO." + objShardStream,
				"$JS.API.CONSUMER.INFO." + ShardStream + "." + ShardConsumer,
				// Take shards and acknowledge them.
				"$JS.API.CONSUMER.MSG.NEXT." + ShardStream + "." + ShardConsumer,
				"$JS.ACK." + ShardStream + "." + ShardConsumer + ".>",
				// Read the job specs, done and fail records; watch cancels.
				kvGet + "job.>", kvGet + "done.>", kvGet + "fail.>",
				"$JS.API.CONSUMER.CREATE." + kvShardStream + ".*.$KV." + ShardBucket + ".cancel.>",
				"$JS.FC." + kvShardStream + ".>",
				// Write results, done, fail, "too large", result
				// reference and lease (heartbeat) records.
				"$KV." + ShardBucket + ".done.>", "$KV." + ShardBucket + ".fail.>", "$KV." + ShardBucket + ".big.>",
				"$KV." + ShardBucket + ".ref.>", "$KV." + ShardBucket + ".lease.>",
				// Read inputs and results; store results.
				"$JS.API.DIRECT.GET." + objShardStream + ".$O." + ObjectBucket + ".M.>",
				"$JS.API.CONSUMER.CREATE." + objShardStream + ".*.$O." + ObjectBucket + ".C.>",
				"$JS.FC." + objShardStream + ".>",
				// Delete those watchers when done (the streams of the
				// bucket and the object store have no durable consumers;
				// ephemeral names are random and cannot be listed).
				"$JS.API.CONSUMER.DELETE." + kvShardStream + ".*",
				"$JS.API.CONSUMER.DELETE." + objShardStream + ".*",
				"$O." + ObjectBucket + ".C.>", "$O." + ObjectBucket + ".M.>",
			}},
			Subscribe: &server.SubjectPermission{Allow: []string{InboxPrefix(RoleCompute) + ".>"}},
		}
	}
	return nil
}

// User is one credential the listening worker accepts: its public NKey
// (starting with U) and its role. Name is for the operator (and the
// server's log).
type User struct {
	Name string `json:"name,omitempty"`
	Role string `json:"role"`
	NKey string `json:"nkey"`
}

// UsersFile is the JSON file of -nats-users.
type UsersFile struct {
	Users []User `json:"users"`
}

// ReadUsers reads and checks a users file: every user has a valid public
// user NKey, given once, and the role api or compute; at least one user.
func ReadUsers(path string) ([]User, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("natsauth: users file: %w", err)
	}
	var f UsersFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("natsauth: users file %s: %w", path, err)
	}
	if err := CheckUsers(f.Users); err != nil {
		return nil, fmt.Errorf("natsauth: users file %s: %w", path, err)
	}
	return f.Users, nil
}

// CheckUsers checks a list of users (see ReadUsers).
func CheckUsers(users []User) error {
	if len(users) == 0 {
		return errors.New("no users")
	}
	seen := map[string]bool{}
	for i, u := range users {
		if !nkeys.IsValidPublicUserKey(u.NKey) {
			return fmt.Errorf("users[%d].nkey %q: not a public user NKey (U...)", i, u.NKey)
		}
		if seen[u.NKey] {
			return fmt.Errorf("users[%d].nkey %s: given twice", i, u.NKey)
		}
		seen[u.NKey] = true
		if Permissions(u.Role) == nil {
			return fmt.Errorf("users[%d].role %q: want %q or %q", i, u.Role, RoleAPI, RoleCompute)
		}
	}
	return nil
}

// ServerUsers are the server's NKey users of users, each with the
// permissions of its role.
func ServerUsers(users []User) []*server.NkeyUser {
	out := make([]*server.NkeyUser, 0, len(users))
	for _, u := range users {
		out = append(out, &server.NkeyUser{Nkey: u.NKey, Permissions: Permissions(u.Role)})
	}
	return out
}

// Key is a credential in memory: an NKey pair.
type Key struct {
	kp nkeys.KeyPair
	// Public is the public key (U...).
	Public string
}

// NewKey generates a user NKey pair (for the listening worker's own
// in-process connection: it never leaves the process).
func NewKey() (*Key, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("natsauth: generating an NKey: %w", err)
	}
	return keyOf(kp)
}

func keyOf(kp nkeys.KeyPair) (*Key, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("natsauth: public key: %w", err)
	}
	return &Key{kp: kp, Public: pub}, nil
}

var seedRE = regexp.MustCompile(`SU[A-Z2-7]{56}`)

// ReadKey reads a credential file: an NKey user seed (SU...), alone or in
// a decorated NATS file; the first seed in it is taken.
func ReadKey(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("natsauth: credentials: %w", err)
	}
	seed := seedRE.Find(b)
	if seed == nil {
		return nil, fmt.Errorf("natsauth: credentials %s: no NKey user seed (SU...) in it", path)
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("natsauth: credentials %s: %w", path, err)
	}
	return keyOf(kp)
}

// Option signs the server's challenge with the key.
func (k *Key) Option() nats.Option {
	return nats.Nkey(k.Public, k.kp.Sign)
}

// Credentials are the files NewCredentials writes.
type Credentials struct {
	// Users is the users file of the listening worker (-nats-users).
	Users string
	// API and Compute are the seed files of joining workers
	// (-nats-credentials) of role api (or all) and compute.
	API, Compute string
}

// NewCredentials creates dir (mode 0700) when missing and writes in it,
// each with mode 0600 and refusing to overwrite an existing file:
// users.json (the public keys of an api and a compute credential, for
// -nats-users), api.nk and compute.nk (their seeds, for
// -nats-credentials).
func NewCredentials(dir string) (Credentials, error) {
	c := Credentials{Users: filepath.Join(dir, "users.json"), API: filepath.Join(dir, "api.nk"), Compute: filepath.Join(dir, "compute.nk")}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return c, fmt.Errorf("natsauth: %w", err)
	}
	var users []User
	for _, f := range []struct{ role, path string }{{RoleAPI, c.API}, {RoleCompute, c.Compute}} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return c, fmt.Errorf("natsauth: generating an NKey: %w", err)
		}
		seed, err := kp.Seed()
		if err != nil {
			return c, fmt.Errorf("natsauth: seed: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return c, fmt.Errorf("natsauth: public key: %w", err)
		}
		text := fmt.Sprintf("# geostat NATS credential of role %s (public key %s): keep it secret\n%s\n", f.role, pub, seed)
		if err := writeNew(f.path, []byte(text)); err != nil {
			return c, err
		}
		users = append(users, User{Name: f.role, Role: f.role, NKey: pub})
	}
	b, err := json.MarshalIndent(UsersFile{Users: users}, "", "  ")
	if err != nil {
		return c, fmt.Errorf("natsauth: %w", err)
	}
	return c, writeNew(c.Users, append(b, '\n'))
}

// writeNew writes a new file with mode 0600; an existing file is an error.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("natsauth: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("natsauth: writing %s: %w", path, err)
	}
	return nil
}

// IsAuthError reports whether err is the server refusing a connection's
// credentials.
func IsAuthError(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		(err != nil && strings.Contains(strings.ToLower(err.Error()), "authorization violation"))
}

// ServerConfig is the authorization block of a nats-server configuration
// file ("authorization: " and a JSON object, which the configuration
// syntax accepts; a file of its own can be included) admitting users with
// the permissions of their roles: for a NATS server or cluster of your own
// that the workers join with -nats.
func ServerConfig(users []User) ([]byte, error) {
	if err := CheckUsers(users); err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	type confUser struct {
		NKey        string              `json:"nkey"`
		Permissions *server.Permissions `json:"permissions"`
	}
	var conf struct {
		Users []confUser `json:"users"`
	}
	for _, u := range users {
		conf.Users = append(conf.Users, confUser{NKey: u.NKey, Permissions: Permissions(u.Role)})
	}
	// No HTML escapes: the configuration syntax knows no \u (">").
	var buf bytes.Buffer
	buf.WriteString("authorization: ")
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(conf); err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	return buf.Bytes(), nil
}
