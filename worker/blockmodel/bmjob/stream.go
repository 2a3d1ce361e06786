package bmjob

import (
	"context"
	"errors"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// errOutOfOrder: an update file's rows are not in ascending row order, so
// it cannot be streamed; the update is done again through memory.
var errOutOfOrder = errors.New("bmjob: update file rows are not in row order")

// streamSink is the bmwire.Sink of one value column of an update whose
// file gives its rows in canonical order (what the client writes, and what
// a query returns): each batch goes to the store's column writer as it is
// read, in a second goroutine, so that reading the file and writing the
// column overlap and the column is never held whole in memory. A batch is
// lent to the writer (ColumnWriter.WriteLent: a whole row group of the
// store, every row given, is encoded from the batch itself, not a copy)
// and comes back to the free ones when the writer releases it. Rows the
// file skips are written as not given (merge keeps, replace or a new
// column nulls them). A row before an earlier one stops it with
// errOutOfOrder.
type streamSink struct {
	ctx     context.Context
	open    func(allRows bool) (*bmstore.ColumnWriter, error)
	w       *bmstore.ColumnWriter
	typ     blockmodel.DataType
	n       int64 // model rows
	chunk   int   // rows per written batch
	next    int64 // first row not yet placed
	cur     *dense
	curLen  int
	gap     bmstore.Column // a batch of rows not given, shared read-only (made at its first use)
	free    chan *dense
	work    chan streamJob
	done    chan error
	started bool
}

type streamJob struct {
	d   *dense // nil: a gap of n rows
	n   int
	all bool
}

// streamBuffers is the number of a streamSink's batches: one filled, the
// others with the writer (queued, or lent while encoded).
const streamBuffers = 3

// newStreamSink returns a sink for n model rows of type typ, written in
// batches of chunk rows (fewer for a smaller model); open starts the
// column writer once the file's row count is known (allRows: the file
// has a row for every model row, so a merge is a replace).
func newStreamSink(ctx context.Context, typ blockmodel.DataType, n int64, chunk int, open func(allRows bool) (*bmstore.ColumnWriter, error)) *streamSink {
	chunk = int(max(1, min(int64(chunk), n)))
	s := &streamSink{ctx: ctx, open: open, typ: typ, n: n, chunk: chunk,
		free: make(chan *dense, streamBuffers), work: make(chan streamJob, 2), done: make(chan error, 1)}
	for range streamBuffers {
		s.free <- newDense(typ, int64(chunk), true)
	}
	return s
}

// gapColumn returns the batch of chunk rows not given, made at its first
// use (a file without gaps of a whole batch needs none).
func (s *streamSink) gapColumn() bmstore.Column {
	if s.gap.Type == "" {
		g := newDense(s.typ, int64(s.chunk), true)
		s.gap = g.col
		s.gap.Given = g.given // all false
	}
	return s.gap
}

// Start implements bmwire.Sink: opens the column writer and starts the
// writing goroutine.
func (s *streamSink) Start(rows int64) error {
	w, err := s.open(rows == s.n)
	if err != nil {
		return err
	}
	s.w, s.started = w, true
	go s.writer()
	return nil
}

func (s *streamSink) writer() {
	var err error
	for j := range s.work {
		if err == nil {
			err = s.ctx.Err()
		}
		if err == nil {
			if j.d == nil {
				err = geostat.Catch(func() error { return s.w.Write(sliceColumn(s.gapColumn(), j.n)) })
				continue
			}
			// The batch comes back when the writer releases it; after a
			// failure (a panic of WriteLent included) at once, as the
			// update is then dropped whole.
			var once sync.Once
			release := func() { once.Do(func() { s.free <- j.d }) }
			err = geostat.Catch(func() error { // a panic fails the update, never the process
				return s.w.WriteLent(j.d.slice(0, int64(j.n), j.all), release)
			})
			if err != nil {
				release()
			}
			continue
		}
		if j.d != nil {
			s.free <- j.d
		}
	}
	s.done <- err
}

// sliceColumn returns the first n rows of c with their Given flags.
func sliceColumn(c bmstore.Column, n int) bmstore.Column {
	d := dense{col: c}
	out := d.slice(0, int64(n), true)
	out.Given = c.Given[:n]
	return out
}

// Batch implements bmwire.Sink.
func (s *streamSink) Batch(b *bmwire.Batch) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if !s.started {
		if err := s.Start(-1); err != nil {
			return err
		}
	}
	v := &b.Values[0]
	rows := b.Rows
	for r := 0; r < len(rows); {
		row := rows[r]
		if row < s.next {
			return errOutOfOrder
		}
		if err := s.skip(row); err != nil {
			return err
		}
		if s.cur == nil {
			s.take()
		}
		// The run of consecutive rows from r that fits the current batch
		// is copied in bulk (a whole file in row order is one run a batch).
		k, lim := 1, min(len(rows)-r, s.chunk-s.curLen)
		for k < lim && rows[r+k] == row+int64(k) {
			k++
		}
		s.cur.setRun(int64(s.curLen), v, r, k)
		s.curLen += k
		s.next += int64(k)
		r += k
		if s.curLen == s.chunk {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// take starts a new batch from a free buffer.
func (s *streamSink) take() {
	s.cur = <-s.free
	clear(s.cur.given)
	s.cur.count = 0
	s.curLen = 0
}

// skip places the rows from next to row (exclusive) as not given: inside
// the current batch, or as whole batches of rows not given.
func (s *streamSink) skip(row int64) error {
	for s.next < row {
		left := row - s.next
		switch {
		case s.cur != nil || left < int64(s.chunk):
			if s.cur == nil {
				s.take()
			}
			k := min(left, int64(s.chunk-s.curLen))
			s.curLen += int(k)
			s.next += k
			if s.curLen == s.chunk {
				if err := s.flush(); err != nil {
					return err
				}
			}
		default:
			if err := s.send(streamJob{n: s.chunk}); err != nil {
				return err
			}
			s.next += int64(s.chunk)
		}
	}
	return nil
}

func (s *streamSink) flush() error {
	j := streamJob{d: s.cur, n: s.curLen, all: s.cur.count == int64(s.curLen)}
	s.cur = nil
	return s.send(j)
}

func (s *streamSink) send(j streamJob) error {
	// After a write error the writer drains the rest; finish reports it.
	s.work <- j
	return nil
}

// finish writes the rows after the file's last one, waits for the writer
// and closes the column.
func (s *streamSink) finish() error {
	if !s.started {
		if err := s.Start(0); err != nil {
			return err
		}
	}
	err := s.skip(s.n)
	if err == nil && s.cur != nil {
		err = s.flush()
	}
	close(s.work)
	if werr := <-s.done; err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return s.w.Close()
}

// stop ends the writer after a failed read (the transaction's Abort drops
// what it wrote).
func (s *streamSink) stop() {
	if !s.started {
		return
	}
	close(s.work)
	<-s.done
}
