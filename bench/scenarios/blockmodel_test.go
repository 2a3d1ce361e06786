package scenarios

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
)

// TestBlockModelScenariosSmall runs the block model scenarios at size
// small; their checks pass, and fail on values other than the ones written.
func TestBlockModelScenariosSmall(t *testing.T) {
	cfg := harness.Config{Size: synthetic.Small, Seed: 7}
	for _, s := range []harness.Scenario{bmCreate(), bmAddColumn(), bmQuery(), bmAddColumnE2E(), bmQueryE2E()} {
		w, err := s.Setup(context.Background(), cfg)
		require.NoError(t, err, s.Name)
		for range 2 { // a second run adds a second column / model
			require.NoError(t, w.Run(context.Background(), nil), s.Name)
			require.NoError(t, w.Check(), s.Name)
		}
		d := w.Details()
		require.Contains(t, d, "peak_heap_above_idle_mib", s.Name)
		require.Positive(t, d["cpu_seconds_per_run"], s.Name)
		require.Positive(t, w.Items, s.Name)
		w.Close()
	}

	e, err := newBMEnv(cfg, true)
	require.NoError(t, err)
	defer e.close()
	require.Equal(t, int64(100_000), e.rows)
	ver, err := writeGrades(e, cfg.Seed)
	require.NoError(t, err)
	require.NoError(t, checkGrades(e, ver.VersionID, ver.Columns[0].ColID, cfg.Seed))
	require.ErrorContains(t, checkGrades(e, ver.VersionID, ver.Columns[0].ColID, cfg.Seed+1), "block 0")

	out := filepath.Join(e.dir, "q.parquet")
	size, err := queryToFile(e, ver.VersionID, ver.Columns[0], out)
	require.NoError(t, err)
	require.Positive(t, size)
	require.NoError(t, checkQueryFile(out, e.rows, cfg.Seed))
	require.ErrorContains(t, checkQueryFile(out, e.rows, cfg.Seed+1), "query output has")
}
