package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// simulationCall is the demo's conditional turning-bands request (current
// shape, masked grid, all four outputs) with 10 realisations.
func simulationCall(t *testing.T, base string) map[string]any {
	t.Helper()
	for _, c := range demo.Calls(base) {
		if c.Task == "conditional-turning-bands" {
			var body map[string]any
			require.NoError(t, json.Unmarshal(c.Body, &body))
			params := body["parameters"].(map[string]any)
			params["realizations"] = 10
			return params
		}
	}
	t.Fatal("the demo has no conditional-turning-bands call")
	return nil
}

// runSimulation runs the demo simulation on the worker at base (data
// directory data) and returns the data keys (SHA-256 of the Parquet bytes)
// of the four ensembles it stored, by attribute name.
func runSimulation(t *testing.T, base, data string) map[string]string {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(data, server.DevTokenFile))
	require.NoError(t, err)
	c := &workertest.Client{Base: base, Token: strings.TrimSpace(string(tok))}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	params := simulationCall(t, base)
	job, err := c.RunTask(ctx, demo.Org, "conditional-turning-bands", params)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "job: %s %s", job.Results, job.Error)
	r, err := c.Do(ctx, "GET", "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+demo.MaskedGridPath, nil)
	require.NoError(t, err)
	require.NoError(t, r.Expect(200))
	var rec struct {
		Object struct {
			CellAttributes []struct {
				Name   string `json:"name"`
				Values struct {
					Data string `json:"data"`
				} `json:"values"`
			} `json:"cell_attributes"`
		} `json:"object"`
	}
	require.NoError(t, r.JSON(&rec))
	keys := map[string]string{}
	for _, a := range rec.Object.CellAttributes {
		if strings.HasPrefix(a.Name, "simulation-results") {
			keys[a.Name] = a.Values.Data
		}
	}
	require.Len(t, keys, 4, "the four ensembles: %v", keys)
	return keys
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

var shardStartedRE = regexp.MustCompile(`msg="shard started" job=\S+ shard=(\S+)`)

var shardDoneRE = regexp.MustCompile(`msg=shard job=(\S+) shard=(\S+) delivery=(\d+) outcome=done`)

// An api worker and two compute worker processes on 127.0.0.1; one compute
// worker is killed by PID (SIGKILL) in the middle of the 10-realisation
// simulation (right after it finished a shard, while it holds the next).
// Its shard is redelivered after the ack deadline and finished by the other;
// the stored ensembles are byte-identical (same SHA-256 data keys) to those
// of a worker running the simulation in its own process. Then a single
// worker of role all, its embedded server listening, stores them again.
func TestClusterWorkersKilledComputeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four worker processes")
	}
	// The single-process reference.
	refData := t.TempDir()
	ref := startProc(t, t.TempDir(), "-data", refData, "-addr", "127.0.0.1:0", "-demo")
	want := runSimulation(t, ref.url(t), refData)
	require.NoError(t, ref.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, ref.wait(t))

	// Credentials and TLS files, written by the worker's own helper.
	creds := filepath.Join(t.TempDir(), "creds")
	gen := startProc(t, t.TempDir(), "-nats-new-credentials", creds, "-nats-tls-hosts", "127.0.0.1")
	require.Equal(t, 0, gen.wait(t))
	natsAddr := freeAddr(t)
	data := t.TempDir()
	common := []string{"-shard-size", "1KiB", "-shard-ack-wait", "2s"} // one realisation per shard: 10 shards
	api := startProc(t, t.TempDir(), append([]string{"-data", data, "-addr", "127.0.0.1:0", "-demo", "-role", "api", "-nats-listen", natsAddr,
		"-nats-users", filepath.Join(creds, "users.json"), "-nats-tls-cert", filepath.Join(creds, "server-cert.pem"), "-nats-tls-key", filepath.Join(creds, "server-key.pem")}, common...)...)
	base := api.url(t)
	computeArgs := append([]string{"-role", "compute", "-nats", "nats://" + natsAddr,
		"-nats-credentials", filepath.Join(creds, "compute.nk"), "-nats-tls-ca", filepath.Join(creds, "ca.pem")}, common...)
	// The victim computes one shard at a time (its second shard starts once
	// its first is computed, while that one's result is stored); the other
	// two at once (-max-jobs default).
	victim := startProc(t, t.TempDir(), append([]string{"-max-jobs", "1", "-threads", "1"}, computeArgs...)...)
	other := startProc(t, t.TempDir(), computeArgs...)
	victim.waitFor(t, "geostat compute worker running")
	other.waitFor(t, "geostat compute worker running")

	// Kill the victim in its second shard, once it has logged starting it.
	killed := make(chan string, 1)
	go func() {
		started := 0
		for line := range victim.lines {
			if m := shardStartedRE.FindStringSubmatch(line); m != nil {
				if started++; started == 2 {
					_ = syscall.Kill(victim.cmd.Process.Pid, syscall.SIGKILL)
					killed <- m[1]
					break
				}
			}
		}
		for range victim.lines { // drain
		}
	}()
	got := runSimulation(t, base, data)
	var inFlight string
	select {
	case inFlight = <-killed:
	case <-time.After(time.Minute):
		t.Fatal("the victim started no second shard")
	}
	select {
	case <-victim.exited:
	case <-time.After(time.Minute):
		t.Fatal("the victim did not die")
	}
	assert.Equal(t, want, got, "the cluster's ensembles equal the single-process ones byte for byte")

	// Every shard was completed; the victim's first shard counts, and the
	// shard it was computing when killed was finished by the other worker
	// on a later delivery (after the 2 s ack deadline).
	_, otherLog := other.output()
	_, victimLog := victim.output()
	t.Logf("the victim's log:\n%s", victimLog)
	doneBy := map[string]string{}
	for name, log := range map[string]string{"other": otherLog, "victim": victimLog} {
		for _, m := range shardDoneRE.FindAllStringSubmatch(log, -1) {
			doneBy[m[2]] = name + "/" + m[3]
		}
	}
	assert.Len(t, doneBy, 10, "10 shards done: %v", doneBy)
	// The kill may cut the first shard's upload: it is then redelivered too.
	assert.LessOrEqual(t, len(shardDoneRE.FindAllString(victimLog, -1)), 1, "the victim finished at most its first shard")
	require.NotEmpty(t, inFlight)
	assert.Regexp(t, `^other/[2-9]$`, doneBy[inFlight], "the killed shard %s was redelivered to the other worker:\n%s", inFlight, otherLog)

	// One worker of role all with its embedded server listening computes
	// the shards itself: the same bytes again.
	allData := t.TempDir()
	all := startProc(t, t.TempDir(), append([]string{"-data", allData, "-addr", "127.0.0.1:0", "-demo", "-nats-listen", freeAddr(t), "-nats-users", filepath.Join(creds, "users.json")}, common...)...)
	assert.Equal(t, want, runSimulation(t, all.url(t), allData))
	_, allLog := all.output()
	assert.Len(t, shardDoneRE.FindAllString(allLog, -1), 10, "the worker computed the 10 shards:\n%s", allLog)
	require.NoError(t, all.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, all.wait(t))
}

// Bad cluster flags are refused before anything starts: an unknown role,
// a role other than all outside a cluster (exit 2), a compute worker
// without -nats, and -nats with -nats-listen (exit 1).
func TestClusterFlags(t *testing.T) {
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-role", "assembler"}, 2, `-role "assembler": want all, api or compute`},
		{[]string{"-role", "api"}, 2, "-role api needs -nats or -nats-listen"},
		{[]string{"-role", "compute"}, 2, "-role compute needs -nats or -nats-listen"},
		{[]string{"-role", "compute", "-nats-listen", "127.0.0.1:0"}, 1, "-role compute joins a NATS server (-nats); it embeds none"},
		{[]string{"-nats", "nats://127.0.0.1:1", "-nats-listen", "127.0.0.1:0"}, 1, "-nats and -nats-listen exclude each other"},
		{[]string{"-nats-listen", "127.0.0.1:0"}, 1, "-nats-listen 127.0.0.1:0 needs -nats-users FILE"},
		{[]string{"-nats-listen", "127.0.0.1:0", "-nats-users", "u.json", "-nats-credentials", "c.nk"}, 1, "-nats-credentials and -nats-tls-ca are for a worker joining with -nats"},
		{[]string{"-nats", "nats://127.0.0.1:1", "-nats-users", "u.json"}, 1, "are for the worker whose embedded server listens"},
		{[]string{"-nats-listen", "127.0.0.1:0", "-nats-users", "missing.json"}, 1, "-nats-users: natsauth: users file"},
		{[]string{"-nats-tls-hosts", "h"}, 2, "-nats-tls-hosts goes with -nats-new-credentials"},
		{[]string{"-shard-size", "lots"}, 2, `-shard-size: "lots" is not a size`},
		{[]string{"-shard-cells", "0"}, 2, "-shard-cells 0: want at least 1"},
	} {
		p := startProc(t, t.TempDir(), append([]string{"-data", data, "-addr", "127.0.0.1:0"}, c.args...)...)
		assert.Equal(t, c.code, p.wait(t), "%v", c.args)
		_, stderr := p.output()
		assert.Contains(t, stderr, c.msg, "%v", c.args)
		assert.NotContains(t, stderr, "geostat worker listening", "%v", c.args)
	}
	_, err := os.Stat(filepath.Join(data, "nats"))
	assert.True(t, os.IsNotExist(err), "no NATS state was created")
}

// -nats-new-credentials writes the users file and the two seed files with
// mode 0600 and refuses to overwrite them; a worker listening with
// -nats-insecure-no-auth starts and says loudly that its port is open.
func TestNATSCredentialFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	p := startProc(t, t.TempDir(), "-nats-new-credentials", dir)
	require.Equal(t, 0, p.wait(t))
	for _, name := range []string{"users.json", "api.nk", "compute.nk"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}
	b, err := os.ReadFile(filepath.Join(dir, "users.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"role": "compute"`)
	p = startProc(t, t.TempDir(), "-nats-new-credentials", dir)
	require.Equal(t, 1, p.wait(t))
	_, stderr := p.output()
	assert.Contains(t, stderr, "file exists")

	p = startProc(t, t.TempDir(), "-nats-server-config", filepath.Join(dir, "users.json"))
	require.Equal(t, 0, p.wait(t))
	stdout, _ := p.output()
	assert.True(t, strings.HasPrefix(stdout, "authorization: {"), "%s", stdout)
	assert.Contains(t, stdout, `"$JS.API.CONSUMER.MSG.NEXT.GEOSTAT_SHARDS.compute"`)

	open := startProc(t, t.TempDir(), "-data", t.TempDir(), "-addr", "127.0.0.1:0", "-nats-listen", "127.0.0.1:0", "-nats-insecure-no-auth")
	open.waitFor(t, "INSECURE: -nats-insecure-no-auth")
	open.waitFor(t, "geostat worker listening")
	require.NoError(t, open.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, open.wait(t))
}
