package bmjob

import (
	"fmt"
	"io"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// Bytes per row of the estimates below, rounded up: they are the slices an
// update holds at its peak, not measured heap.
const (
	// memoryBase is what any update holds besides its rows: read-ahead
	// pages, row-group buffers, the Parquet encoder.
	memoryBase = 64 << 20
	// rowBytes is a latest-version row of an update: the row numbers and
	// values of the validating pass, and the row identity of a sub-blocked
	// model (parent and corners).
	rowBytes = 26
	// geometry change: an old row (identity, one old column at a time), a
	// file row (its sub-block's key, index entry and sort slot) and each of
	// its values, a new row (its origin, identity and one column at a time).
	oldRowBytes, fileRowBytes, fileValueBytes, newRowBytes = 32, 96, 16, 96
)

// UpdateMemory estimates the memory in bytes an update job holds at its
// peak: rows is the latest version's row count. A geometry change (A.7.3)
// holds its file and the new row set too: fileRows bounds the file's data
// rows (FileRowBound), cols is the number of value columns it gives, and
// the new rows are counted as rows+fileRows, at most MaxRows (a fill_subblocks
// split can make more; ApplyUpdate checks those against
// UpdateInput.MaxMemory once the file is read).
func UpdateMemory(rows, fileRows int64, cols int, geometry bool) int64 {
	if !geometry {
		return memoryBase + rowBytes*clampRows(rows)
	}
	rows, fileRows = clampRows(rows), clampRows(fileRows)
	return geometryMemory(rows, fileRows, min(rows+fileRows, MaxRows), cols)
}

// clampRows clamps a row count to [0, MaxRows+1]: past MaxRows a change is
// refused anyway, and sums of clamped counts cannot overflow.
func clampRows(n int64) int64 { return min(max(n, 0), MaxRows+1) }

// geometryMemory is the estimate of a geometry change from old rows to at
// most out rows, reading a file of at most file rows of cols values (each
// count clamped, clampRows).
func geometryMemory(old, file, out int64, cols int) int64 {
	perFile := int64(fileRowBytes + fileValueBytes*max(cols, 0))
	return memoryBase + oldRowBytes*clampRows(old) + perFile*clampRows(file) + newRowBytes*clampRows(out)
}

// checkGeometrySize refuses a geometry change that could make more than
// MaxRows rows, or whose estimate exceeds maxMemory (when positive).
func checkGeometrySize(old, file, out int64, cols int, maxMemory int64) error {
	if out > MaxRows {
		return tooManyRows(out)
	}
	if need := geometryMemory(old, file, out, cols); maxMemory > 0 && need > maxMemory {
		e := &blockmodel.ValidationError{}
		e.Add("geometry_change", "the update could make a version of up to %d rows (sub-blocks included) from %d rows and a file of up to %d rows; that needs about %s of memory, more than the %s the worker gives a job",
			out, old, file, mib(need), mib(maxMemory))
		return e.Err()
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// FileRowBound is an upper bound of the data rows of an update file of
// size bytes in format (bmwire.FormatParquet or bmwire.FormatCSV): the row
// count in a Parquet file's footer, the line count of a CSV file. A file
// that is not Parquet gives an error (*bmwire.FileError).
func FileRowBound(r io.ReaderAt, size int64, format string) (int64, error) {
	return fileRowBound(r, size, format)
}
