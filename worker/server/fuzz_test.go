package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/require"
)

// FuzzUpload drives the signed upload handler (whole-body PUT, block, block
// list) in-process with arbitrary bodies, block ids and block lists. It must
// never fail with a server error, and a blob is stored only when its bytes
// hash to its name.
func FuzzUpload(f *testing.F) {
	app, err := server.New(server.Options{
		Addr: "127.0.0.1:0", DataDir: f.TempDir(), Stdout: io.Discard, MaxBlobBytes: 1 << 16,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: func(k string) string {
			if k == server.TokenEnv {
				return testToken
			}
			return ""
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { app.Stop(f.Context()) })
	h := app.Handler()
	uploadURL := func(t *testing.T, name string) string {
		body, _ := json.Marshal([]store.DataRequest{{Name: name}})
		req := httptest.NewRequest(http.MethodPut, wsPrefix+"/data", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var resp []store.DataResponse
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
		if resp[0].UploadURL == nil {
			return ""
		}
		u, err := url.Parse(*resp[0].UploadURL)
		require.NoError(t, err)
		return u.RequestURI()
	}

	f.Add(uint8(0), "", []byte("hello"), true)
	f.Add(uint8(0), "", []byte("hello"), false)
	f.Add(uint8(1), blockID(0), []byte("block"), true)
	f.Add(uint8(2), "", []byte(blockListXML([]string{blockID(0)})), true)
	f.Add(uint8(2), "", []byte("<BlockList><Latest>!!</Latest></BlockList>"), true)
	f.Add(uint8(2), "", []byte("<BlockList><Foo/></BlockList>"), false)
	f.Add(uint8(3), "", []byte{}, false)
	f.Fuzz(func(t *testing.T, mode uint8, blockid string, body []byte, hashName bool) {
		name := "0000000000000000000000000000000000000000000000000000000000000000"
		if hashName {
			name = sha256Hex(body)
		}
		u := uploadURL(t, name)
		if u == "" {
			return // already stored by an earlier input
		}
		switch mode % 4 {
		case 1:
			u += "&comp=block&blockid=" + url.QueryEscape(blockid)
		case 2:
			u += "&comp=blocklist"
		case 3:
			u += "&comp=" + url.QueryEscape(blockid)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, u, bytes.NewReader(body)))
		switch rec.Code {
		case http.StatusCreated, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
		if rec.Code == http.StatusCreated && mode%4 == 0 {
			require.Equal(t, sha256Hex(body), name, "stored only when the bytes hash to the name")
		}
		if rec.Code != http.StatusCreated {
			var p map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p), rec.Body.String())
			require.Equal(t, float64(rec.Code), p["status"])
		}
	})
}
