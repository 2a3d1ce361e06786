package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// workerToken is the bearer token of the in-process worker (GEOSTAT_TOKEN:
// owner of every workspace), never used outside the process.
const workerToken = "geostat-bench-token"

func workerE2E() harness.Scenario {
	return harness.Scenario{
		Name: "worker-e2e",
		Description: "in-process worker on 127.0.0.1: upload the simulation case, conditional turning bands over HTTP " +
			"(500 lines, SK), download and decode the ensemble",
		Setup: setupWorkerE2E,
	}
}

func setupWorkerE2E(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, set, err := simulationSet(cfg)
	if err != nil {
		return nil, err
	}
	var upload int
	for _, k := range set.Keys {
		upload += len(set.Blobs[k])
	}
	for _, o := range set.Objects {
		upload += len(o.Doc)
	}

	client, closeWorker, err := startWorker("geostat-bench-worker-")
	if err != nil {
		return nil, err
	}

	realisations := simulationRealisations(cfg.Size)
	cells := c.Grid.NumCells()
	var (
		run        int
		ensemble   []byte
		simSeconds float64
	)
	w := &harness.Workload{
		Info: fmt.Sprintf("%d objects and %d blobs (%d bytes) up, %d data, %d cells (%v), %s, 500 lines; ensemble down",
			len(set.Objects), len(set.Keys), upload, len(c.Grades), cells, c.Grid.Size, plural(realisations, "realisation")),
		Items: int64(cells),
		Unit:  "cells",
		Counts: []harness.Count{
			{Name: "cell realisations", PerRun: float64(cells * realisations)},
		},
		Close: closeWorker,
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		ensemble = nil
		run++
		// A fresh workspace per run, so every run uploads everything.
		ws := fmt.Sprintf("00000000-0000-4000-8000-%012x", run)
		if err := uploadSet(ctx, client, demo.Org, ws, set); err != nil {
			return err
		}
		url := func(p string) string { return client.ObjectURL(demo.Org, ws, p) }
		t0 := time.Now()
		job, err := client.RunTask(ctx, demo.Org, "conditional-turning-bands", map[string]any{
			"source":           url(demo.PointsPath),
			"source_attribute": "locations.attributes[?name=='cu']",
			"target":           url(demo.GridPath),
			"distribution":     url(demo.DistributionPath),
			"variogram_model":  url(demo.VariogramPath),
			"realizations":     realisations,
			"number_of_lines":  simulationLines,
			"random_seed":      cfg.Seed % (1 << 53),
		})
		simSeconds = time.Since(t0).Seconds()
		if err != nil {
			return fmt.Errorf("conditional-turning-bands: %w", err)
		}
		if job.Status != "succeeded" {
			return fmt.Errorf("conditional-turning-bands job %s: %s", job.Status, job.Error)
		}
		ensemble, err = downloadEnsemble(ctx, client, demo.Org, ws, demo.GridPath, "simulation-results")
		return err
	}
	w.Check = func() error {
		t, err := objects.ReadTable(bytes.NewReader(ensemble), int64(len(ensemble)),
			objects.Float64Spec("simulation-results", realisations, int64(cells)))
		if err != nil {
			return err
		}
		cols, err := t.Float64Columns("simulation-results", false)
		if err != nil {
			return err
		}
		var sum float64
		for r, col := range cols {
			if _, err := checkValues(fmt.Sprintf("realisation %d", r), col, c.Distribution.Min(), c.Distribution.Max(), len(col)); err != nil {
				return err
			}
			for _, v := range col {
				sum += v
			}
		}
		mean, want := sum/float64(cells*realisations), meanOf(c.Grades)
		if math.Abs(mean-want) > 0.3*want {
			return fmt.Errorf("ensemble mean %.4g differs from the data mean %.4g by more than 30 %%", mean, want)
		}
		return nil
	}
	var downloaded int
	w.Release = func() {
		downloaded = len(ensemble)
		ensemble = nil
	}
	w.Details = func() map[string]float64 {
		return map[string]float64{
			"upload_bytes":     float64(upload),
			"download_bytes":   float64(downloaded),
			"simulate_seconds": simSeconds,
		}
	}
	return w, nil
}

// simulationSet builds the simulation case of cfg and its objects and
// blobs (the set a worker scenario uploads).
func simulationSet(cfg harness.Config) (*synthetic.Case, *demo.Set, error) {
	c, err := synthetic.New(synthetic.Simulation(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, nil, err
	}
	set, err := demo.Build(c)
	if err != nil {
		return nil, nil, fmt.Errorf("building the case's objects: %w", err)
	}
	return c, set, nil
}

// startWorker starts an in-process worker on 127.0.0.1 with a fresh
// temporary data directory (its name starting with prefix) and the bearer
// token workerToken, its logs discarded. It returns a client of it and
// closeWorker, which stops the worker, waits for it and removes the
// directory.
func startWorker(prefix string) (client *workertest.Client, closeWorker func(), err error) {
	_, client, closeWorker, err = startService(prefix)
	return client, closeWorker, err
}

// startService is startWorker also returning the running service.
func startService(prefix string) (svc *service.Service, client *workertest.Client, closeWorker func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err = service.New(service.Options{Options: server.Options{
		Addr:    "127.0.0.1:0",
		DataDir: dir,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Stdout:  io.Discard,
		Getenv: func(k string) string {
			if k == server.TokenEnv {
				return workerToken
			}
			return ""
		},
	}})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, fmt.Errorf("starting the worker: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(runCtx) }()
	closeWorker = func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}
	return svc, &workertest.Client{Base: svc.URL(), Token: workerToken}, closeWorker, nil
}

// uploadSet uploads the set's blobs through PUT data and the signed upload
// URLs, then posts every object by path.
func uploadSet(ctx context.Context, c *workertest.Client, org, ws string, set *demo.Set) error {
	for lo := 0; lo < len(set.Keys); lo += 32 {
		var req []store.DataRequest
		for _, k := range set.Keys[lo:min(lo+32, len(set.Keys))] {
			req = append(req, store.DataRequest{Name: k})
		}
		body, err := json.Marshal(req)
		if err != nil {
			return err
		}
		r, err := c.Do(ctx, http.MethodPut, workertest.WorkspacePrefix(org, ws)+"/data", body)
		if err != nil {
			return err
		}
		if err := r.Expect(http.StatusOK); err != nil {
			return fmt.Errorf("PUT data: %w", err)
		}
		var links []store.DataResponse
		if err := r.JSON(&links); err != nil {
			return err
		}
		for _, l := range links {
			if l.Exists || l.UploadURL == nil {
				continue
			}
			if err := c.Upload(ctx, *l.UploadURL, set.Blobs[l.Name], 1); err != nil {
				return fmt.Errorf("uploading %s: %w", l.Name, err)
			}
		}
	}
	for _, o := range set.Objects {
		if _, err := c.PostObject(ctx, org, ws, o.Path, o.Doc); err != nil {
			return err
		}
	}
	return nil
}

// downloadEnsemble reads the latest version of the object at path and
// downloads the values blob of its cell attribute called name.
func downloadEnsemble(ctx context.Context, c *workertest.Client, org, ws, path, name string) ([]byte, error) {
	r, err := c.Do(ctx, http.MethodGet, workertest.WorkspacePrefix(org, ws)+"/objects/path/"+path, nil)
	if err != nil {
		return nil, err
	}
	if err := r.Expect(http.StatusOK); err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	var rec store.VersionRecord
	if err := r.JSON(&rec); err != nil {
		return nil, err
	}
	key, err := attributeKey(rec.Object, name)
	if err != nil {
		return nil, fmt.Errorf("%s, latest version: %w", path, err)
	}
	return c.Download(ctx, &rec, key)
}
