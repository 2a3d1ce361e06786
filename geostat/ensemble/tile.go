package ensemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
)

// Tile is a block of consecutive cells [Lo, Lo+Len()) of an ensemble, for
// every realisation: Columns[r][i] is realisation r at cell Lo+i. All columns
// have the same length. This is the layout of an ensemble's Parquet blob (one
// column per realisation, one row per cell) cut at row-group boundaries, and
// of a tbsim.Tile once its flat slice is cut into realisations.
type Tile struct {
	Lo      int
	Columns [][]float64
}

// Len returns the number of cells of the tile (0 without columns).
func (t Tile) Len() int {
	if len(t.Columns) == 0 {
		return 0
	}
	return len(t.Columns[0])
}

// TileFromFlat returns the tile of cells [lo, lo+n) whose values are stored
// realisation-major in flat: realisation r of cell lo+i at flat[i+r·n] (the
// layout of tbsim.Tile). The columns alias flat; cols, when it has the
// capacity, is reused for the column headers.
func TileFromFlat(lo, n, realisations int, flat []float64, cols [][]float64) Tile {
	if len(flat) != n*realisations {
		panic(fmt.Sprintf("ensemble: TileFromFlat: %d values for %d cells × %d realisations", len(flat), n, realisations))
	}
	cols = cols[:0]
	for r := 0; r < realisations; r++ {
		cols = append(cols, flat[r*n:(r+1)*n:(r+1)*n])
	}
	return Tile{Lo: lo, Columns: cols}
}

// Source yields the tiles of an ensemble of Cells() cells and Realisations()
// realisations, in increasing cell order, each at most MaxTile() cells, the
// tiles together covering every cell once.
type Source interface {
	// Cells is the number of cells (rows) of the ensemble.
	Cells() int
	// Realisations is the number of realisations (columns).
	Realisations() int
	// MaxTile is the largest number of cells ReadTile returns at once.
	MaxTile() int
	// ReadTile reads the next tile into the caller's buffers: dst has
	// Realisations() slices of one length L, 1 ≤ L ≤ MaxTile(), and the
	// tile has at most L cells; its columns are dst[r][:n] (or, for an
	// in-memory source, its own slices, which the caller must not modify).
	// After the last tile it returns io.EOF.
	ReadTile(ctx context.Context, dst [][]float64) (Tile, error)
}

// columns is the in-memory Source of NewColumnsSource.
type columns struct {
	cols [][]float64
	tile int
	next int
}

// NewColumnsSource returns a Source over an ensemble held in memory as one
// slice per realisation (cols[r][cell]), cut into tiles of tile cells
// (tile ≤ 0: 65536). The tiles alias cols. It panics if the columns differ in
// length.
func NewColumnsSource(cols [][]float64, tile int) Source {
	for r := range cols {
		if len(cols[r]) != len(cols[0]) {
			panic(fmt.Sprintf("ensemble: NewColumnsSource: column %d has %d cells, column 0 has %d", r, len(cols[r]), len(cols[0])))
		}
	}
	if tile <= 0 {
		tile = 1 << 16
	}
	return &columns{cols: cols, tile: tile}
}

func (c *columns) Cells() int {
	if len(c.cols) == 0 {
		return 0
	}
	return len(c.cols[0])
}
func (c *columns) Realisations() int { return len(c.cols) }
func (c *columns) MaxTile() int      { return c.tile }

func (c *columns) ReadTile(ctx context.Context, dst [][]float64) (Tile, error) {
	if err := ctx.Err(); err != nil {
		return Tile{}, err
	}
	if c.next >= c.Cells() {
		return Tile{}, io.EOF
	}
	n := c.tile
	if len(dst) > 0 && len(dst[0]) > 0 {
		n = min(n, len(dst[0]))
	}
	lo, hi := c.next, min(c.next+n, c.Cells())
	t := Tile{Lo: lo, Columns: make([][]float64, len(c.cols))}
	for r := range c.cols {
		t.Columns[r] = c.cols[r][lo:hi:hi]
	}
	c.next = hi
	return t, nil
}

// Reducer is a per-cell computation over an ensemble: LocationWise and
// Classifier. ProcessTile hands each reducer every cell of a tile with the
// cell's finite values in realisation order; a reducer reads them without
// changing them and writes only that cell's outputs, so cells are
// independent and the results do not depend on the number of goroutines or
// on the order of the tiles.
type Reducer interface {
	// realisations is the number of realisations the reducer was built for.
	realisations() int
	// cells is the number of cells of its outputs.
	cells() int
	// reduce computes the outputs of cell from its finite values v
	// (len(v) ≥ 0), using the worker's scratch s.
	reduce(cell int, v []float64, s *scratch)
}

// scratch is one goroutine's working memory.
type scratch struct {
	// cellMajor holds a chunk of cells transposed: cell i's finite values
	// at cellMajor[i·R : i·R+count[i]].
	cellMajor []float64
	count     []int
	// quant is the quantiles' working memory.
	quant quantScratch
	// above and sumAbove are the count and sum of a cell's values above
	// each cutoff.
	above    []int
	sumAbove []float64
}

// chunkValues is the number of values a goroutine transposes at a time:
// 32768 float64 (256 KiB), inside a core's L2 cache, so the transposition's
// strided writes and the per-cell passes stay in cache.
const chunkValues = 1 << 15

// chunkCells returns the cells per chunk for R realisations.
func chunkCells(realisations int) int {
	return max(16, chunkValues/max(1, realisations))
}

// ProcessTile runs the reducers over every cell of t, on geostat.Workers(ctx)
// goroutines over chunks of cells. Each chunk is transposed once to
// cell-major order (dropping NaN and ±Inf: missing values), then every
// reducer sees each cell of the chunk in turn. It returns an error when the tile does not fit the
// reducers (realisations, cell range) and the context's error when
// cancelled.
func ProcessTile(ctx context.Context, t Tile, rs ...Reducer) error {
	rs, err := checkedReducers(rs)
	if err != nil {
		return err
	}
	return checkedTile(ctx, t, rs, make([]*scratch, geostat.Workers(ctx)))
}

// checkedTile is ProcessTile on checked reducers: it checks that t fits them
// and runs processTile.
func checkedTile(ctx context.Context, t Tile, rs []Reducer, scratches []*scratch) error {
	R := rs[0].realisations()
	if len(t.Columns) != R {
		return fmt.Errorf("ensemble: tile at cell %d has %d realisations, want %d", t.Lo, len(t.Columns), R)
	}
	n := t.Len()
	for r, c := range t.Columns {
		if len(c) != n {
			return fmt.Errorf("ensemble: tile at cell %d: realisation %d has %d cells, realisation 0 has %d", t.Lo, r, len(c), n)
		}
	}
	if t.Lo < 0 || t.Lo+n > rs[0].cells() {
		return fmt.Errorf("ensemble: tile [%d, %d) is outside the %d cells of the outputs", t.Lo, t.Lo+n, rs[0].cells())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return processTile(ctx, t, rs, scratches)
}

// processTile is ProcessTile on a checked tile and checked reducers.
// Goroutine w works in scratches[w], made on first use and kept there, so
// that Process reuses the working buffers from tile to tile.
func processTile(ctx context.Context, t Tile, rs []Reducer, scratches []*scratch) error {
	R, n := rs[0].realisations(), t.Len()
	chunk := chunkCells(R)
	chunks := (n + chunk - 1) / chunk
	workers := max(1, min(len(scratches), chunks))
	_, err := geostat.ForChunks(ctx, chunks, workers, 1, nil, func(w int) func(lo, hi int) {
		if scratches[w] == nil {
			scratches[w] = newScratch(R, chunk)
		}
		s := scratches[w]
		return func(k, _ int) {
			a, b := k*chunk, min(n, (k+1)*chunk)
			transpose(t.Columns, a, b, s)
			for i := 0; i < b-a; i++ {
				v := s.cellMajor[i*R : i*R+s.count[i]]
				for _, red := range rs {
					red.reduce(t.Lo+a+i, v, s)
				}
			}
		}
	})
	if err == nil {
		err = ctx.Err() // cancelled after the last chunk: still an error
	}
	return err
}

// checkedReducers checks that there are reducers and that they agree on
// their shape, and returns them.
func checkedReducers(rs []Reducer) ([]Reducer, error) {
	if len(rs) == 0 {
		return nil, errors.New("ensemble: no reducer")
	}
	for _, r := range rs {
		if r == nil {
			return nil, errors.New("ensemble: nil reducer")
		}
	}
	out := rs
	for _, r := range out[1:] {
		if r.realisations() != out[0].realisations() || r.cells() != out[0].cells() {
			return nil, fmt.Errorf("ensemble: reducers disagree: %d cells × %d realisations and %d × %d",
				out[0].cells(), out[0].realisations(), r.cells(), r.realisations())
		}
	}
	return out, nil
}

func newScratch(realisations, chunk int) *scratch {
	return &scratch{cellMajor: make([]float64, realisations*chunk), count: make([]int, chunk)}
}

// transpose copies cells [a, b) of cols to s.cellMajor in cell-major order,
// keeping each cell's finite values in realisation order. The copy is a
// plain strided one; only when it met a NaN or ±Inf are the cells compacted.
func transpose(cols [][]float64, a, b int, s *scratch) {
	R := len(cols)
	m := b - a
	cnt := s.count[:m]
	buf := s.cellMajor
	// check stays 0 while every value is finite: t − t is 0 for a finite
	// sum t of four values and NaN for a NaN or ±Inf one, which a NaN or
	// ±Inf value makes (so can an overflow of finite values: the cells are
	// then checked one by one for nothing).
	check := 0.0
	// Eight realisations at a time: each cell receives eight consecutive
	// values (a cache line's worth) per visit instead of one; then four.
	r := 0
	for ; r+8 <= R; r += 8 {
		c0 := cols[r][a:b]
		c1, c2, c3 := cols[r+1][a:b][:len(c0)], cols[r+2][a:b][:len(c0)], cols[r+3][a:b][:len(c0)]
		c4, c5, c6, c7 := cols[r+4][a:b][:len(c0)], cols[r+5][a:b][:len(c0)], cols[r+6][a:b][:len(c0)], cols[r+7][a:b][:len(c0)]
		j := r // cell i's values start at j = i·R + r
		for i, x0 := range c0 {
			x1, x2, x3, x4, x5, x6, x7 := c1[i], c2[i], c3[i], c4[i], c5[i], c6[i], c7[i]
			d := buf[j : j+8 : j+8]
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = x0, x1, x2, x3, x4, x5, x6, x7
			j += R
			t := ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))
			check += t - t
		}
	}
	for ; r+4 <= R; r += 4 {
		c0 := cols[r][a:b]
		c1, c2, c3 := cols[r+1][a:b][:len(c0)], cols[r+2][a:b][:len(c0)], cols[r+3][a:b][:len(c0)]
		j := r // cell i's values start at j = i·R + r
		for i, x0 := range c0 {
			x1, x2, x3 := c1[i], c2[i], c3[i]
			d := buf[j : j+4 : j+4]
			d[0], d[1], d[2], d[3] = x0, x1, x2, x3
			j += R
			t := (x0 + x1) + (x2 + x3)
			check += t - t
		}
	}
	for ; r < R; r++ {
		for i, x := range cols[r][a:b] {
			buf[i*R+r] = x
			check += x - x
		}
	}
	for i := range cnt {
		cnt[i] = R
	}
	if check == 0 {
		return
	}
	for i := range cnt {
		v := buf[i*R : (i+1)*R]
		w := 0
		for _, x := range v {
			if x-x == 0 {
				v[w] = x
				w++
			}
		}
		cnt[i] = w
	}
}

// readValues is the number of values Process reads at a time into each of
// its buffers: 2¹⁸ float64 (2 MiB), so that the values the source has just
// written are still in the shared cache when the workers transpose them
// (pieces of 2¹⁶ to 2¹⁸ values took about 8 % less CPU time than pieces of
// 2²⁰ or 2²² in the location-wise bench), and the buffers together stay far
// below one row group of a wide ensemble.
const readValues = 1 << 18

// readAheadBytes is the most Process reads ahead of its workers: 32 MiB of
// pieces, at least two, at most maxPieces. A Parquet source fetches the next
// page of every column at about the same row (the writer's pages hold the
// same rows in every column: 256 KiB each, 25 MiB for 100 realisations);
// from a blob not in the page cache that takes the disk a while, during
// which the workers process the pieces already read instead of waiting. In
// the location-wise bench's ensemble, dropped from the page cache by
// posix_fadvise DONTNEED before each pass (2026-11-25), the workers waited
// for the reader 0.34–0.53 s of a pass of about 0.8 s with two pieces,
// 0.15–0.21 s with sixteen, and 0.08–0.13 s with sixteen and the reader's 8
// columns at once (0.13–0.20 s in most passes with the statistics' faster
// kernel of the evening, which leaves the reader less time).
const (
	readAheadBytes = 32 << 20
	maxPieces      = 16
)

// readCells returns the number of cells Process reads at a time: about
// readValues / R, whole chunks of chunkCells, at most maxTile and the
// ensemble.
func readCells(R, maxTile, cells int) int {
	chunk := chunkCells(R)
	n := max(1, readValues/max(R, 1)/chunk) * chunk
	return max(1, min(n, maxTile, cells))
}

// readPieces returns the number of buffers Process reads pieces of
// pieceCells cells × R realisations into, for an ensemble of cells cells:
// as many as readAheadBytes holds, at most maxPieces and at most the pieces
// of the ensemble, but at least two.
func readPieces(pieceCells, R, cells int) int {
	bytes := 8 * pieceCells * R
	pieces := (cells + pieceCells - 1) / max(1, pieceCells)
	return max(2, min(maxPieces, readAheadBytes/max(1, bytes), pieces))
}

// BufferBytes returns the bytes of the read buffers Process uses for an
// ensemble of cells cells × realisations realisations whose source returns
// tiles of at most maxTile cells (at most about 32 MiB, or two pieces when
// a piece is larger than 16 MiB): the memory Process needs besides the
// reducers' outputs and its workers' small transposition buffers.
func BufferBytes(cells, realisations, maxTile int) int {
	piece := readCells(realisations, max(1, maxTile), cells)
	return readPieces(piece, realisations, cells) * 8 * piece * realisations
}

// Process reads every tile of src and runs the reducers over it
// (ProcessTile). It reads pieces of about 2 MiB (tiles of the source, or
// parts of them, of at most src.MaxTile() cells) into up to 16 buffers (at most
// about 32 MiB, BufferBytes), the next pieces being read on another
// goroutine while the workers process the current one, so memory stays near
// those buffers plus the reducers' outputs whatever the size of the
// ensemble and of its tiles. Only that goroutine calls src, one call at a
// time, and it has returned when Process returns.
// Process checks that src has the reducers' shape and that its tiles cover
// every cell once, in order.
func Process(ctx context.Context, src Source, rs ...Reducer) error {
	return ProcessWithProgress(ctx, src, nil, rs...)
}

// ProcessWithProgress is Process that calls progress(done, total) after each
// tile with the number of cells processed and the total (progress may be
// nil). It is called from the calling goroutine.
func ProcessWithProgress(ctx context.Context, src Source, progress func(done, total int), rs ...Reducer) error {
	proc, err := NewTileProcessor(ctx, rs...) // its buffers serve every tile
	if err != nil {
		return err
	}
	rs = proc.rs
	R, cells := src.Realisations(), src.Cells()
	if R != rs[0].realisations() || cells != rs[0].cells() {
		return fmt.Errorf("ensemble: source has %d cells × %d realisations, the outputs %d × %d",
			cells, R, rs[0].cells(), rs[0].realisations())
	}
	maxTile := src.MaxTile()
	if maxTile < 1 {
		return fmt.Errorf("ensemble: source tile size %d", maxTile)
	}
	piece := readCells(R, maxTile, cells)
	dsts := make([][][]float64, readPieces(piece, R, cells))
	for b := range dsts {
		buf := make([]float64, piece*R)
		dsts[b] = make([][]float64, R)
		for r := range dsts[b] {
			dsts[b][r] = buf[r*piece : (r+1)*piece : (r+1)*piece]
		}
	}
	// The reader fills a free buffer and hands it over; the loop below
	// processes it and frees it again.
	type read struct {
		t   Tile
		err error
		buf int
	}
	free := make(chan int, len(dsts))
	for b := range dsts {
		free <- b
	}
	reads := make(chan read, len(dsts))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			var b int
			select {
			case b = <-free:
			case <-stop:
				return
			}
			t, err := readTile(ctx, src, dsts[b])
			select {
			case reads <- read{t, err, b}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	next := 0
	for {
		rd := <-reads
		t := rd.t
		if errors.Is(rd.err, io.EOF) {
			break
		}
		if rd.err != nil {
			return fmt.Errorf("ensemble: reading the tile at cell %d: %w", next, rd.err)
		}
		if t.Lo != next || t.Len() == 0 || t.Len() > piece {
			return fmt.Errorf("ensemble: source returned %d cells at cell %d, want at most %d at cell %d", t.Len(), t.Lo, piece, next)
		}
		if err := proc.Process(ctx, t); err != nil {
			return err
		}
		free <- rd.buf
		next += t.Len()
		if progress != nil {
			progress(next, cells)
		}
	}
	if next != cells {
		return fmt.Errorf("ensemble: source ended after %d of %d cells", next, cells)
	}
	return nil
}

// nan is the missing output value.
var nan = math.NaN()

// readTile reads the next tile of src into dst, returning a panic of the
// reader (it runs on a goroutine of its own) as a *geostat.PanicError.
func readTile(ctx context.Context, src Source, dst [][]float64) (t Tile, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = geostat.NewPanicError(p)
		}
	}()
	return src.ReadTile(ctx, dst)
}
