package server_test

import (
	"bytes"
	"encoding/json"
	"github.com/geostat-engine/geostat/worker/problem"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/geostat-engine/geostat/worker/workertest"
	"github.com/stretchr/testify/require"
)

const (
	testToken = "test-token-0123456789"
	org       = "11111111-1111-4111-8111-111111111111"
	wsID      = "22222222-2222-4222-8222-222222222222"
	wsPrefix  = "/geoscience-object/orgs/" + org + "/workspaces/" + wsID
)

var testWS = store.Workspace{Org: org, ID: wsID}

// startApp starts a worker on 127.0.0.1:0 with a temporary data directory and
// GEOSTAT_TOKEN=testToken (unless opts says otherwise), serving over real
// HTTP until the test ends.
func startApp(t *testing.T, opts server.Options) *server.App {
	t.Helper()
	objecttest.Schemas(t) // fail clearly when the schemas are missing
	return workertest.StartApp(t, opts, testToken)
}

// client sends requests to an app with a bearer token.
type client struct {
	t     *testing.T
	base  string
	token string
}

func newClient(t *testing.T, app *server.App, token string) *client {
	return &client{t: t, base: app.URL(), token: token}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// problem decodes a problem body and checks its status member equals the
// HTTP status.
func (r *response) problem(t *testing.T) map[string]any {
	t.Helper()
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), "body: %s", r.body)
	var p map[string]any
	r.json(t, &p)
	require.Equal(t, float64(r.status), p["status"], "status member equals the HTTP status")
	require.NotEmpty(t, p["title"])
	return p
}

func (c *client) do(method, path string, body []byte, hdr ...string) *response {
	c.t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = c.base + path
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	require.NoError(c.t, err)
	if body == nil {
		req.Body = nil
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

// expectProblem asserts a problem response with the given status and type
// suffix (under the object error base unless it is a full URI).
func expectProblem(t *testing.T, r *response, status int, typ string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	p := r.problem(t)
	if !strings.HasPrefix(typ, "https://") {
		typ = problem.ObjectBase + typ
	}
	require.Equal(t, typ, p["type"])
	return p
}

// uploadBlobs uploads every blob of b: even-numbered ones with a whole-body
// PUT, odd ones in the Azure block form (three blocks, committed in order).
func (c *client) uploadBlobs(b *objecttest.Blobs) {
	c.t.Helper()
	keys := b.Keys()
	var reqs []store.DataRequest
	for _, k := range keys {
		reqs = append(reqs, store.DataRequest{Name: k})
	}
	body, _ := json.Marshal(reqs)
	r := c.do(http.MethodPut, wsPrefix+"/data", body)
	require.Equal(c.t, http.StatusOK, r.status, "body: %s", r.body)
	var resp []store.DataResponse
	r.json(c.t, &resp)
	require.Len(c.t, resp, len(keys))
	for i, d := range resp {
		require.Equal(c.t, keys[i], d.Name)
		if d.Exists {
			continue
		}
		require.NotNil(c.t, d.UploadURL)
		data, _ := b.Get(d.Name)
		anon := &client{t: c.t, base: c.base} // signed URLs need no token
		if i%2 == 0 {
			r := anon.do(http.MethodPut, *d.UploadURL, data, "x-ms-blob-type", "BlockBlob")
			require.Equal(c.t, http.StatusCreated, r.status, "body: %s", r.body)
			continue
		}
		anon.blockUpload(*d.UploadURL, data, 3)
	}
}

// blockUpload uploads data in n blocks (ids: base64 of the 32-digit
// zero-padded offset, as the SDK makes them), staging them in reverse order,
// then commits the block list.
func (c *client) blockUpload(uploadURL string, data []byte, n int) {
	c.t.Helper()
	size := (len(data) + n - 1) / n
	var ids []string
	type block struct {
		id   string
		data []byte
	}
	var blocks []block
	for off := 0; off < len(data); off += size {
		id := blockID(off)
		ids = append(ids, id)
		blocks = append(blocks, block{id, data[off:min(len(data), off+size)]})
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		r := c.do(http.MethodPut, uploadURL+"&comp=block&blockid="+urlQueryEscape(blocks[i].id), blocks[i].data)
		require.Equal(c.t, http.StatusCreated, r.status, "body: %s", r.body)
	}
	r := c.do(http.MethodPut, uploadURL+"&comp=blocklist", []byte(blockListXML(ids)), "Content-Type", "text/plain; charset=UTF-8")
	require.Equal(c.t, http.StatusCreated, r.status, "body: %s", r.body)
}

// postObject posts a document by path and returns the version record.
func (c *client) postObject(path string, doc []byte, hdr ...string) store.VersionRecord {
	c.t.Helper()
	r := c.do(http.MethodPost, wsPrefix+"/objects/path/"+path, doc, hdr...)
	require.Equal(c.t, http.StatusCreated, r.status, "body: %s", r.body)
	var rec store.VersionRecord
	r.json(c.t, &rec)
	return rec
}
