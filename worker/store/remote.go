package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/geostat-engine/geostat/worker/problem"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/objects"
)

// UploadBlockSize is the chunk size of the remote client's block uploads
// (the SDK's 4 MiB).
const UploadBlockSize = 4 << 20

// Remote is a client of a Geoscience Object API (the same paths the worker
// serves), authenticated with a bearer token. Blobs are uploaded through the
// URLs PUT data returns (Azure block form) and downloaded through the
// links.data URLs of object responses.
type Remote struct {
	base  string
	token string
	hc    *http.Client
}

// NewRemote returns a client of the API at baseURL (scheme and host, e.g.
// https://hub.example.com). A nil client means http.DefaultClient.
func NewRemote(baseURL, token string, hc *http.Client) (*Remote, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("store: remote base URL %q: want http(s)://host", baseURL)
	}
	if token == "" {
		return nil, errors.New("store: remote store needs a token")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Remote{base: strings.TrimSuffix(baseURL, "/"), token: token, hc: hc}, nil
}

// Close implements Store.
func (c *Remote) Close() error { return nil }

func (c *Remote) wsURL(ws Workspace) string {
	return c.base + "/geoscience-object/orgs/" + url.PathEscape(ws.Org) + "/workspaces/" + url.PathEscape(ws.ID)
}

func escapePath(p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func (c *Remote) objectURL(ws Workspace, ref Ref) string {
	if ref.ID != "" {
		return c.wsURL(ws) + "/objects/" + url.PathEscape(ref.ID)
	}
	return c.wsURL(ws) + "/objects/path/" + escapePath(ref.Path)
}

// do sends a request; statuses >= 400 become *Error from the problem body.
// withToken is false for pre-signed blob URLs.
func (c *Remote) do(ctx context.Context, method, u string, body io.Reader, hdr http.Header, withToken bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, ErrBadRequest(err.Error())
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if withToken {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, ErrStorage(fmt.Errorf("%s %s: %w", method, redact(u), err))
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, decodeProblem(resp)
	}
	return resp, nil
}

// redact drops the query (signed URLs carry credentials) from a URL for
// error messages.
func redact(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// decodeProblem turns a problem-details response into *Error, its type
// rebased from the upstream's ".../geoscienceobject" onto
// problem.ObjectBase. The status is the upstream's: an upstream 507 (its
// disk is full) is 507 here too, of type insufficient-storage when the
// upstream gave no problem type.
func decodeProblem(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	fallback := TypeBadGateway
	if resp.StatusCode == http.StatusInsufficientStorage {
		fallback = TypeInsufficientStorage
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return &Error{Status: resp.StatusCode, Type: fallback, Title: http.StatusText(resp.StatusCode),
			Detail: strings.TrimSpace(string(data))}
	}
	e := &Error{Status: resp.StatusCode, Type: fallback}
	if t, ok := m["type"].(string); ok {
		if i := strings.Index(t, "/geoscienceobject"); i >= 0 {
			e.Type = problem.ObjectBase + t[i+len("/geoscienceobject"):]
		} else {
			e.Type = t
		}
	}
	e.Title, _ = m["title"].(string)
	e.Detail, _ = m["detail"].(string)
	for k, v := range m {
		switch k {
		case "type", "title", "status", "detail":
		default:
			if e.Extra == nil {
				e.Extra = map[string]any{}
			}
			e.Extra[k] = v
		}
	}
	return e
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return &Error{Status: http.StatusBadGateway, Type: TypeBadGateway, Title: "Bad Gateway.", Detail: "invalid upstream response", Err: err}
	}
	return nil
}

func (c *Remote) version(resp *http.Response) (*Version, error) {
	var rec VersionRecord
	if err := decodeJSON(resp, &rec); err != nil {
		return nil, err
	}
	return rec.Version(), nil
}

// GetObject implements Store.
func (c *Remote) GetObject(ctx context.Context, ws Workspace, ref Ref) (*Version, error) {
	q := url.Values{}
	if ref.Version != "" {
		q.Set("version", ref.Version)
	}
	if ref.Deleted && ref.ID != "" {
		q.Set("deleted", "true")
	}
	if ref.IncludeVersions {
		q.Set("include_versions", "true")
	}
	u := c.objectURL(ws, ref)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := c.do(ctx, http.MethodGet, u, nil, nil, true)
	if err != nil {
		return nil, err
	}
	return c.version(resp)
}

// PutObject implements Store.
func (c *Remote) PutObject(ctx context.Context, ws Workspace, req PutRequest) (*Version, error) {
	if (req.Path == "") == (req.ID == "") {
		return nil, ErrBadRequest("exactly one of path and id must be given")
	}
	hdr := http.Header{"Content-Type": {"application/json"}}
	if req.IfMatch != "" {
		hdr.Set("If-Match", req.IfMatch)
	}
	if req.CheckWhitespace {
		hdr.Set("API-Preview", PreviewWhitespaceCheck)
	}
	resp, err := c.do(ctx, http.MethodPost, c.objectURL(ws, Ref{ID: req.ID, Path: req.Path}), bytes.NewReader(req.Object), hdr, true)
	if err != nil {
		return nil, err
	}
	return c.version(resp)
}

func (c *Remote) page(ctx context.Context, u, org string) (*Page, error) {
	resp, err := c.do(ctx, http.MethodGet, u, nil, nil, true)
	if err != nil {
		return nil, err
	}
	var rec ListPageRecord
	if err := decodeJSON(resp, &rec); err != nil {
		return nil, err
	}
	p := &Page{Total: rec.Total, Limit: rec.Limit, Offset: rec.Offset, Items: make([]ListItem, len(rec.Objects))}
	for i := range rec.Objects {
		p.Items[i] = rec.Objects[i].Item(org)
	}
	return p, nil
}

// ListObjects implements Store.
func (c *Remote) ListObjects(ctx context.Context, ws Workspace, opt ListOptions) (*Page, error) {
	q := url.Values{}
	if opt.Limit > 0 {
		q.Set("limit", strconv.Itoa(opt.Limit))
	}
	if opt.Offset > 0 {
		q.Set("offset", strconv.Itoa(opt.Offset))
	}
	if opt.Deleted {
		q.Set("deleted", "true")
	}
	return c.page(ctx, c.wsURL(ws)+"/objects?"+q.Encode(), ws.Org)
}

// ListOrgObjects implements Store; the query is sent as received (q.Raw) or
// reduced to paging when it was built in code.
func (c *Remote) ListOrgObjects(ctx context.Context, org string, q OrgQuery) (*Page, error) {
	raw := q.Raw
	if raw == nil {
		raw = url.Values{}
		if q.Limit > 0 {
			raw.Set("limit", strconv.Itoa(q.Limit))
		}
		if q.Offset > 0 {
			raw.Set("offset", strconv.Itoa(q.Offset))
		}
		if q.Deleted {
			raw.Set("deleted", "true")
		}
	}
	return c.page(ctx, c.base+"/geoscience-object/orgs/"+url.PathEscape(org)+"/objects?"+raw.Encode(), org)
}

// DeleteObject implements Store.
func (c *Remote) DeleteObject(ctx context.Context, ws Workspace, ref Ref, by User) error {
	resp, err := c.do(ctx, http.MethodDelete, c.objectURL(ws, ref), nil, nil, true)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// RestoreObject implements Store (POST objects/{id}?deleted=false).
func (c *Remote) RestoreObject(ctx context.Context, ws Workspace, id string, by User) (*Version, error) {
	resp, err := c.do(ctx, http.MethodPost, c.objectURL(ws, Ref{ID: id})+"?deleted=false", nil, nil, true)
	if err != nil {
		return nil, err
	}
	return c.version(resp)
}

// LatestVersions implements Store (PATCH objects).
func (c *Remote) LatestVersions(ctx context.Context, ws Workspace, ids []string) ([]LatestVersion, error) {
	body, _ := json.Marshal(ids)
	resp, err := c.do(ctx, http.MethodPatch, c.wsURL(ws)+"/objects", bytes.NewReader(body), http.Header{"Content-Type": {"application/json"}}, true)
	if err != nil {
		return nil, err
	}
	var recs []LatestVersionRecord
	if err := decodeJSON(resp, &recs); err != nil {
		return nil, err
	}
	out := make([]LatestVersion, len(recs))
	for i, r := range recs {
		out[i].ObjectID = r.ObjectID
		if r.VersionID != nil {
			out[i].VersionID = *r.VersionID
		}
	}
	return out, nil
}

func (c *Remote) requestData(ctx context.Context, ws Workspace, name string) (*DataResponse, error) {
	body, _ := json.Marshal([]DataRequest{{Name: name}})
	resp, err := c.do(ctx, http.MethodPut, c.wsURL(ws)+"/data", bytes.NewReader(body), http.Header{"Content-Type": {"application/json"}}, true)
	if err != nil {
		return nil, err
	}
	var recs []DataResponse
	if err := decodeJSON(resp, &recs); err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, &Error{Status: http.StatusBadGateway, Type: TypeBadGateway, Title: "Bad Gateway.", Detail: "PUT data returned a wrong number of entries"}
	}
	return &recs[0], nil
}

// BlobExists implements Store (PUT data).
func (c *Remote) BlobExists(ctx context.Context, ws Workspace, name string) (bool, error) {
	d, err := c.requestData(ctx, ws, name)
	if err != nil {
		return false, err
	}
	return d.Exists, nil
}

// PutBlob implements Store: PUT data for an upload URL, then the Azure block
// form in UploadBlockSize chunks (block ids are base64 of the 32-digit
// zero-padded byte offset, as the SDK makes them) and the block list.
func (c *Remote) PutBlob(ctx context.Context, ws Workspace, name string, r io.Reader) error {
	d, err := c.requestData(ctx, ws, name)
	if err != nil {
		return err
	}
	if d.Exists {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	if d.UploadURL == nil {
		return &Error{Status: http.StatusBadGateway, Type: TypeBadGateway, Title: "Bad Gateway.", Detail: "PUT data returned no upload URL"}
	}
	sep := "?"
	if strings.Contains(*d.UploadURL, "?") {
		sep = "&"
	}
	var ids []string
	buf := make([]byte, UploadBlockSize)
	var offset int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 || offset == 0 {
			id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%032d", offset)))
			u := *d.UploadURL + sep + "comp=block&blockid=" + url.QueryEscape(id)
			resp, err := c.do(ctx, http.MethodPut, u, bytes.NewReader(buf[:n]), nil, false)
			if err != nil {
				return err
			}
			resp.Body.Close()
			ids = append(ids, id)
			offset += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	var xml strings.Builder
	xml.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>\n")
	for _, id := range ids {
		xml.WriteString("  <Latest>" + id + "</Latest>\n")
	}
	xml.WriteString("</BlockList>")
	resp, err := c.do(ctx, http.MethodPut, *d.UploadURL+sep+"comp=blocklist", strings.NewReader(xml.String()),
		http.Header{"Content-Type": {"text/plain; charset=UTF-8"}}, false)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// OpenBlob implements Store: the blob is downloaded from the version's
// links.data URL into a temporary file (removed on Close). When the link is
// missing or has expired the version is fetched again for fresh links.
func (c *Remote) OpenBlob(ctx context.Context, ws Workspace, v *Version, name string) (objects.BlobFile, error) {
	if v == nil {
		return nil, ErrBadRequest("the remote store opens blobs through an object version's links")
	}
	link := findLink(v.Links, name)
	if link != "" {
		f, err := c.download(ctx, link)
		if err == nil {
			return f, nil
		}
		if s := StatusOf(err); s != http.StatusForbidden && s != http.StatusNotFound && s != http.StatusUnauthorized {
			return nil, err
		}
	}
	fresh, err := c.GetObject(ctx, ws, Ref{ID: v.ObjectID, Version: v.VersionID})
	if err != nil {
		return nil, err
	}
	v.Links = fresh.Links
	if link = findLink(fresh.Links, name); link == "" {
		return nil, NewError(http.StatusNotFound, TypeDataKeyNotFound, "Data Key Not Found.",
			fmt.Sprintf("object %s version %s has no data link for %s", v.ObjectID, v.VersionID, name))
	}
	return c.download(ctx, link)
}

func findLink(links []DataLink, name string) string {
	for _, l := range links {
		if strings.EqualFold(l.Name, name) && l.DownloadURL != "" {
			return l.DownloadURL
		}
	}
	return ""
}

func (c *Remote) download(ctx context.Context, u string) (objects.BlobFile, error) {
	resp, err := c.do(ctx, http.MethodGet, u, nil, nil, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	f, err := os.CreateTemp("", "geostat-blob-*")
	if err != nil {
		return nil, ErrStorage(err)
	}
	n, err := io.Copy(f, resp.Body)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, ErrStorage(fmt.Errorf("downloading %s: %w", redact(u), err))
	}
	return &tempBlob{File: f, size: n}, nil
}

// tempBlob is a downloaded blob; Close removes the file.
type tempBlob struct {
	*os.File
	size int64
}

func (t *tempBlob) Size() int64 { return t.size }

func (t *tempBlob) Close() error {
	err := t.File.Close()
	os.Remove(t.File.Name())
	return err
}
