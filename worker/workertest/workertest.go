// Package workertest drives a running worker over real HTTP, for tests and
// the bench command: uploads Parquet blobs through the worker's signed URLs,
// posts and reads geoscience objects, submits compute tasks and follows
// their jobs.
package workertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/store"
)

// Client talks to a worker as one bearer token.
type Client struct {
	// Base is the worker's base URL, e.g. http://127.0.0.1:8080.
	Base  string
	Token string
	// HTTP is the client used (default http.DefaultClient, which does not
	// follow 303 for POST bodies the way the compute client expects; Do
	// never follows redirects).
	HTTP *http.Client
	// NoRetry makes Do return 429 answers instead of retrying them.
	NoRetry bool
}

// maxRetries bounds the retries of a 429 answer (with a doubling delay
// from 5 ms up to 200 ms: about 15 s in all).
const maxRetries = 80

// Response is a buffered HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("decoding %q: %w", truncate(r.Body), err)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// Expect returns an error unless the response has the given status.
func (r *Response) Expect(status int) error {
	if r.Status != status {
		return fmt.Errorf("HTTP %d, want %d: %s", r.Status, status, truncate(r.Body))
	}
	return nil
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Do sends a request (path relative to Base, or an absolute URL) with the
// token and extra header pairs, without following redirects. A 429 (too
// many requests of this caller in flight) is retried a bounded number of
// times unless NoRetry is set.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, header ...string) (*Response, error) {
	delay := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		r, err := c.do(ctx, method, path, body, header...)
		if err != nil || r.Status != http.StatusTooManyRequests || c.NoRetry || attempt == maxRetries {
			return r, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, header ...string) (*Response, error) {
	u := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		u = strings.TrimRight(c.Base, "/") + path
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	hc := c.HTTP
	if hc == nil {
		hc = noRedirect
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// WorkspacePrefix is the object API prefix of a workspace.
func WorkspacePrefix(org, ws string) string {
	return "/geoscience-object/orgs/" + org + "/workspaces/" + ws
}

// UploadBlobs uploads every blob of b that the workspace does not have yet:
// PUT data for upload URLs, then a whole-body PUT of each (or, with blocks >
// 1, the block/blocklist form).
func (c *Client) UploadBlobs(ctx context.Context, org, ws string, b *objecttest.Blobs, blocks int) error {
	keys := b.Keys()
	for start := 0; start < len(keys); start += 32 {
		batch := keys[start:min(len(keys), start+32)]
		var reqs []store.DataRequest
		for _, k := range batch {
			reqs = append(reqs, store.DataRequest{Name: k})
		}
		body, _ := json.Marshal(reqs)
		r, err := c.Do(ctx, http.MethodPut, WorkspacePrefix(org, ws)+"/data", body)
		if err != nil {
			return err
		}
		if err := r.Expect(http.StatusOK); err != nil {
			return fmt.Errorf("PUT data: %w", err)
		}
		var resp []store.DataResponse
		if err := r.JSON(&resp); err != nil {
			return err
		}
		for _, d := range resp {
			if d.Exists || d.UploadURL == nil {
				continue
			}
			data, _ := b.Get(d.Name)
			if err := c.Upload(ctx, *d.UploadURL, data, blocks); err != nil {
				return fmt.Errorf("uploading %s: %w", d.Name, err)
			}
		}
	}
	return nil
}

// Upload sends data to a signed upload URL: one PUT, or blocks > 1 staged
// blocks (ids: base64 of the 32-digit zero-padded offset) and a block list.
func (c *Client) Upload(ctx context.Context, uploadURL string, data []byte, blocks int) error {
	anon := &Client{Base: c.Base, HTTP: c.HTTP} // signed URLs carry their own credential
	if blocks <= 1 {
		r, err := anon.Do(ctx, http.MethodPut, uploadURL, data, "x-ms-blob-type", "BlockBlob")
		if err != nil {
			return err
		}
		return r.Expect(http.StatusCreated)
	}
	size := (len(data) + blocks - 1) / blocks
	var list strings.Builder
	list.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>\n")
	for off := 0; off < len(data); off += size {
		id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%032d", off)))
		r, err := anon.Do(ctx, http.MethodPut, uploadURL+"&comp=block&blockid="+url.QueryEscape(id), data[off:min(len(data), off+size)])
		if err != nil {
			return err
		}
		if err := r.Expect(http.StatusCreated); err != nil {
			return err
		}
		fmt.Fprintf(&list, "  <Latest>%s</Latest>\n", id)
	}
	list.WriteString("</BlockList>")
	r, err := anon.Do(ctx, http.MethodPut, uploadURL+"&comp=blocklist", []byte(list.String()), "Content-Type", "text/plain; charset=UTF-8")
	if err != nil {
		return err
	}
	return r.Expect(http.StatusCreated)
}

// PostObject creates or updates the object at path and returns its version
// record.
func (c *Client) PostObject(ctx context.Context, org, ws, path string, doc []byte) (*store.VersionRecord, error) {
	r, err := c.Do(ctx, http.MethodPost, WorkspacePrefix(org, ws)+"/objects/path/"+path, doc)
	if err != nil {
		return nil, err
	}
	if err := r.Expect(http.StatusCreated); err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	var rec store.VersionRecord
	return &rec, r.JSON(&rec)
}

// GetObject reads an object by id (version "" = latest).
func (c *Client) GetObject(ctx context.Context, org, ws, id, version string) (*store.VersionRecord, error) {
	p := WorkspacePrefix(org, ws) + "/objects/" + id
	if version != "" {
		p += "?version=" + url.QueryEscape(version)
	}
	r, err := c.Do(ctx, http.MethodGet, p, nil)
	if err != nil {
		return nil, err
	}
	if err := r.Expect(http.StatusOK); err != nil {
		return nil, err
	}
	var rec store.VersionRecord
	return &rec, r.JSON(&rec)
}

// Download fetches a blob of a version record by its data key.
func (c *Client) Download(ctx context.Context, rec *store.VersionRecord, key string) ([]byte, error) {
	for _, l := range rec.Links.Data {
		if l.Name == key && l.DownloadURL != "" {
			r, err := (&Client{Base: c.Base, HTTP: c.HTTP}).Do(ctx, http.MethodGet, l.DownloadURL, nil)
			if err != nil {
				return nil, err
			}
			return r.Body, r.Expect(http.StatusOK)
		}
	}
	return nil, fmt.Errorf("no download link for %s", key)
}

// ObjectURL is the reference URL of an object path in a workspace.
func (c *Client) ObjectURL(org, ws, path string) string {
	return strings.TrimRight(c.Base, "/") + WorkspacePrefix(org, ws) + "/objects/path/" + path
}

// Job is a finished job's results document.
type Job struct {
	Status  string          `json:"status"`
	Results json.RawMessage `json:"results"`
	Error   json.RawMessage `json:"error"`
}

// RunTask submits a task of the current shape ({"parameters": params}) and
// follows the 303 to the job status until it finishes, then returns its
// results document.
func (c *Client) RunTask(ctx context.Context, org, task string, params any) (*Job, error) {
	body, err := json.Marshal(map[string]any{"parameters": params})
	if err != nil {
		return nil, err
	}
	r, err := c.Do(ctx, http.MethodPost, "/compute/orgs/"+org+"/geostatistics/"+task, body)
	if err != nil {
		return nil, err
	}
	if err := r.Expect(http.StatusSeeOther); err != nil {
		return nil, err
	}
	status := r.Header.Get("Location")
	return c.Follow(ctx, status)
}

// FollowTimeout bounds Follow when ctx has no deadline.
const FollowTimeout = 5 * time.Minute

// Follow polls a job status URL until the job finishes and returns its
// results document. The polling is bounded by ctx's deadline, or by
// FollowTimeout when it has none.
func (c *Client) Follow(ctx context.Context, statusURL string) (*Job, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, FollowTimeout)
		defer cancel()
	}
	delay := 5 * time.Millisecond
	for {
		r, err := c.Do(ctx, http.MethodGet, statusURL, nil)
		if err != nil {
			return nil, err
		}
		if r.Status == http.StatusOK {
			break
		}
		if err := r.Expect(http.StatusAccepted); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
	r, err := c.Do(ctx, http.MethodGet, strings.TrimSuffix(statusURL, "/status"), nil)
	if err != nil {
		return nil, err
	}
	if err := r.Expect(http.StatusOK); err != nil {
		return nil, err
	}
	var j Job
	return &j, r.JSON(&j)
}
