package tbsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
)

// DataStream is the nugget stream of the conditioning data: merged datum i
// (see kriging.Kriger.Data) draws its nugget with index i in this stream.
const DataStream uint64 = 1

// Input is what a simulation conditions on and where it simulates.
type Input struct {
	// Grid is the target grid. Required unless Masked is set.
	Grid *grid.Grid
	// Masked, when set, restricts the target to its active cells; outputs
	// then have one row per active cell (and Grid is ignored).
	Masked *grid.Masked
	// Filter optionally selects target cells, one flag per output cell
	// (per active cell of a masked grid); cells with false are not simulated
	// and get NaN in every output.
	Filter []bool
	// Coords are the conditioning data, flat xyz; may be empty for an
	// unconditional simulation.
	Coords []float64
	// Values are the data values in data units, one per datum; NaN values
	// are dropped.
	Values []float64
	// Variogram is the variogram model (required). It is normalised to unit
	// sill when Params.NormaliseVariogram is true.
	Variogram *geostat.Variogram
	// Distribution transforms data to normal scores and simulated Gaussian
	// values back to data units. nil means the values are already Gaussian
	// and outputs stay in Gaussian units.
	Distribution *geostat.Distribution
}

// Tile is a finished block of target cells [Lo, Hi) for all realisations.
// Each output slice holds (Hi−Lo)·Realisations values, realisation r of cell
// c at index (c − Lo) + r·(Hi − Lo). The slices are reused after the sink
// returns.
type Tile struct {
	Lo, Hi       int
	Realisations int
	// Block is the block value in data units: the mean of the
	// back-transformed sub-point values.
	Block []float64
	// BlockGaussian is the mean of the sub-points' Gaussian values (only
	// with SaveGaussian, else nil).
	BlockGaussian []float64
	// Point is the value of the sub-point nearest the cell centre in data
	// units (only with SaveGaussian, else nil).
	Point []float64
	// PointGaussian is that sub-point's Gaussian value (only with
	// SaveGaussian, else nil).
	PointGaussian []float64
}

// Result is the outcome of a simulation. From Run, each output slice holds
// Cells·Realisations values, realisation r of cell c at index c + r·Cells
// (one column per realisation); from Stream the slices are nil.
type Result struct {
	Cells        int
	Realisations int
	Block        []float64
	// BlockGaussian, Point and PointGaussian are set with SaveGaussian.
	BlockGaussian []float64
	Point         []float64
	PointGaussian []float64
	// Variogram is the Gaussian-space model that was simulated (normalised
	// when requested).
	Variogram *geostat.Variogram
	// Search is the conditioning neighbourhood used.
	Search neighbor.Params
	// Warnings are findings a user should see.
	Warnings []string
	// Stats count the work done.
	Stats Stats
}

// Stats count a simulation's work.
type Stats struct {
	// Data is the number of conditioning data after dropping NaN values and
	// merging duplicates.
	Data int
	// Simulated is the number of target cells simulated (not filtered out).
	Simulated int
	// Unconditioned is the number of simulated cells left unconditioned for
	// lack of neighbours (a draw from the prior there).
	Unconditioned int
	// Tiles is the number of tiles computed.
	Tiles int
	// Kriging are the counters of the conditioning kriging.
	Kriging kriging.Stats
}

// Run simulates and returns the full ensemble in memory. See Stream.
func Run(ctx context.Context, in Input, p Params) (*Result, error) {
	var res *Result
	var n, R int
	err := run(ctx, in, p, nil, func(s *sim) {
		n, R = s.nOut, s.R
		res = &Result{Block: make([]float64, n*R)}
		if s.p.SaveGaussian {
			res.BlockGaussian = make([]float64, n*R)
			res.Point = make([]float64, n*R)
			res.PointGaussian = make([]float64, n*R)
		}
	}, func(t Tile) error {
		m := t.Hi - t.Lo
		for r := 0; r < R; r++ {
			copy(res.Block[t.Lo+r*n:t.Hi+r*n], t.Block[r*m:(r+1)*m])
			if t.BlockGaussian != nil {
				copy(res.BlockGaussian[t.Lo+r*n:t.Hi+r*n], t.BlockGaussian[r*m:(r+1)*m])
				copy(res.Point[t.Lo+r*n:t.Hi+r*n], t.Point[r*m:(r+1)*m])
				copy(res.PointGaussian[t.Lo+r*n:t.Hi+r*n], t.PointGaussian[r*m:(r+1)*m])
			}
		}
		return nil
	}, func(info *Result) {
		info.Block, info.BlockGaussian, info.Point, info.PointGaussian = res.Block, res.BlockGaussian, res.Point, res.PointGaussian
		res = info
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Stream simulates and hands every finished tile to sink, in increasing
// cell order, from the calling goroutine; a sink error stops the
// simulation and is returned. Memory stays near a few tiles per worker
// (tile cells × sub-points × realisations) plus the conditioning data.
//
// The pipeline (docs/math.md sections 0–4): data are normal-scored through
// the distribution; the variogram is normalised (Params.NormaliseVariogram);
// the unconditional field of every realisation is evaluated at the data and
// at every sub-point of the target cells (Field, with the fine grid of
// sub-points on the fast grid path); each cell is conditioned by kriging of
// residuals,
//
//	Y_cs(x_k) = Y_s(x_k) + Σ_i λ_ik (y_i − Y_s(x_i)),
//
// with weights λ solved once per cell around its centre (block kriging
// sub-point weights) and applied to all realisations; each sub-point is
// back-transformed and the block value is the mean of the back-transformed
// sub-points. Cells with fewer neighbours than the search's MinSamples
// (ordinary kriging: fewer than one) stay unconditioned: a draw from the
// prior (counted in Stats.Unconditioned).
//
// The output is bit-identical for any GOMAXPROCS and any TileRows. ctx is
// checked between tiles; on cancellation Stream returns an error wrapping
// ctx.Err() after the tiles in progress finish.
func Stream(ctx context.Context, in Input, p Params, sink func(tile Tile) error) (*Result, error) {
	var res *Result
	err := run(ctx, in, p, nil, nil, sink, func(info *Result) { res = info })
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Part selects a piece of a simulation: realisations [R0, R1) of the
// coarse rows [Row0, Row1) of the target (a coarse row is the run of cells
// of equal j and k; see RowStarts for its output cells).
type Part struct {
	R0, R1     int
	Row0, Row1 int
}

// RowStarts returns, for the target of in, the first output cell of every
// coarse row (cells of equal j, k in k-major order) and, last, the number of
// output cells: coarse row q holds output cells [starts[q], starts[q+1]).
// On a masked grid a row holds its active cells and may be empty.
func RowStarts(in Input) ([]int, error) {
	var g *grid.Grid
	switch {
	case in.Masked != nil:
		g = in.Masked.Grid
	case in.Grid != nil:
		g = in.Grid
	default:
		return nil, errors.New("target: a grid is required")
	}
	nx, rows := g.Size[0], g.Size[1]*g.Size[2]
	starts := make([]int, rows+1)
	if in.Masked == nil {
		for q := range starts {
			starts[q] = q * nx
		}
		return starts, nil
	}
	active := in.Masked.ActiveCells()
	a := 0
	for q := 0; q < rows; q++ {
		starts[q] = a
		for a < len(active) && active[a] < (q+1)*nx {
			a++
		}
	}
	starts[rows] = a
	return starts, nil
}

// StreamPart simulates one part of the simulation of (in, p) and hands its
// tiles to sink like Stream: a Tile then holds the part's realisations
// (Tile.Realisations = R1 − R0, index 0 being realisation R0) of output
// cells [Lo, Hi) within the part's rows. Every value is bit-identical to the
// same realisation and cell of Run(ctx, in, p) for any part, tiling and
// GOMAXPROCS: the field, the data residuals and the conditioning weights of
// a realisation and cell depend only on the request, never on the part.
// The returned Result counts the part's work; its Realisations is R1 − R0.
func StreamPart(ctx context.Context, in Input, p Params, part Part, sink func(tile Tile) error) (*Result, error) {
	var res *Result
	err := run(ctx, in, p, &part, nil, sink, func(info *Result) { res = info })
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkRows reports coarse rows [row0, row1) that are not a non-empty run
// of the rows of a target.
func checkRows(row0, row1, rows int) error {
	if row0 < 0 || row1 > rows || row0 >= row1 {
		return fmt.Errorf("tbsim: part rows [%d, %d) not within [0, %d)", row0, row1, rows)
	}
	return nil
}

// sim is the prepared state of one simulation.
type sim struct {
	p       Params
	R       int // realisations simulated (of the part)
	r0      int // first realisation simulated
	row0    int // coarse rows simulated: [row0, row1)
	row1    int
	v       *geostat.Variogram
	dist    *geostat.Distribution
	bt      *backTransformer // nil without a distribution
	g       *grid.Grid
	fine    gridGeom
	masked  *grid.Masked
	filter  []bool
	nOut    int
	nsub    int
	nearest int
	field   *Field
	kr      *kriging.Kriger
	res     []float64 // residuals y_i − Y_s,r(x_i) at merged datum i, realisation r: [i·R + r]
	rows    []rowInfo // coarse rows (j, k) in order
	tiles   []tileSpan
	search  neighbor.Params
	warn    []string
}

// rowInfo is one coarse row of the target grid: its output cells [lo, hi)
// and the span [ci0, ci1) of i of its wanted cells (empty when none).
type rowInfo struct {
	j, k     int
	lo, hi   int
	ci0, ci1 int
}

// tileSpan is a run of coarse rows [r0, r1) and its output cells [lo, hi).
type tileSpan struct {
	r0, r1 int
	lo, hi int
}

func run(ctx context.Context, in Input, p Params, part *Part, alloc func(*sim), sink func(Tile) error, done func(*Result)) error {
	s, err := prepare(ctx, in, p, part)
	if err != nil {
		return err
	}
	if alloc != nil {
		alloc(s)
	}
	st, err := s.execute(ctx, sink)
	if err != nil {
		return err
	}
	info := &Result{Cells: s.nOut, Realisations: s.R, Variogram: s.v, Search: s.search, Warnings: s.warn, Stats: st}
	done(info)
	return nil
}

// prepare validates the input, transforms the data, builds the field, the
// kriger and the residuals at the data.
func prepare(ctx context.Context, in Input, p Params, part *Part) (*sim, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if in.Variogram == nil {
		return nil, errors.New("variogram_model: a variogram is required")
	}
	s := &sim{p: p, R: p.Realisations, dist: in.Distribution, filter: in.Filter}
	switch {
	case in.Masked != nil:
		s.masked, s.g = in.Masked, in.Masked.Grid
		s.nOut = in.Masked.NumActive()
	case in.Grid != nil:
		s.g = in.Grid
		s.nOut = in.Grid.NumCells()
	default:
		return nil, errors.New("target: a grid is required")
	}
	if in.Filter != nil && len(in.Filter) != s.nOut {
		return nil, fmt.Errorf("filter: %d flags for %d target cells", len(in.Filter), s.nOut)
	}
	r1 := p.Realisations
	if part != nil {
		if part.R0 < 0 || part.R1 > p.Realisations || part.R0 >= part.R1 {
			return nil, fmt.Errorf("tbsim: part realisations [%d, %d) not within [0, %d)", part.R0, part.R1, p.Realisations)
		}
		if err := checkRows(part.Row0, part.Row1, s.g.Size[1]*s.g.Size[2]); err != nil {
			return nil, err
		}
		s.r0, r1, s.R = part.R0, part.R1, part.R1-part.R0
		s.row0, s.row1 = part.Row0, part.Row1
	}
	v := in.Variogram
	if sill := v.TotalSill(); p.NormaliseVariogram {
		if math.Abs(sill-1) > geostat.SillTolerance {
			s.warn = append(s.warn, fmt.Sprintf("variogram normalised from total sill %g to 1", sill))
		}
		v = v.Normalised()
	} else if math.Abs(sill-1) > geostat.SillTolerance && !v.Intrinsic() {
		s.warn = append(s.warn, fmt.Sprintf("variogram total sill %g is not 1: Gaussian realisations will have variance %g", sill, sill))
	}
	if v.Intrinsic() {
		if p.Method != kriging.Ordinary {
			return nil, fmt.Errorf("kriging_method: %w; a linear structure can only be simulated with ordinary kriging conditioning", v.RequireCovariance())
		}
		s.warn = append(s.warn, "the variogram has a linear (intrinsic) structure: Gaussian values are not N(0,1) marginally")
	}
	s.v = v
	if len(in.Coords)%3 != 0 {
		return nil, fmt.Errorf("source: coordinates length %d is not a multiple of 3", len(in.Coords))
	}
	if len(in.Values) != len(in.Coords)/3 {
		return nil, fmt.Errorf("source_attribute: %d values for %d points", len(in.Values), len(in.Coords)/3)
	}
	if p.Search != nil {
		s.search = *p.Search
	} else {
		s.search = neighbor.Params{Ellipsoid: v.Structures[v.LongestStructure()].Ellipsoid, MaxSamples: DefaultMaxSamples, MinSamples: 1}
	}
	if s.dist != nil {
		s.bt = newBackTransformer(s.dist)
	}
	s.nsub = p.Discretisation.Count()
	s.nearest = p.Discretisation.Nearest()

	// Data: drop NaN, normal scores.
	var coords, y []float64
	for i, z := range in.Values {
		if math.IsNaN(z) {
			continue
		}
		coords = append(coords, in.Coords[3*i:3*i+3]...)
		if s.dist != nil {
			z = s.dist.NormalScore(z)
		}
		y = append(y, z)
	}
	// Field domain: the grid and the data.
	lo, hi := s.g.BoundingBox()
	for i := 0; i < len(coords); i += 3 {
		for a := 0; a < 3; a++ {
			lo[a] = math.Min(lo[a], coords[i+a])
			hi[a] = math.Max(hi[a], coords[i+a])
		}
	}
	f, err := newFieldRange(v, p.Realisations, s.r0, r1, p.Lines, p.Seed, lo, hi)
	if err != nil {
		return nil, err
	}
	s.field = f
	s.fine = newGridGeom(p.Discretisation.Fine(s.g), f.dom.ref)
	if len(y) > 0 {
		// Cells of the next grid row often share a cell's neighbours: keep
		// the factorisations of about a row and a quarter.
		kp := kriging.Params{Variogram: v, Method: p.Method, Search: s.search, Discretisation: p.Discretisation,
			CellSize: s.g.CellSize, Rotation: s.g.Rotation,
			FactorCache: max(kriging.DefaultFactorCache, s.g.Size[0]+s.g.Size[0]/4)}
		kr, err := kriging.NewContext(ctx, coords, y, kp)
		if err != nil {
			return nil, fmt.Errorf("conditioning: %w", err)
		}
		s.kr = kr
		if err := s.residuals(ctx); err != nil {
			return nil, err
		}
	}
	s.layout()
	return s, nil
}

// residuals evaluates the unconditional field at the merged data for every
// realisation (in parallel over chunks of data) and stores y_i − Y_s,r(x_i).
func (s *sim) residuals(ctx context.Context) error {
	coords, y := s.kr.Data()
	n := len(y)
	R := s.R
	s.res = make([]float64, n*R)
	const chunk = 256
	nChunks := (n + chunk - 1) / chunk
	jobs := nChunks * R
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	var panics geostat.Panics
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	for w := 0; w < min(geostat.Workers(ctx), jobs); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panics.Recover(stop)
			ctx := wctx
			buf := make([]float64, chunk)
			for ctx.Err() == nil {
				mu.Lock()
				job := next
				next++
				mu.Unlock()
				if job >= jobs {
					return
				}
				r, c := job%R, job/R
				i0, i1 := c*chunk, min((c+1)*chunk, n)
				s.field.Points(s.r0+r, coords[3*i0:3*i1], DataStream, i0, buf)
				for i := i0; i < i1; i++ {
					s.res[i*R+r] = y[i] - buf[i-i0]
				}
			}
		}()
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		return fmt.Errorf("tbsim: residuals at the data: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tbsim: cancelled: %w", err)
	}
	return nil
}

// wanted reports whether output cell c is simulated.
func (s *sim) wanted(c int) bool { return s.filter == nil || s.filter[c] }

// layout lists the coarse rows with their output ranges and wanted spans,
// and groups them into tiles.
func (s *sim) layout() {
	nx, ny, nz := s.g.Size[0], s.g.Size[1], s.g.Size[2]
	s.rows = make([]rowInfo, 0, ny*nz)
	a := 0 // next active index (masked)
	var active []int
	if s.masked != nil {
		active = s.masked.ActiveCells()
	}
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			ri := rowInfo{j: j, k: k, ci0: nx, ci1: 0}
			base := nx * (j + ny*k)
			if s.masked == nil {
				ri.lo, ri.hi = base, base+nx
				for i := 0; i < nx; i++ {
					if s.wanted(base + i) {
						ri.ci0, ri.ci1 = min(ri.ci0, i), max(ri.ci1, i+1)
					}
				}
			} else {
				ri.lo = a
				for a < len(active) && active[a] < base+nx {
					if s.wanted(a) {
						i := active[a] - base
						ri.ci0, ri.ci1 = min(ri.ci0, i), max(ri.ci1, i+1)
					}
					a++
				}
				ri.hi = a
			}
			if ri.ci1 <= ri.ci0 {
				ri.ci0, ri.ci1 = 0, 0
			}
			s.rows = append(s.rows, ri)
		}
	}
	s.tile()
}

// tile groups the coarse rows [row0, row1) (all rows when row1 is 0) into
// tiles.
func (s *sim) tile() {
	rowsPerTile := s.p.TileRows
	if rowsPerTile == 0 {
		rowsPerTile = s.autoTileRows()
	}
	if s.row1 == 0 {
		s.row1 = len(s.rows)
	}
	s.tiles = nil
	for r0 := s.row0; r0 < s.row1; r0 += rowsPerTile {
		r1 := min(r0+rowsPerTile, s.row1)
		t := tileSpan{r0: r0, r1: r1, lo: s.rows[r0].lo, hi: s.rows[r1-1].hi}
		if t.hi > t.lo {
			s.tiles = append(s.tiles, t)
		}
	}
}

// autoTileRows sizes tiles so that the unconditional values of a tile (sub-
// points × realisations) stay near 2¹⁸ values (2 MB, which stay in cache
// while the tile's cells are conditioned: larger tiles are slower on the
// tbsim-cond benchmark and hold more buffers), with enough tiles to keep
// every worker busy.
func (s *sim) autoTileRows() int {
	return AutoTileRows(s.g.Size[0], len(s.rows), s.nsub, s.R)
}

// AutoTileRows returns the grid rows per tile a simulation chooses when
// Params.TileRows is 0, for a target of rows coarse rows (ny·nz) of nx
// cells, subPoints sub-points per cell (Discretisation.Count()) and
// realisations realisations, under the current GOMAXPROCS: about 2¹⁸
// unconditional values (sub-points × realisations) per tile, fewer rows when
// that leaves under 8 tiles per thread. A tile of an unmasked grid holds
// that many rows × nx cells (the last tile fewer); Stream hands its sink
// one tile at a time.
func AutoTileRows(nx, rows, subPoints, realisations int) int {
	perRow := nx * subPoints * realisations
	n := max(1, (1<<18)/max(1, perRow))
	want := 8 * runtime.GOMAXPROCS(0)
	if rows/n < want {
		n = max(1, rows/want)
	}
	return n
}

// tileResult is a computed tile waiting for delivery.
type tileResult struct {
	idx  int
	tile Tile
	buf  *tileBuffers
	err  error
}

// tileBuffers are the reusable output buffers of one tile.
type tileBuffers struct {
	block, blockG, point, pointG []float64
}

// execute computes the tiles on a worker pool and delivers them in order.
func (s *sim) execute(ctx context.Context, sink func(Tile) error) (Stats, error) {
	var st Stats
	if s.kr != nil {
		st.Data = s.kr.Stats().Data
	}
	nTiles := len(s.tiles)
	workers := max(1, min(geostat.Workers(ctx), nTiles))
	window := 2 * workers
	jobs := make(chan int, window)
	results := make(chan tileResult, window)
	pool := make(chan *tileBuffers, window+workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var panics geostat.Panics
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tw *tileWorker
			func() {
				defer panics.Recover(cancel)
				tw = s.newTileWorker()
			}()
			if tw == nil { // its set-up panicked: it answers its share of tiles with the panic
				for idx := range jobs {
					results <- tileResult{idx: idx, err: panics.Err()}
				}
				return
			}
			tw.ws.done = ctx.Done() // a cancel stops the tile in progress
			defer func() {
				mu.Lock()
				st.Simulated += tw.simulated
				st.Unconditioned += tw.unconditioned
				st.Tiles += tw.tiles
				mu.Unlock()
			}()
			for idx := range jobs {
				if ctx.Err() != nil {
					results <- tileResult{idx: idx, err: ctx.Err()}
					continue
				}
				var buf *tileBuffers
				select {
				case buf = <-pool:
				default:
					buf = &tileBuffers{}
				}
				var tile Tile
				computed := false
				func() {
					// A panic fails the simulation (a *geostat.PanicError)
					// instead of the process; the other tiles stop.
					defer panics.Recover(cancel)
					tile = tw.compute(s.tiles[idx], buf)
					computed = true
				}()
				if !computed {
					results <- tileResult{idx: idx, err: panics.Err()}
					continue
				}
				if err := ctx.Err(); err != nil { // the tile may be incomplete
					results <- tileResult{idx: idx, err: err}
					continue
				}
				results <- tileResult{idx: idx, tile: tile, buf: buf}
			}
			if tw.solver != nil {
				func() {
					defer panics.Recover(cancel)
					tw.solver.Flush()
				}()
			}
		}()
	}
	total := s.nOut
	if s.row1 > s.row0 {
		total = s.rows[s.row1-1].hi - s.rows[s.row0].lo
	}
	doneCells := 0
	pending := make(map[int]tileResult)
	sent, delivered := 0, 0
	var firstErr error
	for delivered < nTiles && firstErr == nil {
		for sent < nTiles && sent-delivered < window && ctx.Err() == nil {
			jobs <- sent
			sent++
		}
		if sent == delivered { // cancelled before anything was in flight
			firstErr = ctx.Err()
			break
		}
		r := <-results
		pending[r.idx] = r
		for {
			r, ok := pending[delivered]
			if !ok {
				break
			}
			delete(pending, delivered)
			delivered++
			if r.err != nil {
				firstErr = r.err
				break
			}
			if err := sink(r.tile); err != nil {
				firstErr = fmt.Errorf("tbsim: tile sink: %w", err)
				break
			}
			pool <- r.buf
			doneCells += r.tile.Hi - r.tile.Lo
			if s.p.Progress != nil {
				s.p.Progress(doneCells, total)
			}
		}
	}
	cancel()
	close(jobs)
	go func() { wg.Wait(); close(results) }()
	for range results { // drain tiles in flight
	}
	if s.kr != nil {
		st.Kriging = s.kr.Stats()
	}
	if err := panics.Err(); err != nil {
		return st, fmt.Errorf("tbsim: simulation failed: %w", err)
	}
	if firstErr != nil {
		if errors.Is(firstErr, context.Canceled) || errors.Is(firstErr, context.DeadlineExceeded) {
			return st, fmt.Errorf("tbsim: simulation stopped after %d of %d cells: %w", doneCells, total, firstErr)
		}
		return st, firstErr
	}
	return st, nil
}
