package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// The -e2e block model cases run bm-add-column and bm-query end to end
// through a worker on 127.0.0.1, as a client does: the update is PATCH
// …/blocks, the file PUT to the signed upload_url, POST …/uploaded, then
// the job polled until COMPLETE; the query is POST …/blocks, the job polled,
// then its file downloaded through the signed download_url to a file on
// disk. Client and worker share the process (and the heap the details
// report).

// bmWorker is a worker holding one regular model of the scenarios'
// geometry.
type bmWorker struct {
	*bmEnv // geometry, rows, heap peaks (its store is unused)
	client *workertest.Client
	stop   func()
	model  string // …/block-models/{bm_uuid}
}

func newBMWorker(cfg harness.Config) (*bmWorker, error) {
	e, err := newBMEnv(cfg, false)
	if err != nil {
		return nil, err
	}
	client, stop, err := startWorker("geostat-bench-bmworker-")
	if err != nil {
		e.close()
		return nil, err
	}
	w := &bmWorker{bmEnv: e, client: client, stop: stop}
	const ws = "00000000-0000-4000-8000-0000000b10c1"
	n := e.size.NBlocks
	body, _ := json.Marshal(map[string]any{
		"name": "bench", "model_origin": map[string]float64{"x": 1000, "y": 2000, "z": 100}, "block_rotation": []any{},
		"size_options": map[string]any{"model_type": "regular",
			"n_blocks":   map[string]int{"nx": n.NX, "ny": n.NY, "nz": n.NZ},
			"block_size": map[string]float64{"x": 5, "y": 5, "z": 5}},
	})
	models := "/blockmodel/orgs/" + demo.Org + "/workspaces/" + ws + "/block-models"
	r, err := client.Do(context.Background(), http.MethodPost, models, body)
	if err == nil {
		err = r.Expect(http.StatusCreated)
	}
	var rec struct {
		BMUUID string `json:"bm_uuid"`
	}
	if err == nil {
		err = r.JSON(&rec)
	}
	if err != nil {
		w.close()
		return nil, fmt.Errorf("creating the block model: %w", err)
	}
	w.model = models + "/" + rec.BMUUID
	return w, nil
}

func (w *bmWorker) close() {
	w.stop()
	w.bmEnv.close()
}

// job polls a job until it ends; it returns its payload when COMPLETE.
func (w *bmWorker) job(ctx context.Context, url string) (json.RawMessage, error) {
	var j struct {
		Status  string          `json:"job_status"`
		Payload json.RawMessage `json:"payload"`
	}
	for polls := 0; ; polls++ {
		r, err := w.client.Do(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		if err := r.JSON(&j); err != nil {
			return nil, err
		}
		switch {
		case j.Status == "COMPLETE":
			return j.Payload, nil
		case j.Status == "FAILED" || polls >= 60_000:
			return nil, fmt.Errorf("job %s: %s", j.Status, r.Body)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// addColumn adds the Float64 column title from the update file through
// the worker.
func (w *bmWorker) addColumn(ctx context.Context, title string, file []byte) error {
	body := fmt.Sprintf(`{"columns": {"new": [{"title": %q, "data_type": "Float64"}]},
		"input_options": {"file_format": "parquet", "column_name_mapping": [{"file_column_name": "grade", "column_title": %q}]}}`, title, title)
	r, err := w.client.Do(ctx, http.MethodPatch, w.model+"/blocks", []byte(body))
	if err != nil {
		return err
	}
	if err := r.Expect(http.StatusAccepted); err != nil {
		return fmt.Errorf("PATCH blocks: %w", err)
	}
	var up struct {
		JobURL    string `json:"job_url"`
		JobUUID   string `json:"job_uuid"`
		UploadURL string `json:"upload_url"`
	}
	if err := r.JSON(&up); err != nil {
		return err
	}
	if err := w.client.Upload(ctx, up.UploadURL, file, 1); err != nil {
		return fmt.Errorf("uploading the file: %w", err)
	}
	r, err = w.client.Do(ctx, http.MethodPost, w.model+"/jobs/"+up.JobUUID+"/uploaded", nil)
	if err != nil {
		return err
	}
	if err := r.Expect(http.StatusCreated); err != nil {
		return fmt.Errorf("POST uploaded: %w", err)
	}
	_, err = w.job(ctx, up.JobURL)
	return err
}

// query runs a query job of column title (i, j, k and the column, null
// rows left out) and downloads its file to path, streamed as a client
// saving it does; it returns the file's size.
func (w *bmWorker) query(ctx context.Context, title, path string) (int64, error) {
	body := fmt.Sprintf(`{"columns": [%q], "output_options": {"file_format": "parquet"}}`, title)
	r, err := w.client.Do(ctx, http.MethodPost, w.model+"/blocks", []byte(body))
	if err != nil {
		return 0, err
	}
	if err := r.Expect(http.StatusOK); err != nil {
		return 0, fmt.Errorf("POST blocks: %w", err)
	}
	var q struct {
		JobURL string `json:"job_url"`
	}
	if err := r.JSON(&q); err != nil {
		return 0, err
	}
	payload, err := w.job(ctx, q.JobURL)
	if err != nil {
		return 0, err
	}
	var p struct {
		DownloadURL string `json:"download_url"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.DownloadURL, nil)
	if err != nil {
		return 0, err
	}
	hc := w.client.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req) // a signed URL carries its own credential
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// 1 MiB reads and writes, as a client saving a large file does; f is
	// wrapped so that its ReadFrom, which copies 32 KiB at a time (1,500
	// system calls for a 24 MB download), does not take over.
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, resp.Body, make([]byte, 1<<20))
	if err != nil {
		return n, fmt.Errorf("download: %w", err)
	}
	return n, f.Close()
}

// checkGrades queries column title through the worker and compares
// every block with bmGrade.
func (w *bmWorker) checkGrades(ctx context.Context, title string, seed uint64) error {
	path := filepath.Join(w.dir, "check.parquet")
	if _, err := w.query(ctx, title, path); err != nil {
		return err
	}
	return checkQueryFile(path, w.rows, seed)
}

// uploadFile writes the scenarios' update file and reads it back.
func (w *bmWorker) uploadFile(seed uint64) ([]byte, error) {
	path := filepath.Join(w.dir, "upload.parquet")
	if _, err := writeUpload(path, *w.size.NBlocks, seed); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func bmAddColumnE2E() harness.Scenario {
	return harness.Scenario{
		Name:        "bm-add-column-e2e",
		Description: "bm-add-column end to end through a worker on 127.0.0.1: PATCH …/blocks, PUT the file to the signed upload_url, POST …/uploaded, the job polled until COMPLETE",
		Setup:       setupBMAddColumnE2E,
	}
}

func setupBMAddColumnE2E(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	w, err := newBMWorker(cfg)
	if err != nil {
		return nil, err
	}
	file, err := w.uploadFile(cfg.Seed)
	if err != nil {
		w.close()
		return nil, err
	}
	runs := 0
	wl := &harness.Workload{
		Info:  fmt.Sprintf("%d blocks, upload of %d bytes (pyarrow's defaults: Snappy, i j k uint32 dictionaries + grade), through a worker", w.rows, len(file)),
		Items: w.rows, Unit: "blocks",
		Counts: columnData(w.rows),
		Close:  w.close,
	}
	wl.Run = func(ctx context.Context, _ func(done, total int)) error {
		runs++
		return w.measured(func() error { return w.addColumn(ctx, fmt.Sprintf("grade_%d", runs), file) })
	}
	wl.Check = func() error { return w.checkGrades(ctx, fmt.Sprintf("grade_%d", runs), cfg.Seed) }
	wl.Details = w.details(map[string]float64{"upload_bytes": float64(len(file))})
	return wl, nil
}

func bmQueryE2E() harness.Scenario {
	return harness.Scenario{
		Name:        "bm-query-e2e",
		Description: "bm-query end to end through a worker on 127.0.0.1: POST …/blocks, the job polled until COMPLETE, the file downloaded through the signed download_url to a file on disk",
		Setup:       setupBMQueryE2E,
	}
}

func setupBMQueryE2E(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	w, err := newBMWorker(cfg)
	if err != nil {
		return nil, err
	}
	file, err := w.uploadFile(cfg.Seed)
	if err == nil {
		err = w.addColumn(ctx, "grade", file)
	}
	if err != nil {
		w.close()
		return nil, err
	}
	// Each run saves its download under a new name, as a client keeping
	// its results does; the files go with w.dir at Close. Rewriting one
	// file in place instead makes ext4 (auto_da_alloc) write it back as it
	// is closed, and the worker's next fsync then waits for the client's
	// 24 MB: disk traffic of a client on the worker's own disk, which a
	// client on its own machine does not cause.
	var out string
	var outSize int64
	runs := 0
	wl := &harness.Workload{
		Info:  fmt.Sprintf("%d blocks, one Float64 column to Parquet (i, j, k and the column), through a worker, downloaded to a file", w.rows),
		Items: w.rows, Unit: "blocks",
		Counts: columnData(w.rows),
		Close:  w.close,
	}
	wl.Run = func(ctx context.Context, _ func(done, total int)) error {
		runs++
		out = filepath.Join(w.dir, fmt.Sprintf("query-%d.parquet", runs))
		return w.measured(func() (err error) {
			outSize, err = w.query(ctx, "grade", out)
			return err
		})
	}
	wl.Check = func() error { return checkQueryFile(out, w.rows, cfg.Seed) }
	d := w.details(nil)
	wl.Details = func() map[string]float64 {
		m := d()
		m["output_bytes"] = float64(outSize)
		return m
	}
	return wl, nil
}
