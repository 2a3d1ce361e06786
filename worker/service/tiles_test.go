package service_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// knn, idw and kriging onto the demo's grids (43,200 cells, the masked grid
// its active cells), and the location-wise statistics of a simulation of
// the masked grid, run as tiles of 4,096 cells on a cluster worker (role
// all: it computes its own shards) and write attributes whose Parquet blobs,
// and so their SHA-256 data keys, equal those a worker outside a cluster
// writes.
func TestClusterTilesEqualSingleProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three estimates twice, once through NATS")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	natsAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logs := &syncBuffer{}
	run := func(opts service.Options) map[string]string {
		opts = testOptions(t.TempDir(), opts)
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
		s, stop := run(t, opts)
		defer stop()
		c := &workertest.Client{Base: s.URL(), Token: token}
		_, err := s.SeedDemo(ctx)
		require.NoError(t, err)
		url := func(p string) string {
			return c.Base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + p
		}
		lw, err := json.Marshal(map[string]any{"parameters": map[string]any{
			"source":  map[string]any{"object": url(demo.MaskedGridPath), "attribute": "cell_attributes[?name=='simulation-results']"},
			"target":  map[string]any{"object": url(demo.MaskedGridPath)},
			"summary": true, "quantiles": []float64{0.1, 0.5, 0.9}, "probability_above_cutoff": map[string]any{"cutoffs": []float64{0.5}}}})
		require.NoError(t, err)
		for _, task := range []string{"knn", "idw", "kriging", "conditional-turning-bands", "location-wise"} {
			call := demo.Call{Topic: "geostatistics", Task: task, Body: lw}
			if task != "location-wise" {
				call = demoCall(t, c.Base, "geostatistics", task)
			}
			r, err := c.Do(ctx, http.MethodPost, call.Path(), call.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
			job, err := c.Follow(ctx, r.Header.Get("Location"))
			require.NoError(t, err)
			require.Equal(t, "succeeded", job.Status, "%s: %+v", task, job)
		}
		keys := map[string]string{}
		for _, path := range []string{demo.GridPath, demo.MaskedGridPath} {
			for name, key := range cellAttributeKeys(t, ctx, c, path) {
				keys[path+" "+name] = key
			}
		}
		return keys
	}
	single := run(service.Options{})
	require.NotContains(t, logs.String(), "shard started")
	tiled := run(service.Options{Cluster: service.ClusterOptions{Listen: natsAddr, Users: natsCredentials(t).Users, ShardCells: 4096}})
	// Each estimate and the statistics ran as tiles: three tile jobs and
	// a location-wise one, of several shards each (the grid's 43,200 cells
	// make 11), beside the simulation.
	done := map[string]int{}
	for _, m := range regexp.MustCompile(`msg=shard job=(\S+) .*outcome=done`).FindAllStringSubmatch(logs.String(), -1) {
		done[m[1]]++
	}
	kinds := map[string]int{}
	for job, n := range done {
		kind, _, _ := strings.Cut(job, "-")
		kinds[kind]++
		if kind != "sim" {
			require.Greater(t, n, 1, job)
		}
	}
	require.Equal(t, map[string]int{"tile": 3, "lw": 1, "sim": 1}, kinds, "%s", logs.String())
	for _, name := range []string{"cu_knn", "cu_idw", "cu_ok", "simulation-results", "Quantile: 0.5", "Prob>0.5"} {
		found := false
		for k := range single {
			found = found || len(k) > len(name) && k[len(k)-len(name):] == name
		}
		require.True(t, found, "%s written: %v", name, single)
	}
	require.Equal(t, single, tiled)
}

// cellAttributeKeys returns the data key of every cell attribute of the
// object at path.
func cellAttributeKeys(t *testing.T, ctx context.Context, c *workertest.Client, path string) map[string]string {
	r, err := c.Do(ctx, http.MethodGet, "/geoscience-object/orgs/"+demo.Org+"/workspaces/"+demo.Workspace+"/objects/path/"+path, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var obj struct {
		Object struct {
			CellAttributes []struct {
				Name   string `json:"name"`
				Values struct {
					Data string `json:"data"`
				} `json:"values"`
			} `json:"cell_attributes"`
		} `json:"object"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &obj))
	out := map[string]string{}
	for _, a := range obj.Object.CellAttributes {
		out[a.Name] = a.Values.Data
	}
	return out
}
