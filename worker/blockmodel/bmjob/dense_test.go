package bmjob

import (
	"context"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileValues are 10 values of type t as bmwire reads them, value r made
// of r, with nulls at 2, 3 and 7 when nulls (a null is a zero, as bmwire
// appends it).
func fileValues(t blockmodel.DataType, nulls bool) *bmwire.Values {
	v := &bmwire.Values{Type: t}
	for r := range 10 {
		null := nulls && (r == 2 || r == 3 || r == 7)
		x := r + 1
		if null {
			x = 0
		}
		switch t {
		case blockmodel.Float64, blockmodel.Float32:
			v.Float = append(v.Float, float64(x)/4)
		case blockmodel.UInt64:
			v.Uint = append(v.Uint, uint64(x))
		case blockmodel.Boolean:
			v.Bool = append(v.Bool, x%2 == 1)
		case blockmodel.Utf8:
			if x != 0 {
				v.Str = append(v.Str, string(rune('a'+x)))
			} else {
				v.Str = append(v.Str, "")
			}
		default:
			v.Int = append(v.Int, int64(x))
		}
		if nulls {
			v.Valid = append(v.Valid, !null)
		}
	}
	return v
}

// setRun stores a run of values as set does value by value, for every
// family, with and without nulls.
func TestSetRunEqualsSet(t *testing.T) {
	for _, typ := range []blockmodel.DataType{blockmodel.Float64, blockmodel.Float32, blockmodel.Int32, blockmodel.Int64,
		blockmodel.Date32, blockmodel.UInt16, blockmodel.UInt32, blockmodel.UInt64, blockmodel.Boolean, blockmodel.Utf8} {
		for _, nulls := range []bool{false, true} {
			v := fileValues(typ, nulls)
			one, run := newDense(typ, 16, true), newDense(typ, 16, true)
			for r := 1; r < 9; r++ {
				one.set(int64(r+4), v, r)
			}
			run.setRun(5, v, 1, 8)
			// A float null is NaN, which Equal does not see as equal.
			for _, d := range []*dense{one, run} {
				for r, f := range d.col.Floats {
					if math.IsNaN(f) {
						d.col.Floats[r] = -1
					}
				}
			}
			assert.Equal(t, one, run, "%s nulls %v", typ, nulls)
			assert.Equal(t, int64(8), run.count)
		}
	}
}

// The stream sink places runs of consecutive rows and rows apart alike:
// batches with gaps inside and between them, a run across the sink's
// chunks, give the column set would give row by row.
func TestStreamSinkRuns(t *testing.T) {
	const n, chunk = 40, 8
	rows := []int64{0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 30, 32, 33, 34, 39}
	v := &bmwire.Values{Type: blockmodel.Float64}
	for r := range rows {
		v.Float = append(v.Float, float64(r)+0.5)
		v.Valid = append(v.Valid, r%4 != 1)
	}
	want := newDense(blockmodel.Float64, n, true)
	for r, row := range rows {
		want.set(row, v, r)
	}
	var got []bmstore.Column
	sink := newStreamSink(context.Background(), blockmodel.Float64, n, chunk, func(bool) (*bmstore.ColumnWriter, error) { return nil, nil })
	// Record the batches the writer would write instead of writing them.
	sink.started = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		for j := range sink.work {
			var c bmstore.Column
			if j.d == nil {
				c = sliceColumn(sink.gapColumn(), j.n)
			} else {
				c = j.d.slice(0, int64(j.n), false)
				c.Floats = append([]float64(nil), c.Floats...)
				c.Given = append([]bool(nil), c.Given...)
				sink.free <- j.d
			}
			got = append(got, c)
		}
	}()
	for _, cut := range [][2]int{{0, 5}, {5, 6}, {6, 19}, {19, 22}} {
		b := &bmwire.Batch{Rows: rows[cut[0]:cut[1]], Values: []bmwire.Values{{Type: blockmodel.Float64,
			Float: v.Float[cut[0]:cut[1]], Valid: v.Valid[cut[0]:cut[1]]}}}
		require.NoError(t, sink.Batch(b))
	}
	require.NoError(t, sink.skip(n))
	if sink.cur != nil {
		require.NoError(t, sink.flush())
	}
	close(sink.work)
	<-done
	var floats []float64
	var given []bool
	for _, c := range got {
		require.Len(t, c.Floats, chunk)
		floats, given = append(floats, c.Floats...), append(given, c.Given...)
	}
	require.Len(t, floats, n)
	for r := range n {
		assert.Equal(t, want.given[r], given[r], "row %d given", r)
		if want.given[r] {
			w, g := want.col.Floats[r], floats[r]
			assert.True(t, w == g || (math.IsNaN(w) && math.IsNaN(g)), "row %d: %v, want %v", r, g, w)
		}
	}
}
