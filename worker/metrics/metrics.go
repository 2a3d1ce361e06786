// Package metrics holds the worker's Prometheus metrics: compute jobs by
// task and status, job durations by task, running and queued jobs, and HTTP
// requests by route pattern and
// status code (never by raw path), plus the Go runtime and process
// collectors. Each Metrics has its own registry: no global state.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is a registry with the worker's collectors.
type Metrics struct {
	reg          *prometheus.Registry
	jobs         *prometheus.CounterVec
	jobDurations *prometheus.HistogramVec
	submissions  *prometheus.CounterVec
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
}

// New returns a registry with the worker's metrics and the Go and process
// collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.jobs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "geostat_jobs_total", Help: "Compute jobs that reached a final status, by topic, task and status.",
	}, []string{"topic", "task", "status"})
	m.jobDurations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "geostat_job_duration_seconds", Help: "Wall time of finished compute jobs, by topic and task.",
		Buckets: prometheus.ExponentialBuckets(0.01, 3, 12),
	}, []string{"topic", "task"})
	m.submissions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "geostat_task_submissions_total", Help: "Task submissions by topic, task and HTTP status of the answer.",
	}, []string{"topic", "task", "code"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "geostat_http_requests_total", Help: "HTTP requests by method, route pattern and status code.",
	}, []string{"method", "route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "geostat_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	m.reg.MustRegister(m.jobs, m.jobDurations, m.submissions, m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// JobFinished records a job that reached a final status.
func (m *Metrics) JobFinished(topic, task, status string, d time.Duration) {
	m.jobs.WithLabelValues(topic, task, status).Inc()
	m.jobDurations.WithLabelValues(topic, task).Observe(d.Seconds())
}

// Submitted records a task submission and the status it was answered with.
func (m *Metrics) Submitted(topic, task string, code int) {
	m.submissions.WithLabelValues(topic, task, strconv.Itoa(code)).Inc()
}

// Request records an HTTP request by its route pattern ("" for requests
// that matched no route).
func (m *Metrics) Request(method, pattern string, code int, d time.Duration) {
	if pattern == "" {
		pattern = "unmatched"
	}
	m.requests.WithLabelValues(method, pattern, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(pattern).Observe(d.Seconds())
}

// WatchJobs adds the gauges geostat_jobs_running and geostat_jobs_queued,
// read from counts at every scrape.
func (m *Metrics) WatchJobs(counts func() (running, queued int)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "geostat_jobs_running", Help: "Compute jobs running now."},
			func() float64 { r, _ := counts(); return float64(r) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "geostat_jobs_queued", Help: "Compute jobs waiting to start (for a slot or for memory)."},
			func() float64 { _, q := counts(); return float64(q) }))
}

// WatchCluster adds the counter geostat_cluster_cleanup_failures_total,
// read from cleanupFailures at every scrape: the cluster jobs whose
// cleanup (their inputs, results and records) failed after they ended;
// their leftovers stay in the cluster's stores.
func (m *Metrics) WatchCluster(cleanupFailures func() uint64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "geostat_cluster_cleanup_failures_total",
		Help: "Cluster jobs whose cleanup (inputs, shard results, records) failed after they ended; the job's outcome stands and the leftovers stay in the cluster.",
	}, func() float64 { return float64(cleanupFailures()) }))
}

// Registry returns the underlying registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
