package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
)

// TestWriteExample writes an example report from a synthetic ensemble into
// the directory named by REPORT_EXAMPLE_DIR (skipped when unset), with a
// screenshot when Chromium is installed:
//
//	REPORT_EXAMPLE_DIR=/tmp/report-example go test -run TestWriteExample ./geostat/report
func TestWriteExample(t *testing.T) {
	dir := os.Getenv("REPORT_EXAMPLE_DIR")
	if dir == "" {
		t.Skip("REPORT_EXAMPLE_DIR not set")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	s := makeSynth(t, [3]int{48, 40, 10}, [3]float64{10, 10, 5}, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, 24, 200, 45, 7)
	in := s.input()
	in.Context.Details = []Detail{{Label: "Project", Value: "Synthetic example"}, {Label: "Domain", Value: "Oxide"},
		{Label: "Variable", Value: "Au"}, {Label: "Method", Value: "Spectral test fields (not tbsim)"}}
	r, err := Compute(context.Background(), in, nil)
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	require.NoError(t, r.WriteHTML(f))
	require.NoError(t, f.Close())
	j, err := os.Create(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.NoError(t, r.WriteJSON(j))
	require.NoError(t, j.Close())
	if bin := chromium(); bin != "" {
		shot := filepath.Join(dir, "report.png")
		cmd := exec.Command(bin, append(chromiumFlags(t), "--window-size=1400,4460", "--screenshot="+shot,
			"file://"+filepath.Join(dir, "report.html"))...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}
