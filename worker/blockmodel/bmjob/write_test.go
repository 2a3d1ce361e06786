package bmjob

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
)

// TestReadColumns: ReadFloat64 and ReadCategories return a column's values
// in row order (NaN or not Valid for nulls), and refuse the other types.
func TestReadColumns(t *testing.T) {
	ctx := context.Background()
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			s, err := bmstore.Open(t.TempDir())
			require.NoError(t, err)
			g := geometry(t, kind)
			b := splitBlocks(t, g)
			createModel(t, s, "m", b)
			m := newBF(b)
			vals := []fileCol{{"cu", blockmodel.Float64}, {"n", blockmodel.Int32}, {"w", blockmodel.UInt16},
				{"dom", blockmodel.Utf8}, {"flag", blockmodel.Boolean}}
			rows := pickRows(b, 0.8, vals, rng)
			u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}, {"title": "n", "data_type": "Int32"},
				{"title": "w", "data_type": "UInt16"}, {"title": "dom", "data_type": "Utf8"}, {"title": "flag", "data_type": "Boolean"}]}}`)
			v, err := apply(t, s, "m", g, u, updateFile(t, b, rows, vals, true, false, rng))
			require.NoError(t, err)
			m.apply(2, rows, []string{"cu", "n", "w", "dom", "flag"}, make([]blockmodel.DataType, 5), false)
			for _, title := range []string{"cu", "n", "w"} {
				got, err := ReadFloat64(ctx, s, "m", v, title)
				require.NoError(t, err)
				require.Len(t, got, int(b.NumRows()))
				for r, x := range m.vals[title] {
					switch x := x.(type) {
					case nil:
						require.True(t, math.IsNaN(got[r]))
					case float64:
						require.Equal(t, x, got[r])
					case int64:
						require.Equal(t, float64(x), got[r])
					case uint64:
						require.Equal(t, float64(x), got[r])
					}
				}
			}
			for _, title := range []string{"dom", "flag"} {
				cat, err := ReadCategories(ctx, s, "m", v, title)
				require.NoError(t, err)
				require.Len(t, cat.Keys, int(b.NumRows()))
				for r, x := range m.vals[title] {
					if x == nil {
						require.False(t, cat.Valid[r])
						continue
					}
					require.True(t, cat.Valid[r])
					require.Equal(t, fmt.Sprint(x), cat.Names[cat.Keys[r]])
					if title == "flag" {
						require.Equal(t, map[bool]int64{false: 0, true: 1}[x.(bool)], cat.Keys[r])
					}
				}
			}
			_, err = ReadFloat64(ctx, s, "m", v, "dom")
			require.ErrorIs(t, err, ErrNotContinuous)
			_, err = ReadFloat64(ctx, s, "m", v, "flag")
			require.ErrorIs(t, err, ErrNotContinuous)
			_, err = ReadCategories(ctx, s, "m", v, "cu")
			require.ErrorIs(t, err, ErrNotCategorical)
			_, err = ReadFloat64(ctx, s, "m", v, "nope")
			require.ErrorIs(t, err, ErrColumnNotFound)
			_, err = ReadFloat64(ctx, s, "m", v, ColParent)
			require.ErrorIs(t, err, ErrColumnNotFound)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err = ReadFloat64(cctx, s, "m", v, "cu")
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}

// TestWriteColumn: create and update with and without a filter write the
// rows A.14.5 says (replace: every row, unselected null; merge: only the
// selected rows), in place over an existing float column keeping its col_id,
// rounded for Float32; other types, missing columns, bad titles and a
// changed geometry are refused leaving the latest version.
func TestWriteColumn(t *testing.T) {
	ctx := context.Background()
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, 9))
			s, err := bmstore.Open(t.TempDir())
			require.NoError(t, err)
			g := geometry(t, kind)
			b := splitBlocks(t, g)
			createModel(t, s, "m", b)
			n := int(b.NumRows())
			values := func() []float64 {
				v := make([]float64, n)
				for r := range v {
					v[r] = rng.NormFloat64()
					if r%7 == 3 {
						v[r] = math.NaN()
					}
				}
				return v
			}
			sel := make([]bool, n)
			for r := range sel {
				sel[r] = rng.IntN(3) == 0
			}
			sel[0] = true
			want := func(vals []float64, mask []bool) []any {
				out := make([]any, n)
				for r, x := range vals {
					if (mask == nil || mask[r]) && !math.IsNaN(x) {
						out[r] = x
					}
				}
				return out
			}
			write := func(op, title string, vals []float64, mask []bool) (*bmstore.Version, error) {
				return WriteColumn(ctx, s, ColumnWrite{ModelID: "m", Rows: b, Operation: op, Title: title, Values: vals,
					Selected: mask, Comment: "kriging (compute job j): " + op + "d column " + title, CreatedBy: "u", BatchRows: 5})
			}
			// create, no filter: every row.
			v1 := values()
			v, err := write(OpCreate, "est", v1, nil)
			require.NoError(t, err)
			est := mustColumn(t, v, "est")
			require.Equal(t, blockmodel.Float64, est.DataType)
			require.Equal(t, want(v1, nil), readAll(t, s, "m", v, "est"))
			require.Equal(t, []string{"est"}, v.Changes.New)
			require.Equal(t, "u", v.CreatedBy)
			require.Equal(t, "replace", *v.Changes.UpdateType)
			require.Equal(t, &bmstore.BBox{I: bmstore.MinMax{Max: 3}, J: bmstore.MinMax{Max: 2}, K: bmstore.MinMax{Max: 1}}, v.BBox)
			// create with a filter: unselected rows null.
			v2 := values()
			v, err = write(OpCreate, "est2", v2, sel)
			require.NoError(t, err)
			require.Equal(t, want(v2, sel), readAll(t, s, "m", v, "est2"))
			require.Equal(t, int64(n), *v.Changes.BlocksUploaded)
			// update with a filter: only the selected rows; version_id too.
			v3 := values()
			v, err = write(OpUpdate, "est", v3, sel)
			require.NoError(t, err)
			merged := want(v1, nil)
			for r := range merged {
				if sel[r] {
					merged[r] = want(v3, nil)[r]
				}
			}
			require.Equal(t, merged, readAll(t, s, "m", v, "est"))
			require.Equal(t, "merge", *v.Changes.UpdateType)
			for r, x := range readAll(t, s, "m", v, bmstore.VersionIDColumn) {
				if sel[r] {
					require.Equal(t, int64(v.VersionID), x)
				} else {
					require.Equal(t, int64(v.VersionID-1), x)
				}
			}
			// update without a filter: every row.
			v4 := values()
			v, err = write(OpUpdate, "est", v4, nil)
			require.NoError(t, err)
			require.Equal(t, want(v4, nil), readAll(t, s, "m", v, "est"))
			// create over an existing Float64 column: in place, same col_id.
			v5 := values()
			v, err = write(OpCreate, "EST", v5, nil)
			require.NoError(t, err)
			require.Equal(t, est.ColID, mustColumn(t, v, "est").ColID)
			require.Equal(t, "est", mustColumn(t, v, "est").Title)
			require.Equal(t, want(v5, nil), readAll(t, s, "m", v, "est"))
			require.Equal(t, []string{"est"}, v.Changes.Updated)
			// a Float32 column receives rounded values.
			u := decodeUpdate(t, s, "m", g, `{"columns": {"new": [{"title": "f32", "data_type": "Float32"}, {"title": "dom", "data_type": "Utf8"}]}}`)
			cells := updateFile(t, b, []fileRow{{row: 0, vals: map[string]any{"dom": "x"}}}, []fileCol{{"f32", blockmodel.Float64}, {"dom", blockmodel.Utf8}}, true, false, rng)
			_, err = apply(t, s, "m", g, u, cells)
			require.NoError(t, err)
			v6 := values()
			v, err = write(OpUpdate, "f32", v6, nil)
			require.NoError(t, err)
			got := readAll(t, s, "m", v, "f32")
			for r, x := range v6 {
				if math.IsNaN(x) {
					require.Nil(t, got[r])
				} else {
					require.Equal(t, float64(float32(x)), got[r])
				}
			}
			latest := v.VersionID
			// refusals
			_, err = write(OpCreate, "dom", values(), nil)
			require.ErrorIs(t, err, ErrColumnType)
			_, err = write(OpUpdate, "dom", values(), nil)
			require.ErrorIs(t, err, ErrColumnType)
			_, err = write(OpUpdate, "nope", values(), nil)
			require.ErrorIs(t, err, ErrColumnNotFound)
			_, err = write(OpCreate, "a/b", values(), nil)
			var ve *blockmodel.ValidationError
			require.ErrorAs(t, err, &ve)
			_, err = write(OpCreate, "short", values()[:n-1], nil)
			require.Error(t, err)
			if kind.SubBlocked() {
				_, err = WriteColumn(ctx, s, ColumnWrite{ModelID: "m", Rows: g.WholeBlocks(), Operation: OpCreate, Title: "x2",
					Values: make([]float64, g.NumParents())})
				require.ErrorIs(t, err, ErrGeometryChanged)
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err = WriteColumn(cctx, s, ColumnWrite{ModelID: "m", Rows: b, Operation: OpCreate, Title: "c", Values: values()})
			require.ErrorIs(t, err, context.Canceled)
			l, err := s.Latest("m")
			require.NoError(t, err)
			require.Equal(t, latest, l)
		})
	}
}

// TestWriteColumnConcurrent: four tasks writing their column to one model
// at once each add it; none is lost (A.14.5, the client's four kriging
// jobs).
func TestWriteColumnConcurrent(t *testing.T) {
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	g := geometry(t, blockmodel.Flexible)
	b := splitBlocks(t, g)
	createModel(t, s, "m", b)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals := make([]float64, b.NumRows())
			for r := range vals {
				vals[r] = float64(w*1000 + r)
			}
			_, errs[w] = WriteColumn(context.Background(), s, ColumnWrite{ModelID: "m", Rows: b, Operation: OpCreate,
				Title: fmt.Sprintf("est%d", w), Values: vals})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	n, err := s.Latest("m")
	require.NoError(t, err)
	require.Equal(t, 5, n)
	v, err := s.Version("m", n)
	require.NoError(t, err)
	require.Equal(t, []string{"est0", "est1", "est2", "est3"}, sortedTitles(v))
	for w := range 4 {
		got := readAll(t, s, "m", v, fmt.Sprintf("est%d", w))
		for r, x := range got {
			require.Equal(t, float64(w*1000+r), x)
		}
	}
}

// TestFindVersion: by uuid, latest for "", ErrNotFound otherwise.
func TestFindVersion(t *testing.T) {
	s, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	g := geometry(t, blockmodel.Regular)
	v1 := createModel(t, s, "m", g.WholeBlocks())
	v2, err := WriteColumn(context.Background(), s, ColumnWrite{ModelID: "m", Rows: g.WholeBlocks(), Operation: OpCreate,
		Title: "a", Values: make([]float64, g.NumParents())})
	require.NoError(t, err)
	got, err := FindVersion(s, "m", v1.VersionUUID)
	require.NoError(t, err)
	require.Equal(t, 1, got.VersionID)
	got, err = FindVersion(s, "m", "")
	require.NoError(t, err)
	require.Equal(t, v2.VersionUUID, got.VersionUUID)
	_, err = FindVersion(s, "m", bmstore.NewUUID())
	require.ErrorIs(t, err, bmstore.ErrNotFound)
	_, err = FindVersion(s, "nope", "")
	require.ErrorIs(t, err, bmstore.ErrNotFound)
}
