package bmstore

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// lentBatch is a WriteLent call of rows [lo, hi): lent (whole row group at
// a group's start, every row given) or copied.
type lentBatch struct {
	lo, hi int
	lent   bool
}

// writeLent writes c's batches through WriteLent and checks who gets them:
// a copied batch is released before WriteLent returns; a lent one only
// after (its release waits until WriteLent has returned, so a copy would
// never return: bounded). Every release comes exactly once, all of them
// by Close. Each batch is a copy of its rows, as a caller's buffer.
func writeLent(t *testing.T, w *ColumnWriter, c *Column, batches []lentBatch) {
	t.Helper()
	var released atomic.Int64
	for i, b := range batches {
		n := b.hi - b.lo
		cp := newColumn(c.Type, n)
		src := slice(c, b.lo, b.hi)
		cp.appendRange(&src, 0, n)
		cp.Given = src.Given
		returned := make(chan struct{})
		var calls atomic.Int64
		release := func() {
			if calls.Add(1) > 1 {
				t.Errorf("batch %d released twice", i)
			}
			if b.lent {
				<-returned
			}
			released.Add(1)
		}
		errc := make(chan error, 1)
		go func() { errc <- w.WriteLent(cp, release) }()
		select {
		case err := <-errc:
			require.NoError(t, err, "batch %d", i)
		case <-time.After(30 * time.Second):
			t.Fatalf("batch %d: WriteLent waited for its release: it was copied, not lent", i)
		}
		if !b.lent {
			require.Equal(t, int64(1), calls.Load(), "batch %d is copied: released before WriteLent returns", i)
		}
		close(returned)
	}
	require.NoError(t, w.Close())
	require.Equal(t, int64(len(batches)), released.Load(), "every batch released by Close")
}

// WriteLent lends whole row groups to the encoder and copies any other
// batch; the column reads back as written either way, a new column and a
// merge into an old one (whose old values come from the old file where
// rows are not given) alike.
func TestColumnWriterLent(t *testing.T) {
	const g = StoreRowGroup
	n := 2*g + 1000
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", int64(n))
	rng := rand.New(rand.NewPCG(7, 11))
	first := randColumn(rng, blockmodel.Float64, n)

	tx, err := s.Begin("m")
	require.NoError(t, err)
	w, err := tx.AddColumn(ColumnMeta{Title: "v", DataType: blockmodel.Float64})
	require.NoError(t, err)
	// a whole group, a group in three parts (copied), the last rows
	writeLent(t, w, &first, []lentBatch{{0, g, true}, {g, g + 10, false}, {g + 10, 2*g - 5, false}, {2*g - 5, 2 * g, false}, {2 * g, n, true}})
	v1, err := tx.Commit(Meta{})
	require.NoError(t, err)
	got := readAll(t, s, "m", v1.VersionID, "v", 50_000)
	requireSame(t, &first, &got, "new column")

	// A merge: the first group given whole (lent, the old values passed
	// over), the second in part (copied, the old values where not given),
	// the last rows short of a group but the column's last (lent).
	second := randColumn(rng, blockmodel.Float64, n)
	second.Given = make([]bool, n)
	want := newColumn(blockmodel.Float64, n)
	for r := range n {
		second.Given[r] = r < g || r >= 2*g || r%3 != 0
		if second.Given[r] {
			want.appendFrom(&second, r)
		} else {
			want.appendFrom(&first, r)
		}
	}
	col, ok := v1.Column("v")
	require.True(t, ok)
	tx, err = s.Begin("m")
	require.NoError(t, err)
	w, err = tx.UpdateColumn(col.ColID, false)
	require.NoError(t, err)
	writeLent(t, w, &second, []lentBatch{{0, g, true}, {g, 2 * g, false}, {2 * g, n, true}})
	v2, err := tx.Commit(Meta{})
	require.NoError(t, err)
	got = readAll(t, s, "m", v2.VersionID, "v", 50_000)
	requireSame(t, &want, &got, "merged column")
}

// A batch WriteLent refuses (wrong type, too many rows) is released at
// once, and the writer's error is returned.
func TestColumnWriterLentErrors(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", 10)
	tx, err := s.Begin("m")
	require.NoError(t, err)
	defer tx.Abort()
	w, err := tx.AddColumn(ColumnMeta{Title: "a", DataType: blockmodel.Float64})
	require.NoError(t, err)
	var released int
	release := func() { released++ }
	require.Error(t, w.WriteLent(Column{Type: blockmodel.Int32, Ints: []int64{1}}, release), "wrong type")
	require.Equal(t, 1, released)
	require.Error(t, w.WriteLent(Column{Type: blockmodel.Float64, Floats: make([]float64, 11)}, release), "more rows than the model")
	require.Equal(t, 2, released)
	require.Error(t, w.WriteLent(Column{Type: blockmodel.Float64, Floats: make([]float64, 10), Null: make([]bool, 3)}, release), "flags of another length")
	require.Equal(t, 3, released)
}
