package geostat_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoArrowInTheNumericalPackages checks that importing the vocabulary (or
// any numerical package) does not pull in Apache Arrow: the Arrow adapters
// live in geostat/arrowcol. It asks the go command for the import graph.
func TestNoArrowInTheNumericalPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	const module = "github.com/geostat-engine/geostat/"
	pkgs := []string{"geostat", "geostat/ties", "geostat/report", "grid", "neighbor", "kriging", "tbsim"}
	args := []string{"list", "-deps"}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	out, err := exec.Command(gobin, args...).Output()
	require.NoError(t, err, "go list -deps")
	deps := strings.Fields(string(out))
	require.Contains(t, deps, module+"geostat", "the listing covers the vocabulary")
	for _, d := range deps {
		require.NotContains(t, d, "apache/arrow", "%s is in the dependencies of %v", d, pkgs)
	}
	// The check itself can fail: the adapters' package does depend on Arrow.
	out, err = exec.Command(gobin, "list", "-deps", module+"geostat/arrowcol").Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "github.com/apache/arrow/go/v15/arrow\n")
}
