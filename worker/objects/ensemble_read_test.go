package objects

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/problem"
)

// ensembleBytes writes an R-column ensemble of n rows with the project's
// writer, row groups of rg rows, and returns the bytes and the columns.
func ensembleBytes(t *testing.T, n, R, rg int) ([]byte, [][]float64) {
	t.Helper()
	cols := make([][]float64, R)
	for r := range cols {
		cols[r] = make([]float64, n)
		for i := range cols[r] {
			cols[r][i] = math.Sin(float64(i*7+r*13)) * float64(r+1)
		}
	}
	cols[0][5] = math.NaN()
	var buf bytes.Buffer
	tw, err := NewTableWriter(&buf, Float64Types(R), EnsembleColumnNames("g", R), &WriteOptions{RowGroupRows: rg})
	require.NoError(t, err)
	for lo := 0; lo < n; lo += 999 {
		hi := min(n, lo+999)
		block := make([][]float64, R)
		for r := range block {
			block[r] = cols[r][lo:hi]
		}
		require.NoError(t, tw.WriteFloat64Columns(block))
	}
	_, err = tw.Close()
	require.NoError(t, err)
	return buf.Bytes(), cols
}

// readAllTiles reads every tile of s and returns the columns and the tile
// sizes.
func readAllTiles(t *testing.T, s ensemble.Source) ([][]float64, []int) {
	t.Helper()
	return readAllTilesInto(t, s, s.MaxTile())
}

// readAllTilesInto is readAllTiles with buffers of size values.
func readAllTilesInto(t *testing.T, s ensemble.Source, size int) ([][]float64, []int) {
	t.Helper()
	buf := make([][]float64, s.Realisations())
	for r := range buf {
		buf[r] = make([]float64, size)
	}
	out := make([][]float64, s.Realisations())
	var sizes []int
	for {
		tile, err := s.ReadTile(context.Background(), buf)
		if errors.Is(err, io.EOF) {
			return out, sizes
		}
		require.NoError(t, err)
		var total int
		for _, sz := range sizes {
			total += sz
		}
		require.Equal(t, total, tile.Lo, "tiles are consecutive")
		sizes = append(sizes, tile.Len())
		for r := range out {
			out[r] = append(out[r], tile.Columns[r]...)
		}
	}
}

func sameValues(t *testing.T, want, got [][]float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for r := range want {
		require.Len(t, got[r], len(want[r]), "column %d", r)
		for i := range want[r] {
			if math.IsNaN(want[r][i]) {
				require.True(t, math.IsNaN(got[r][i]), "column %d row %d", r, i)
				continue
			}
			require.Equal(t, want[r][i], got[r][i], "column %d row %d", r, i)
		}
	}
}

// TestEnsembleReaderMatchesReadTable streams files of the project's writer
// with several row groups, whole and cut into smaller tiles, and compares
// with the values written and with ReadTable.
func TestEnsembleReaderMatchesReadTable(t *testing.T) {
	const n, R = 5000, 7
	data, cols := ensembleBytes(t, n, R, 1500)
	spec := Float64Spec("cell_attributes[0].values", R, n)
	tab, err := readBytes(t, data, spec)
	require.NoError(t, err)
	whole, err := tab.Float64Columns("x", false)
	require.NoError(t, err)
	sameValues(t, cols, whole)
	for _, c := range []struct {
		tile  int
		sizes []int
	}{
		{0, []int{1500, 1500, 1500, 500}},
		{1500, []int{1500, 1500, 1500, 500}},
		{700, []int{700, 700, 100, 700, 700, 100, 700, 700, 100, 500}},
		{1, nil},
	} {
		er, err := NewEnsembleReader(bytes.NewReader(data), int64(len(data)), spec, nil, c.tile)
		require.NoError(t, err)
		assert.Equal(t, n, er.Cells())
		assert.Equal(t, R, er.Realisations())
		got, sizes := readAllTiles(t, er)
		sameValues(t, cols, got)
		if c.sizes != nil {
			assert.Equal(t, c.sizes, sizes, "tile %d", c.tile)
			assert.Equal(t, c.sizes[0], er.MaxTile())
		} else {
			assert.Len(t, sizes, n)
		}
		// A second pass after Rewind reads the same values.
		er.Rewind()
		again, _ := readAllTiles(t, er)
		sameValues(t, cols, again)
		require.NoError(t, er.Close())
	}
	// Buffers shorter than MaxTile cut the tiles at their length.
	er, err := NewEnsembleReader(bytes.NewReader(data), int64(len(data)), spec, nil, 0)
	require.NoError(t, err)
	got, sizes := readAllTilesInto(t, er, 600)
	sameValues(t, cols, got)
	assert.Equal(t, []int{600, 600, 300, 600, 600, 300, 600, 600, 300, 500}, sizes)
	require.NoError(t, er.Close())
}

// TestEnsembleReaderStatistics runs the location-wise statistics over the
// reader and over the columns in memory: the same numbers.
func TestEnsembleReaderStatistics(t *testing.T) {
	const n, R = 3000, 11
	data, cols := ensembleBytes(t, n, R, 1000)
	er, err := NewEnsembleReader(bytes.NewReader(data), int64(len(data)), Float64Spec("e", R, n), nil, 400)
	require.NoError(t, err)
	ops := ensemble.Operations{Summary: true, Quantiles: []float64{0.1, 0.5}, ProbabilityAbove: []float64{0}, MeanAbove: []float64{0.5}}
	got, err := ensemble.Compute(context.Background(), er, ops)
	require.NoError(t, err)
	want, err := ensemble.Compute(context.Background(), ensemble.NewColumnsSource(cols, 0), ops)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestEnsembleReaderNullsAndSentinels reads OPTIONAL columns (as other
// writers produce) with nulls, and nan_description sentinels: all NaN.
func TestEnsembleReaderNullsAndSentinels(t *testing.T) {
	group := parquet.Group{"a": parquet.Optional(parquet.Leaf(parquet.DoubleType)), "b": parquet.Leaf(parquet.DoubleType)}
	var rows []parquet.Row
	for i := range 10 {
		a := parquet.DoubleValue(float64(i)).Level(0, 1, 0)
		if i%3 == 0 {
			a = parquet.NullValue().Level(0, 0, 0)
		}
		rows = append(rows, parquet.Row{a, parquet.DoubleValue(float64(-i)).Level(0, 0, 1)})
	}
	data := writeWith(t, group, nil, rows) // row groups of 4 rows
	er, err := NewEnsembleReader(bytes.NewReader(data), int64(len(data)), Float64Spec("e", 2, 10), []float64{-4, 7}, 3)
	require.NoError(t, err)
	got, sizes := readAllTiles(t, er)
	assert.Equal(t, []int{3, 1, 3, 1, 2}, sizes)
	nan := math.NaN()
	sameValues(t, [][]float64{{nan, 1, 2, nan, 4, 5, nan, nan, 8, nan}, {0, -1, -2, -3, nan, -5, -6, -7, -8, -9}}, got)
}

// TestEnsembleReaderRejects checks the open-time checks and corrupt data met
// while streaming: always a *BlobError naming the element, a 422
// invalid-data problem, never a panic.
func TestEnsembleReaderRejects(t *testing.T) {
	const n, R = 3000, 3
	data, _ := ensembleBytes(t, n, R, 1000)
	open := func(data []byte, spec TableSpec) (*EnsembleReader, error) {
		return NewEnsembleReader(bytes.NewReader(data), int64(len(data)), spec, nil, 0)
	}
	for name, c := range map[string]struct {
		spec TableSpec
		want string
	}{
		"rows":  {Float64Spec("cell_attributes[1].values", R, n+1), "has 3000 rows, want length 3001"},
		"width": {Float64Spec("cell_attributes[1].values", R+1, n), "has 3 columns, want 4"},
		"type":  {TableSpec{Element: "cell_attributes[1].values", Types: []DataType{TypeInt64, TypeFloat64, TypeFloat64}, Rows: n}, "want float64"},
	} {
		_, err := open(data, c.spec)
		var be *BlobError
		require.True(t, errors.As(err, &be), name)
		assert.Equal(t, "cell_attributes[1].values", be.Element)
		assert.ErrorContains(t, err, c.want, name)
		p := problem.From(err)
		assert.Equal(t, http.StatusUnprocessableEntity, p.Status)
		assert.Equal(t, problem.ComputeInvalidData, p.Type)
	}
	_, err := open([]byte("PAR1 not really PAR1"), Float64Spec("e", 1, 0))
	assert.ErrorContains(t, err, "e: parquet blob")

	// Corrupt the page data of every row group (the footer stays intact):
	// the file opens, and reading fails with a BlobError.
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	spec := Float64Spec("cell_attributes[2].values", R, n)
	readFailures := 0
	for _, rg := range f.Metadata().RowGroups {
		for _, col := range rg.Columns {
			bad := bytes.Clone(data)
			at := col.MetaData.DataPageOffset + col.MetaData.TotalCompressedSize/2
			for k := range int64(64) {
				bad[at+k] ^= 0x5a
			}
			er, err := open(bad, spec)
			if err != nil {
				var be *BlobError
				require.True(t, errors.As(err, &be))
				continue
			}
			buf := [][]float64{make([]float64, er.MaxTile()), make([]float64, er.MaxTile()), make([]float64, er.MaxTile())}
			var readErr error
			for readErr == nil {
				_, readErr = er.ReadTile(context.Background(), buf)
			}
			if errors.Is(readErr, io.EOF) {
				continue // the flipped bytes decoded to other values
			}
			readFailures++
			var be *BlobError
			require.True(t, errors.As(readErr, &be), "%v", readErr)
			assert.Equal(t, spec.Element, be.Element)
			_, err = er.ReadTile(context.Background(), buf)
			assert.ErrorIs(t, err, io.EOF, "a broken file is not read further")
		}
	}
	assert.Positive(t, readFailures, "some corruption is met while streaming")
}

// TestEnsembleReaderCancel stops at a cancelled context.
func TestEnsembleReaderCancel(t *testing.T) {
	data, _ := ensembleBytes(t, 100, 2, 0)
	er, err := NewEnsembleReader(bytes.NewReader(data), int64(len(data)), Float64Spec("e", 2, 100), nil, 0)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = er.ReadTile(ctx, [][]float64{make([]float64, 100), make([]float64, 100)})
	assert.ErrorIs(t, err, context.Canceled)
}
