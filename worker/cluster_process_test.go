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

var shardDoneRE = regexp.MustCompile(`msg=shard job=(\S+) shard=(\S+) delivery=(\d+) outcome=done`)

// An api worker and two compute worker processes on 127.0.0.1; one compute
// worker is killed by PID (SIGKILL) in the middle of the 10-realisation
// simulation (right after it finished a shard, while it holds the next).
// Its shard is redelivered after the ack deadline and finished by the other;
// the stored ensembles are byte-identical (same SHA-256 data keys) to those
// of a worker running the simulation in its own process.
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

	natsAddr := freeAddr(t)
	data := t.TempDir()
	common := []string{"-shard-size", "1KiB", "-shard-ack-wait", "2s"} // one realisation per shard: 10 shards
	api := startProc(t, t.TempDir(), append([]string{"-data", data, "-addr", "127.0.0.1:0", "-demo", "-role", "api", "-nats-listen", natsAddr}, common...)...)
	base := api.url(t)
	computeArgs := append([]string{"-role", "compute", "-nats", "nats://" + natsAddr}, common...)
	victim := startProc(t, t.TempDir(), computeArgs...)
	other := startProc(t, t.TempDir(), computeArgs...)
	victim.waitFor(t, "geostat compute worker running")
	other.waitFor(t, "geostat compute worker running")

	// Kill the victim right after its first finished shard: it has then
	// fetched its next one.
	killed := make(chan string, 1)
	go func() {
		for line := range victim.lines {
			if m := shardDoneRE.FindStringSubmatch(line); m != nil {
				_ = syscall.Kill(victim.cmd.Process.Pid, syscall.SIGKILL)
				killed <- m[2]
				break
			}
		}
		for range victim.lines { // drain
		}
	}()
	got := runSimulation(t, base, data)
	var first string
	select {
	case first = <-killed:
	case <-time.After(time.Minute):
		t.Fatal("the victim finished no shard")
	}
	select {
	case <-victim.exited:
	case <-time.After(time.Minute):
		t.Fatal("the victim did not die")
	}
	assert.Equal(t, want, got, "the cluster's ensembles equal the single-process ones byte for byte")

	// The victim died holding a shard that the other worker then finished
	// on its second delivery; every shard was completed.
	_, otherLog := other.output()
	_, victimLog := victim.output()
	done := map[string]bool{}
	redelivered := 0
	for _, log := range []string{otherLog, victimLog} {
		for _, m := range shardDoneRE.FindAllStringSubmatch(log, -1) {
			done[m[2]] = true
			if m[3] != "1" {
				redelivered++
			}
		}
	}
	assert.Len(t, done, 10, "10 shards done: %v", done)
	assert.True(t, done[first])
	assert.GreaterOrEqual(t, redelivered, 1, "a shard redelivered after the kill:\n%s", otherLog)
	t.Logf("the victim's log:\n%s", victimLog)

	for _, p := range []*proc{other, api} {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, 0, p.wait(t))
	}
}
