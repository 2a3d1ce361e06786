package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/geostat-engine/geostat/worker/server"
)

// Compute routes (a later package) plug in through Options.ExtraRoutes.
func ExampleOptions_extraRoutes() {
	dir, _ := os.MkdirTemp("", "geostat-example-")
	defer os.RemoveAll(dir)
	app, err := server.New(server.Options{
		Addr:    "127.0.0.1:0",
		DataDir: dir,
		Stdout:  io.Discard,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: func(k string) string {
			if k == server.TokenEnv {
				return "example-token"
			}
			return ""
		},
		ExtraRoutes: func(mux server.Router, deps server.Deps) {
			mux.Handle("POST /compute/orgs/{org_id}/geostatistics/{task}", deps.Auth.RequireOrg(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					server.WriteJSON(w, http.StatusOK, map[string]string{
						"task": r.PathValue("task"),
						"user": server.PrincipalFrom(r.Context()).User.Name,
					})
				})))
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- app.Run(ctx) }()
	defer func() { cancel(); <-done }()

	req, _ := http.NewRequest(http.MethodPost, app.URL()+"/compute/orgs/11111111-1111-4111-8111-111111111111/geostatistics/knn", nil)
	req.Header.Set("Authorization", "Bearer example-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 200 {"task":"knn","user":"local"}
}
