package store

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOrgQueryErrors(t *testing.T) {
	cases := []struct {
		q   string
		typ string
	}{
		{"limit=0", TypeValidation},
		{"limit=x", TypeValidation},
		{"offset=-1", TypeValidation},
		{"deleted=maybe", TypeValidation},
		{"order_by=size", TypeInvalidSort},
		{"order_by=desc:object.", TypeInvalidSort},
		{"order_by=up:created_at", TypeInvalidSort},
		{"created_at=yesterday", TypeInvalidFilter},
		{"created_at=gt:2024-01-01,lt:2025-01-01,lt:2026-01-01", TypeInvalidFilter},
		{"created_at=2024-01-01,2025-01-01", TypeInvalidFilter},
		{"created_at=like:2024-01-01", TypeInvalidFilter},
		{"created_by=bob", TypeInvalidFilter},
		{"created_by=like:bob", TypeInvalidFilter},
		{"object..a=1", TypeInvalidFilter},
	}
	for _, c := range cases {
		q, err := url.ParseQuery(c.q)
		require.NoError(t, err)
		_, err = ParseOrgQuery(q)
		e := AsError(err)
		require.NotNil(t, e, c.q)
		assert.Equal(t, http.StatusUnprocessableEntity, e.Status, c.q)
		assert.Equal(t, c.typ, e.Type, c.q)
	}
	q, err := ParseOrgQuery(url.Values{"unknown": {"x"}, "order_by": {"desc:created_at,object.a.b,asc:object_name"}})
	require.NoError(t, err)
	assert.Equal(t, DefaultLimit, q.Limit)
	assert.Empty(t, q.Filters, "unrecognised parameters are ignored")
	assert.Equal(t, []SortKey{{"created_at", true}, {"object.a.b", false}, {"object_name", false}}, q.Sort)
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"*pointset*", "/objects/pointset/1.3.0/pointset.schema.json", true},
		{"/objects/*", "/objects/x", true},
		{"*.json", "a/b.json", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"abc", "abc", true},
		{"abc", "abcd", false},
		{"*", "", true},
	} {
		assert.Equal(t, c.ok, glob(c.p, c.s), "%q ~ %q", c.p, c.s)
	}
}

func TestListOrgObjects(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := OpenEmbedded(EmbeddedOptions{Dir: t.TempDir(), Schemas: objecttest.Schemas(t), Now: func() time.Time {
		clock = clock.Add(time.Hour)
		return clock
	}})
	require.NoError(t, err)
	doc, b := pointsetDoc(t, s)
	ws2 := Workspace{Org: testWS.Org, ID: "33333333-3333-4333-8333-333333333333"}
	hidden := Workspace{Org: testWS.Org, ID: "44444444-4444-4444-8444-444444444444"}
	for _, ws := range []Workspace{ws2, hidden} {
		for _, k := range b.Keys() {
			data, _ := b.Get(k)
			require.NoError(t, s.PutBlob(ctx, ws, k, bytesReader(data)))
		}
	}
	bob := User{ID: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", Name: "Bob"}
	mk := func(ws Workspace, path string, by User, name string) *Version {
		d := map[string]any{}
		for k, v := range doc {
			d[k] = v
		}
		d["name"] = name
		v, err := s.PutObject(ctx, ws, PutRequest{Path: path, Object: objecttest.JSON(d), By: by})
		require.NoError(t, err)
		return v
	}
	mk(testWS, "a/zeta.json", alice, "n3")                                                                                        // 01:00
	mk(testWS, "a/alpha.json", bob, "n1")                                                                                         // 02:00
	mk(ws2, "b/Beta.json", alice, "n2")                                                                                           // 03:00
	mk(hidden, "secret.json", alice, "n0")                                                                                        // 04:00
	vg, err := s.PutObject(ctx, ws2, PutRequest{Path: "v.json", Object: objecttest.JSON(objecttest.Variogram("1.2.0")), By: bob}) // 05:00
	require.NoError(t, err)
	access := func(ws string) (string, bool) {
		switch ws {
		case testWS.ID:
			return "owner", true
		case ws2.ID:
			return "viewer", true
		}
		return "", false
	}
	list := func(raw string) []string {
		t.Helper()
		q, err := url.ParseQuery(raw)
		require.NoError(t, err)
		oq, err := ParseOrgQuery(q)
		require.NoError(t, err, raw)
		oq.Access = access
		page, err := s.ListOrgObjects(ctx, testWS.Org, oq)
		require.NoError(t, err, raw)
		out := []string{}
		for _, it := range page.Items {
			out = append(out, it.Path)
		}
		return out
	}
	assert.Equal(t, []string{"a/alpha.json", "a/zeta.json", "b/Beta.json", "v.json"}, list(""), "hidden workspaces are not listed")
	assert.Equal(t, []string{"a/zeta.json", "a/alpha.json", "b/Beta.json", "v.json"}, list("order_by=created_at"))
	assert.Equal(t, []string{"v.json", "b/Beta.json", "a/alpha.json", "a/zeta.json"}, list("order_by=desc:created_at"))
	assert.Equal(t, []string{"b/Beta.json", "a/alpha.json", "v.json", "a/zeta.json"}, list("order_by=object_name"))
	assert.Equal(t, []string{"a/alpha.json", "b/Beta.json", "a/zeta.json", "v.json"}, list("order_by=object.name"), "object.<field> sorts; missing last")
	assert.Equal(t, []string{"a/alpha.json"}, list("object_name=al"), "prefix of the file name")
	assert.Empty(t, list("object_name=a/al"), "without operator only the file name is matched")
	assert.Equal(t, []string{"a/alpha.json", "a/zeta.json"}, list("object_name=like:a/*"))
	assert.Equal(t, []string{"b/Beta.json"}, list("object_name=ilike:*beta*"))
	assert.Equal(t, []string{"a/alpha.json", "a/zeta.json", "b/Beta.json"}, list("schema_id=like:*pointset*"))
	assert.Equal(t, []string{"v.json"}, list("schema_id=nlike:*pointset*"))
	assert.Equal(t, []string{"v.json"}, list("schema_id="+vg.Schema))
	assert.Equal(t, []string{"a/alpha.json", "v.json"}, list("created_by="+bob.ID))
	assert.Equal(t, []string{"a/zeta.json", "b/Beta.json"}, list("created_by=nin:"+bob.ID))
	assert.Equal(t, []string{"a/alpha.json", "b/Beta.json"}, list("created_at=gt:2026-01-01T01:30:00Z,lte:2026-01-01T03:00:00Z"))
	assert.Equal(t, []string{"a/zeta.json"}, list("created_at=2026-01-01T01:00:00"), "UTC assumed without offset")
	assert.Equal(t, []string{"a/alpha.json", "b/Beta.json"}, list("object.name=in:n1,n2"))
	assert.Equal(t, []string{"a/alpha.json", "a/zeta.json", "b/Beta.json"}, list("object.locations.coordinates.length=eq:2"))
	assert.Equal(t, []string{"v.json"}, list("object.sill=gte:0.5"))
	assert.Equal(t, []string{"a/alpha.json", "a/zeta.json", "b/Beta.json"}, list("object.sill=neq:1"), "negative operators match missing fields")
	assert.Equal(t, []string{"b/Beta.json", "v.json"}, list("offset=2&limit=2"))
	assert.Equal(t, []string{"a/zeta.json"}, list("offset=1&limit=1"))

	q, _ := ParseOrgQuery(url.Values{})
	q.Access = access
	page, err := s.ListOrgObjects(ctx, testWS.Org, q)
	require.NoError(t, err)
	assert.Equal(t, 4, page.Total)
	roles := map[string]string{}
	for _, it := range page.Items {
		roles[it.Path] = it.WorkspaceAccess
	}
	assert.Equal(t, "owner", roles["a/zeta.json"])
	assert.Equal(t, "viewer", roles["v.json"])

	require.NoError(t, s.DeleteObject(ctx, testWS, Ref{Path: "a/zeta.json"}, bob))
	assert.Equal(t, []string{"a/zeta.json"}, list("deleted=true"))
	assert.Equal(t, []string{"a/zeta.json"}, list("deleted=true&deleted_by="+bob.ID))
	assert.Equal(t, []string{"a/alpha.json", "b/Beta.json", "v.json"}, list(""))
	rec := page.Items[0].Record()
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"workspace_access":"owner"`)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
