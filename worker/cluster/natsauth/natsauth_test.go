package natsauth_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
)

// NewCredentials writes a users file that ReadUsers accepts and seeds
// whose public keys are those of the users file; it never overwrites.
func TestNewCredentials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	c, err := natsauth.NewCredentials(dir)
	require.NoError(t, err)
	users, err := natsauth.ReadUsers(c.Users)
	require.NoError(t, err)
	require.Len(t, users, 2)
	api, err := natsauth.ReadKey(c.API)
	require.NoError(t, err)
	compute, err := natsauth.ReadKey(c.Compute)
	require.NoError(t, err)
	assert.Equal(t, natsauth.User{Name: "api", Role: natsauth.RoleAPI, NKey: api.Public}, users[0])
	assert.Equal(t, natsauth.User{Name: "compute", Role: natsauth.RoleCompute, NKey: compute.Public}, users[1])
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	_, err = natsauth.NewCredentials(dir)
	require.ErrorContains(t, err, "file exists")
}

// Bad users files and credential files are refused with the reason.
func TestReadUsersAndKeyRefuseBadFiles(t *testing.T) {
	dir := t.TempDir()
	key, err := natsauth.NewKey()
	require.NoError(t, err)
	for name, c := range map[string]struct{ body, msg string }{
		"empty":    {`{"users": []}`, "no users"},
		"role":     {`{"users": [{"role": "admin", "nkey": "` + key.Public + `"}]}`, `role "admin"`},
		"nkey":     {`{"users": [{"role": "api", "nkey": "SUAB"}]}`, "not a public user NKey"},
		"twice":    {`{"users": [{"role": "api", "nkey": "` + key.Public + `"}, {"role": "compute", "nkey": "` + key.Public + `"}]}`, "given twice"},
		"unknown":  {`{"users": [], "password": "x"}`, "unknown field"},
		"not json": {`users`, "invalid character"},
	} {
		p := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(p, []byte(c.body), 0o600))
		_, err := natsauth.ReadUsers(p)
		assert.ErrorContains(t, err, c.msg, name)
	}
	p := filepath.Join(dir, "users.json")
	require.NoError(t, os.WriteFile(p, []byte(key.Public+"\n"), 0o600))
	_, err = natsauth.ReadKey(p)
	assert.ErrorContains(t, err, "no NKey user seed")
	_, err = natsauth.ReadKey(filepath.Join(dir, "missing.nk"))
	assert.Error(t, err)
}

// NewTLS refuses no hosts and writes a CA that verifies the server
// certificate (loaded by ServerTLS, and by ClientTLS for the CA).
func TestNewTLS(t *testing.T) {
	_, err := natsauth.NewTLS(t.TempDir(), nil, time.Hour)
	require.Error(t, err)
	f, err := natsauth.NewTLS(t.TempDir(), []string{"api.example", "10.0.0.5"}, time.Hour)
	require.NoError(t, err)
	cfg, err := natsauth.ServerTLS(f.Cert, f.Key)
	require.NoError(t, err)
	require.Len(t, cfg.Certificates, 1)
	_, err = natsauth.ClientTLS(f.CA)
	require.NoError(t, err)
	_, err = natsauth.ClientTLS(f.Key)
	require.ErrorContains(t, err, "no PEM certificate")
	_, err = natsauth.ServerTLS(f.Cert, "")
	require.Error(t, err)
}

// The authorization block of ServerConfig is read by nats-server as NKey
// users with the permissions of their roles.
func TestServerConfig(t *testing.T) {
	c, err := natsauth.NewCredentials(filepath.Join(t.TempDir(), "creds"))
	require.NoError(t, err)
	users, err := natsauth.ReadUsers(c.Users)
	require.NoError(t, err)
	conf, err := natsauth.ServerConfig(users)
	require.NoError(t, err)
	var opts server.Options
	require.NoError(t, opts.ProcessConfigString(string(conf)))
	require.Len(t, opts.Nkeys, 2)
	for i, u := range users {
		assert.Equal(t, u.NKey, opts.Nkeys[i].Nkey)
		assert.Equal(t, natsauth.Permissions(u.Role).Publish, opts.Nkeys[i].Permissions.Publish, u.Role)
		assert.Equal(t, natsauth.Permissions(u.Role).Subscribe, opts.Nkeys[i].Permissions.Subscribe, u.Role)
	}
	_, err = natsauth.ServerConfig(nil)
	require.Error(t, err)
}
