package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/workertest"
)

// The tiny job of jobs-overhead: a knn mean of jobsPoints points onto the
// jobsGrid cells of a grid, at most jobsMaxSamples neighbours each.
const (
	jobsPoints     = 20
	jobsMaxSamples = 4
	jobsAttribute  = "knn"
	// jobsPollEvery is the pause between two status polls of a job, and
	// jobsJobTimeout bounds the wait for one job.
	jobsPollEvery  = time.Millisecond
	jobsJobTimeout = time.Minute
)

var jobsGrid = objecttest.GridSpec{Origin: [3]float64{0, 0, 0}, Size: [3]int{2, 2, 2}, CellSize: [3]float64{50, 50, 5}}

var jobsEllipsoid = geostat.Ellipsoid{Major: 200, SemiMajor: 200, Minor: 50}

// jobsCount is the number of jobs of one run of jobs-overhead.
func jobsCount(z synthetic.Size) int {
	switch z {
	case synthetic.Small:
		return 50
	case synthetic.Large:
		return 5000
	}
	return 1000
}

// jobsOverhead measures the job layer (worker/jobs, its JetStream store
// worker/jobs/jskv) on the production path of a local job: an in-process
// worker with its embedded NATS server, jobs submitted over HTTP one after
// another, each waited for before the next. Its details, over the timed
// runs (the warm-up excluded):
//
//   - submit_to_done_p50_ms, _p99_ms, _max_ms: from the POST to the first
//     status answer 200 (the job finished), nearest rank; the status is
//     polled every jobsPollEvery, so a figure includes up to that much
//     waiting;
//   - nats_msgs_out_per_job, nats_msgs_in_per_job (and _bytes_): the growth
//     of the worker's NATS connection counters (service.Service.NATSStats,
//     nats.Conn.Stats) over the job loops, divided by the jobs. Out counts
//     every message the worker publishes: JetStream API requests, key-value
//     puts and stream publishes awaiting an ack, and acks of queue
//     deliveries; in counts replies, acks and deliveries (queue messages,
//     watch updates). Out is the upper bound of the worker's JetStream round
//     trips per job (an ack of a delivery is a publish without a reply). The
//     idle worker's own traffic (about 0.2 out and 0.6 in per second) is
//     included; it is below 0.01 per job at 20 ms a job. Status polls read
//     the job from memory and add no message;
//   - status_polls_per_job.
func jobsOverhead() harness.Scenario {
	return harness.Scenario{
		Name: "jobs-overhead",
		Description: "job-layer overhead of a local job: in-process worker with its embedded NATS JetStream (job records and queue), " +
			"tiny knn jobs (20 points onto 8 cells) submitted one after another over HTTP on the current-client topic " +
			"(303, then the status polled every 1 ms until done); details: submit-to-done p50/p99 and the NATS messages " +
			"of the worker's connection per job",
		Setup: setupJobsOverhead,
	}
}

// jobsCase is the tiny knn case: points, grades and the oracle's means.
type jobsCase struct {
	xyz, grade, want []float64
}

func newJobsCase(seed uint64) (*jobsCase, error) {
	rng := rand.New(rand.NewPCG(seed, 11))
	c := &jobsCase{}
	for range jobsPoints {
		x, y, z := rng.Float64()*100, rng.Float64()*100, rng.Float64()*10
		c.xyz = append(c.xyz, x, y, z)
		c.grade = append(c.grade, 1+math.Sin(x/15)+0.5*math.Cos(y/20)+0.1*rng.NormFloat64())
	}
	g, err := grid.New(jobsGrid.Origin, jobsGrid.Size, jobsGrid.CellSize, geostat.Rotation{})
	if err != nil {
		return nil, err
	}
	ix, err := neighbor.NewIndex(c.xyz, c.grade, nil, neighbor.Params{Ellipsoid: jobsEllipsoid, MaxSamples: jobsMaxSamples})
	if err != nil {
		return nil, err
	}
	c.want = make([]float64, g.NumCells())
	if err := ix.Mean(context.Background(), c.grade, g.CellCentres(nil), c.want, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// jobsStats accumulates the figures of the timed runs of jobs-overhead.
type jobsStats struct {
	latencies []time.Duration // submit to done, every job
	polls     int             // status requests
	jobs      int
	nats      nats.Statistics // growth over the job loops
}

func setupJobsOverhead(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	n := jobsCount(cfg.Size)
	jc, err := newJobsCase(cfg.Seed)
	if err != nil {
		return nil, err
	}
	svc, client, closeWorker, err := startService("geostat-bench-jobs-")
	if err != nil {
		return nil, err
	}
	var (
		run      int
		ws       string
		statuses []string // status URL of every job of the last run
		timed    jobsStats
	)
	w := &harness.Workload{
		Info: fmt.Sprintf("%d knn jobs in a row (%d points onto %d cells, %d neighbours), each writing a version of the same grid",
			n, jobsPoints, len(jc.want), jobsMaxSamples),
		Items: int64(n),
		Unit:  "jobs",
		Close: closeWorker,
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		run++
		// A fresh workspace per run: every run writes its own grid's versions.
		ws = fmt.Sprintf("00000000-0000-4000-8000-%012x", run)
		body, err := tinyJobsRequest(ctx, client, ws, jc)
		if err != nil {
			return err
		}
		var st jobsStats
		statuses = statuses[:0]
		before := svc.NATSStats()
		for i := range n {
			t0 := time.Now()
			status, polls, err := runTinyJob(ctx, client, body)
			if err != nil {
				return fmt.Errorf("job %d of %d: %w", i+1, n, err)
			}
			st.latencies = append(st.latencies, time.Since(t0))
			st.polls += polls
			statuses = append(statuses, status)
			if progress != nil {
				progress(i+1, n)
			}
		}
		after := svc.NATSStats()
		if run == 1 {
			return nil // the warm-up run
		}
		timed.latencies = append(timed.latencies, st.latencies...)
		timed.polls += st.polls
		timed.jobs += n
		timed.nats.OutMsgs += after.OutMsgs - before.OutMsgs
		timed.nats.InMsgs += after.InMsgs - before.InMsgs
		timed.nats.OutBytes += after.OutBytes - before.OutBytes
		timed.nats.InBytes += after.InBytes - before.InBytes
		return nil
	}
	w.Check = func() error {
		return checkTinyJobs(ctx, client, ws, statuses, jc.want)
	}
	w.Details = func() map[string]float64 {
		return jobsDetails(timed)
	}
	return w, nil
}

// tinyJobsRequest uploads the points and the grid of the tiny case to the
// workspace ws and returns the body of the knn request that writes the
// attribute jobsAttribute of the grid.
func tinyJobsRequest(ctx context.Context, c *workertest.Client, ws string, jc *jobsCase) ([]byte, error) {
	b := objecttest.NewBlobs()
	points := b.Pointset("1.3.0", jc.xyz, b.Scalar("grade", "k-grade", jc.grade))
	target := b.Grid("1.2.0", jobsGrid)
	if err := c.UploadBlobs(ctx, demo.Org, ws, b, 1); err != nil {
		return nil, err
	}
	if _, err := c.PostObject(ctx, demo.Org, ws, "jobs/points.json", objecttest.JSON(points)); err != nil {
		return nil, err
	}
	if _, err := c.PostObject(ctx, demo.Org, ws, "jobs/grid.json", objecttest.JSON(target)); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": c.ObjectURL(demo.Org, ws, "jobs/points.json"), "attribute": "locations.attributes[?name=='grade']"},
		"target": map[string]any{"object": c.ObjectURL(demo.Org, ws, "jobs/grid.json"),
			"attribute": map[string]any{"operation": "create", "name": jobsAttribute}},
		"neighborhood": map[string]any{"max_samples": jobsMaxSamples, "ellipsoid": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": jobsEllipsoid.Major, "semi_major": jobsEllipsoid.SemiMajor, "minor": jobsEllipsoid.Minor},
			"rotation":         map[string]any{"dip_azimuth": 0, "dip": 0, "pitch": 0}}},
	}})
}

// runTinyJob posts a knn request of the current shape, expects the 303 to
// the job status and polls it every jobsPollEvery until it answers 200 (the
// job finished), at most jobsJobTimeout. It returns the status URL and the
// number of status requests.
func runTinyJob(ctx context.Context, c *workertest.Client, body []byte) (string, int, error) {
	r, err := c.Do(ctx, http.MethodPost, "/compute/orgs/"+demo.Org+"/geostatistics/knn", body)
	if err != nil {
		return "", 0, err
	}
	if err := r.Expect(http.StatusSeeOther); err != nil {
		return "", 0, err
	}
	status := r.Header.Get("Location")
	deadline := time.Now().Add(jobsJobTimeout)
	for polls := 1; ; polls++ {
		r, err := c.Do(ctx, http.MethodGet, status, nil)
		if err != nil {
			return "", polls, err
		}
		if r.Status == http.StatusOK {
			return status, polls, nil
		}
		if err := r.Expect(http.StatusAccepted); err != nil {
			return "", polls, err
		}
		if time.Now().After(deadline) {
			return "", polls, fmt.Errorf("%s: not finished after %v", status, jobsJobTimeout)
		}
		select {
		case <-ctx.Done():
			return "", polls, ctx.Err()
		case <-time.After(jobsPollEvery):
		}
	}
}

// checkTinyJobs checks that every job of the run succeeded and wrote its
// own version of the grid whose knn attribute is the oracle's: the latest
// version's values are read and compared with want, and every job's
// version must name the same values blob (keys are SHA-256 of the bytes).
func checkTinyJobs(ctx context.Context, c *workertest.Client, ws string, statuses []string, want []float64) error {
	if len(statuses) == 0 {
		return fmt.Errorf("no job ran")
	}
	versions := map[string]bool{}
	var id, wantKey string
	for i, status := range statuses {
		r, err := c.Do(ctx, http.MethodGet, strings.TrimSuffix(status, "/status"), nil)
		if err != nil {
			return err
		}
		if err := r.Expect(http.StatusOK); err != nil {
			return fmt.Errorf("job %d results: %w", i+1, err)
		}
		var res struct {
			Status  string          `json:"status"`
			Error   json.RawMessage `json:"error"`
			Results struct {
				Target struct {
					Reference string `json:"reference"`
				} `json:"target"`
			} `json:"results"`
		}
		if err := r.JSON(&res); err != nil {
			return fmt.Errorf("job %d results: %w", i+1, err)
		}
		if res.Status != "succeeded" {
			return fmt.Errorf("job %d (%s): %s: %s", i+1, status, res.Status, res.Error)
		}
		u, err := url.Parse(res.Results.Target.Reference)
		if err != nil {
			return fmt.Errorf("job %d target reference: %w", i+1, err)
		}
		version := u.Query().Get("version")
		if version == "" || versions[version] {
			return fmt.Errorf("job %d: target reference %q does not name a version of its own", i+1, res.Results.Target.Reference)
		}
		versions[version] = true
		if id == "" {
			id = path.Base(u.Path)
		} else if path.Base(u.Path) != id {
			return fmt.Errorf("job %d wrote object %s, job 1 %s", i+1, path.Base(u.Path), id)
		}
		if i == len(statuses)-1 {
			key, err := checkTinyValues(ctx, c, ws, id, version, want)
			if err != nil {
				return fmt.Errorf("job %d: %w", i+1, err)
			}
			wantKey = key
		}
	}
	for version := range versions {
		rec, err := c.GetObject(ctx, demo.Org, ws, id, version)
		if err != nil {
			return err
		}
		key, err := attributeKey(rec.Object, jobsAttribute)
		if err != nil {
			return fmt.Errorf("version %s: %w", version, err)
		}
		if key != wantKey {
			return fmt.Errorf("version %s: attribute %s holds blob %s, the checked version %s", version, jobsAttribute, key, wantKey)
		}
	}
	return nil
}

// checkTinyValues reads the knn attribute of a version of the grid,
// compares its values with want and returns its blob key.
func checkTinyValues(ctx context.Context, c *workertest.Client, ws, id, version string, want []float64) (string, error) {
	rec, err := c.GetObject(ctx, demo.Org, ws, id, version)
	if err != nil {
		return "", err
	}
	obj, err := objects.Decode(rec.Object)
	if err != nil {
		return "", err
	}
	a, err := obj.ResolveAttribute("cell_attributes[?name=='" + jobsAttribute + "']")
	if err != nil {
		return "", err
	}
	blobs := objecttest.NewBlobs()
	for _, l := range rec.Links.Data {
		data, err := c.Download(ctx, rec, l.Name)
		if err != nil {
			return "", err
		}
		blobs.Put(l.Name, data)
	}
	cols, err := obj.ReadContinuous(ctx, blobs, a)
	if err != nil {
		return "", err
	}
	if len(cols) != 1 || len(cols[0]) != len(want) {
		return "", fmt.Errorf("attribute %s: want 1 column of %d values", jobsAttribute, len(want))
	}
	for i, v := range cols[0] {
		if v != want[i] && !(math.IsNaN(v) && math.IsNaN(want[i])) {
			return "", fmt.Errorf("cell %d: %v, the library's knn mean is %v", i, v, want[i])
		}
	}
	return attributeKey(rec.Object, jobsAttribute)
}

// attributeKey returns the values blob key of the cell attribute called
// name of an object document.
func attributeKey(doc json.RawMessage, name string) (string, error) {
	var obj struct {
		CellAttributes []struct {
			Name   string `json:"name"`
			Values struct {
				Data string `json:"data"`
			} `json:"values"`
		} `json:"cell_attributes"`
	}
	if err := json.Unmarshal(doc, &obj); err != nil {
		return "", err
	}
	for _, a := range obj.CellAttributes {
		if a.Name == name {
			return a.Values.Data, nil
		}
	}
	return "", fmt.Errorf("no cell attribute %s", name)
}

// jobsDetails are the figures of jobs-overhead over its timed runs.
func jobsDetails(s jobsStats) map[string]float64 {
	if s.jobs == 0 {
		return nil
	}
	lat := slices.Clone(s.latencies)
	slices.Sort(lat)
	jobs := float64(s.jobs)
	return map[string]float64{
		"jobs":                   jobs,
		"submit_to_done_p50_ms":  durationMs(percentile(lat, 0.50)),
		"submit_to_done_p99_ms":  durationMs(percentile(lat, 0.99)),
		"submit_to_done_max_ms":  durationMs(lat[len(lat)-1]),
		"status_polls_per_job":   float64(s.polls) / jobs,
		"nats_msgs_out_per_job":  float64(s.nats.OutMsgs) / jobs,
		"nats_msgs_in_per_job":   float64(s.nats.InMsgs) / jobs,
		"nats_bytes_out_per_job": float64(s.nats.OutBytes) / jobs,
		"nats_bytes_in_per_job":  float64(s.nats.InBytes) / jobs,
	}
}

// percentile returns the nearest-rank p-quantile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

func durationMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
