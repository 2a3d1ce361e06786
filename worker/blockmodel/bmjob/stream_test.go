package bmjob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// A streamed update with the default batches writes the column in whole
// row groups of the store lent to its writer (ColumnWriter.WriteLent): a
// new column from a file with every row, then a merge from a file that
// skips some rows and a run of more than a row group (batches not given,
// copied). Every row reads back as the files and the merge rule say.
func TestStreamedUpdateWholeGroups(t *testing.T) {
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil,
		blockmodel.RegularSize(blockmodel.Size3D{NX: 100, NY: 100, NZ: 60}, blockmodel.XYZ{X: 5, Y: 5, Z: 5}))
	require.NoError(t, err)
	n := g.NumParents()
	require.Greater(t, n, int64(2*bmstore.StoreRowGroup), "more than two row groups")
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	tx, err := s.Create(bmstore.Model{ID: "m"}, n)
	require.NoError(t, err)
	_, err = tx.Commit(bmstore.Meta{})
	require.NoError(t, err)

	type row struct {
		I  uint32   `parquet:"i"`
		J  uint32   `parquet:"j"`
		K  uint32   `parquet:"k"`
		Cu *float64 `parquet:"cu,optional"`
	}
	// file writes the rows p that keep says, with value val(p) (NaN: null).
	file := func(keep func(p int64) bool, val func(p int64) float64) []byte {
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[row](&buf)
		var batch []row
		for p := range n {
			if !keep(p) {
				continue
			}
			i, j, k := g.ParentIJK(p)
			r := row{I: i, J: j, K: k}
			if v := val(p); !math.IsNaN(v) {
				r.Cu = &v
			}
			if batch = append(batch, r); len(batch) == 50_000 {
				_, err := w.Write(batch)
				require.NoError(t, err)
				batch = batch[:0]
			}
		}
		_, err := w.Write(batch)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return buf.Bytes()
	}
	update := func(body string, f []byte) *bmstore.Version {
		latest, err := s.Latest("m")
		require.NoError(t, err)
		v, err := s.Version("m", latest)
		require.NoError(t, err)
		u, err := bmwire.DecodeUpdate([]byte(body), ModelInfo(g, v))
		require.NoError(t, err)
		out, err := ApplyUpdate(context.Background(), s, UpdateInput{ModelID: "m", Geometry: g, Update: u,
			File: bytes.NewReader(f), FileSize: int64(len(f))})
		require.NoError(t, err)
		return out
	}
	check := func(v *bmstore.Version, want func(p int64) float64) {
		t.Helper()
		sc, err := s.Scan("m", v.VersionID, []string{"cu"}, 0, v.Rows, 100_000)
		require.NoError(t, err)
		defer sc.Close()
		p := int64(0)
		for {
			cols, err := sc.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			c := &cols[0]
			for r := range c.Len() {
				w := want(p)
				if math.IsNaN(w) {
					require.True(t, c.IsNull(r), "row %d: %v, want null", p, c.Floats[r])
				} else {
					require.False(t, c.IsNull(r), "row %d is null, want %v", p, w)
					require.Equal(t, w, c.Floats[r], "row %d", p)
				}
				p++
			}
		}
		require.Equal(t, n, p)
	}

	first := func(p int64) float64 {
		if p%97 == 0 {
			return math.NaN()
		}
		return float64(p%1000) / 8
	}
	v := update(`{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}, "update_type": "replace",
		"input_options": {"file_format": "parquet"}}`, file(func(int64) bool { return true }, first))
	check(v, first)

	// Rows not in the file: every fifth, and a run from row 100,000 longer
	// than a row group of the store.
	skipped := func(p int64) bool { return p%5 == 0 || (p >= 100_000 && p < 100_000+bmstore.StoreRowGroup+777) }
	second := func(p int64) float64 { return -float64(p % 31) }
	v = update(`{"columns": {"update": ["cu"]}, "update_type": "merge", "input_options": {"file_format": "parquet"}}`,
		file(func(p int64) bool { return !skipped(p) }, second))
	check(v, func(p int64) float64 {
		if skipped(p) {
			return first(p)
		}
		return second(p)
	})
}
