package objects

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/parquet-go/parquet-go"
)

// columnBlock is a block of rows of a TableWriter being written column by
// column: its row count and which columns have been written.
type columnBlock struct {
	rows  int
	done  []bool
	count int
}

// GroupRoom returns the number of rows that still fit in the current row
// group: a block written column by column (WriteFloat64ColumnsAt) may not
// hold more.
func (tw *TableWriter) GroupRoom() int {
	if tw.block != nil {
		return tw.groupCap - tw.inGroup - tw.block.rows
	}
	return tw.groupCap - tw.inGroup
}

// WriteFloat64ColumnsAt writes the next block of rows of an all-float64
// table a few columns at a time: cols are columns [first, first+len(cols))
// of the block, all of the same length n. The first call opens a block of n
// rows (n ≤ GroupRoom()); later calls must give the same n and columns not
// yet written; when every column has been written the block is complete and
// other writes may follow. The bytes are those of WriteFloat64Columns with
// the same rows: the column writers see the same values in the same order.
// This lets an assembler write an ensemble from pieces that each hold a
// range of realisations while holding one piece at a time.
func (tw *TableWriter) WriteFloat64ColumnsAt(first int, cols [][]float64) error {
	if err := tw.usable(); err != nil {
		return err
	}
	if err := tw.allFloat64(); err != nil {
		return err
	}
	width := len(tw.types)
	if len(cols) == 0 || first < 0 || first+len(cols) > width {
		return fmt.Errorf("parquet writer: columns [%d, %d) not within [0, %d)", first, first+len(cols), width)
	}
	n := len(cols[0])
	for i, c := range cols {
		if len(c) != n {
			return fmt.Errorf("parquet writer: column %d has %d rows, column %d has %d", first+i, len(c), first, n)
		}
	}
	if tw.block == nil {
		if n == 0 || n > tw.groupCap-tw.inGroup {
			return fmt.Errorf("parquet writer: a block of %d rows does not fit the %d rows left in the row group", n, tw.groupCap-tw.inGroup)
		}
		tw.block = &columnBlock{rows: n, done: make([]bool, width)}
	} else if n != tw.block.rows {
		return fmt.Errorf("parquet writer: %d rows given, the open block has %d", n, tw.block.rows)
	}
	b := tw.block
	for c := first; c < first+len(cols); c++ {
		if b.done[c] {
			return fmt.Errorf("parquet writer: column %d of the block written twice", c)
		}
	}
	// Columns are written concurrently (each column buffers its own pages,
	// so the bytes do not depend on the schedule).
	workers := max(1, min(runtime.GOMAXPROCS(0), len(cols)))
	for len(tw.bufs) < workers {
		tw.bufs = append(tw.bufs, make([]parquet.Value, 0, valueChunk))
	}
	cws := tw.pw.ColumnWriters()
	errs := make([]error, len(cols))
	eachColumn(workers, len(cols), func(w, i int) {
		c := first + i
		for lo := 0; lo < n && errs[i] == nil; {
			hi := min(n, chunkEnd(tw.inGroup+lo)-tw.inGroup) // see chunkEnd
			buf := tw.bufs[w][:0]
			for _, v := range cols[i][lo:hi] {
				buf = append(buf, parquet.DoubleValue(v))
			}
			tw.bufs[w] = buf
			if _, err := cws[c].WriteRowValues(buf); err != nil {
				errs[i] = fmt.Errorf("parquet writer: column %d: %w", c, err)
			}
			lo = hi
		}
	})
	if err := errors.Join(errs...); err != nil {
		tw.err = err
		return err
	}
	for c := first; c < first+len(cols); c++ {
		b.done[c] = true
		b.count++
	}
	if b.count < width {
		return nil
	}
	tw.block = nil
	return tw.advance(n)
}

// errBlockOpen reports a write while a column block is incomplete.
var errBlockOpen = errors.New("parquet writer: a block of rows is being written column by column")
