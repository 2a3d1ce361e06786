package files_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/files"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// A compute task stores its report with Put and reads it back with Get.
func ExampleStore_Put() {
	dir, _ := os.MkdirTemp("", "files-example-")
	defer os.RemoveAll(dir)
	st, err := files.Open(dir)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	const org, ws = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	by := store.User{ID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "geostat"}

	rec, err := st.Put(ctx, org, ws, "reports/Simulation.html", strings.NewReader("<h1>Report</h1>"), "", by)
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Name, rec.Size, rec.ContentType)

	// Paths are case-insensitive: this is a second version of the same file.
	rec2, _ := st.Put(ctx, org, ws, "Reports/simulation.html", strings.NewReader("<h1>Report v2</h1>"), "", by)
	fmt.Println(rec2.ID == rec.ID, len(rec2.Versions))

	latest, body, err := st.Get(ctx, org, ws, "", "REPORTS/SIMULATION.HTML", "")
	if err != nil {
		panic(err)
	}
	defer body.Close()
	data, _ := io.ReadAll(body)
	fmt.Println(latest.Path, string(data))
	// Output:
	// Simulation.html 15 text/html; charset=utf-8
	// true 2
	// Reports/simulation.html <h1>Report v2</h1>
}

// Over HTTP: reserve a version by path, PUT its content to the signed upload
// URL, then read the record and download through the signed download URL.
func ExampleRegister() {
	dir, _ := os.MkdirTemp("", "files-example-")
	defer os.RemoveAll(dir)
	st, err := files.Open(dir)
	if err != nil {
		panic(err)
	}
	app, err := server.New(server.Options{
		Addr: "127.0.0.1:0", DataDir: dir, Stdout: io.Discard,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: func(k string) string {
			if k == server.TokenEnv {
				return "tok"
			}
			return ""
		},
		ExtraRoutes: func(mux server.Router, deps server.Deps) {
			files.Register(mux, deps, st, files.Options{URLExpiry: 10 * time.Minute})
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- app.Run(ctx) }()
	defer func() { cancel(); <-done }()

	do := func(method, url, token string, body io.Reader) *http.Response {
		req, _ := http.NewRequest(method, url, body)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	api := app.URL() + "/file/v2/orgs/11111111-1111-4111-8111-111111111111/workspaces/22222222-2222-4222-8222-222222222222"

	resp := do(http.MethodPut, api+"/files/path/notes/readme.txt", "tok", nil)
	var up files.UploadResponse
	json.NewDecoder(resp.Body).Decode(&up)
	resp.Body.Close()
	fmt.Println("reserve:", resp.StatusCode)

	resp = do(http.MethodPut, up.UploadURL, "", strings.NewReader("hello, geologist"))
	resp.Body.Close()
	fmt.Println("upload:", resp.StatusCode)

	resp = do(http.MethodGet, api+"/files/"+up.FileID, "tok", nil)
	var rec files.Record
	json.NewDecoder(resp.Body).Decode(&rec)
	resp.Body.Close()
	fmt.Println("record:", resp.StatusCode, rec.Path, rec.Size, rec.VersionID == up.VersionID)

	resp = do(http.MethodGet, rec.DownloadURL, "", nil)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("download:", resp.StatusCode, string(data))
	// Output:
	// reserve: 200
	// upload: 201
	// record: 200 notes/readme.txt 16 true
	// download: 200 hello, geologist
}
