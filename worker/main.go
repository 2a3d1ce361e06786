// Command worker runs the geostat worker: the geoscience object API over an
// embedded on-disk store (or a client of a remote one) and, once registered,
// the compute tasks. Everything lives in package server; main only parses
// flags and handles signals.
//
//	go run ./worker -addr 127.0.0.1:8080 -data ./geostat-data
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/geostat-engine/geostat/worker/server"
)

func main() {
	var opts server.Options
	flag.StringVar(&opts.Addr, "addr", server.DefaultAddr, "listen address host:port")
	flag.StringVar(&opts.DataDir, "data", server.DefaultDataDir, "data directory of the embedded store")
	flag.StringVar(&opts.TokensFile, "tokens", "", "JSON tokens file (default: $GEOSTAT_TOKEN, else a generated development token)")
	flag.StringVar(&opts.ObjectsURL, "objects-url", "", "base URL of a remote Geoscience Object API to use instead of the embedded store")
	flag.StringVar(&opts.ObjectsToken, "objects-token", "", "bearer token for -objects-url")
	flag.StringVar(&opts.SchemasDir, "schemas", "", "evo schema directory (default: $GEOSTAT_SCHEMAS_DIR or ../shared/evo-schemas)")
	flag.Parse()

	app, err := server.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "geostat:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "geostat:", err)
		os.Exit(1)
	}
}
