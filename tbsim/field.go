package tbsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// GridStream is the nugget stream of grid nodes: node (i, j, k) of a grid
// draws its nugget value with index i + nx·(j + ny·k) in this stream, so
// Field.Points with stream GridStream and that index reproduces the node.
const GridStream uint64 = 0

// Field is an unconditional turning-bands Gaussian random field with a
// given variogram, for a number of realisations: per realisation and
// structure, Lines line processes along directions of a randomly rotated
// spherical Fibonacci set, plus an independent nugget per point.
//
//	Y_r(x) = Σ_s Σ_l value_{r,s,l}(x) + √c0·N_{r,point}
//
// Its covariance is the variogram's C(h) exactly in expectation for any
// number of lines (docs/math.md 2.10). Every random quantity is derived from
// the seed and what it belongs to, so values at a point do not depend on
// which other points are evaluated, in which order or on how many goroutines.
//
// A Field is read-only after NewField and safe for concurrent use.
type Field struct {
	v       *geostat.Variogram
	seed    uint64
	nReal   int
	r0, r1  int // realisations whose lines are drawn (all but for a part)
	nLines  int
	nStruct int
	nuggetS float64 // √c0
	dom     domain
	sets    []*lineSet // realisation r, structure s at r·nStruct + s
}

// NewField draws the line processes of all realisations of the field with
// variogram v (used as given: normalise it first for a unit-sill Gaussian
// field). lo and hi bound the region where the field will be evaluated: its
// centre is the reference point subtracted from every coordinate before
// projection (phases stay small with large world coordinates), and a
// linear structure's random walks are tabulated over it (evaluating such a
// field outside the box panics; the tables hold 64 to 10⁴ steps per line,
// at most about max(2²¹, 68·realisations·lines) values per linear
// structure). Other structure types can be evaluated anywhere.
func NewField(v *geostat.Variogram, realisations, lines int, seed int64, lo, hi [3]float64) (*Field, error) {
	return newFieldRange(v, realisations, 0, realisations, lines, seed, lo, hi)
}

// newFieldRange is NewField drawing the lines of realisations [r0, r1) only
// (of realisations in all): their values equal those of the whole field,
// because every line is drawn from its own stream and the only quantity
// shared between realisations (the stairs table size) uses the total.
func newFieldRange(v *geostat.Variogram, realisations, r0, r1, lines int, seed int64, lo, hi [3]float64) (*Field, error) {
	if v == nil || len(v.Structures) == 0 {
		return nil, errors.New("variogram_model: a variogram with at least one structure is required")
	}
	if realisations < 1 {
		return nil, fmt.Errorf("realizations: %d must be at least 1", realisations)
	}
	if lines < 1 {
		return nil, fmt.Errorf("number_of_lines: %d must be at least 1", lines)
	}
	for a := 0; a < 3; a++ {
		if math.IsNaN(lo[a]) || math.IsNaN(hi[a]) || math.IsInf(lo[a], 0) || math.IsInf(hi[a], 0) || lo[a] > hi[a] {
			return nil, fmt.Errorf("tbsim: invalid field domain %v – %v", lo, hi)
		}
	}
	if err := checkLineIntervals(v, lines, lo, hi, "the field's domain"); err != nil {
		return nil, err
	}
	f := &Field{
		v:       v,
		seed:    uint64(seed),
		nReal:   realisations,
		r0:      r0,
		r1:      r1,
		nLines:  lines,
		nStruct: len(v.Structures),
		nuggetS: math.Sqrt(v.Nugget),
		sets:    make([]*lineSet, realisations*len(v.Structures)),
	}
	f.dom.lo, f.dom.hi = lo, hi
	for a := 0; a < 3; a++ {
		f.dom.ref[a] = 0.5 * (lo[a] + hi[a])
	}
	dirs := fibonacciDirections(lines)
	nStairs := stairsIntervals(realisations, lines, f.nStruct)
	for si := range v.Structures {
		st := &v.Structures[si]
		var rad *radial
		if processOf(st.Type) == processSpectral {
			var err error
			if rad, err = newRadial(st.Type, st.Alpha); err != nil {
				return nil, fmt.Errorf("structures[%d]: %w", si, err)
			}
		}
		for r := r0; r < r1; r++ {
			f.sets[r*f.nStruct+si] = newLineSet(f.seed, r, si, st, st.Contribution, dirs, rad, &f.dom, nStairs)
		}
	}
	return f, nil
}

// Realisations returns the number of realisations of the field.
func (f *Field) Realisations() int { return f.nReal }

// Lines returns the number of lines per structure and realisation.
func (f *Field) Lines() int { return f.nLines }

// Reference returns the reference point x_ref subtracted from coordinates
// before projection onto the lines.
func (f *Field) Reference() [3]float64 { return f.dom.ref }

// Points evaluates realisation r at the points coords (flat xyz) into out
// (len ≥ len(coords)/3), by direct evaluation of every line. The nugget of
// point i is keyed by (r, stream, first + i). It panics when r is out of
// range or out is too short.
func (f *Field) Points(r int, coords []float64, stream uint64, first int, out []float64) {
	if r < f.r0 || r >= f.r1 {
		panic(fmt.Sprintf("tbsim: realisation %d out of range [%d, %d)", r, f.r0, f.r1))
	}
	n := len(coords) / 3
	if len(out) < n {
		panic("tbsim: Points output shorter than the points")
	}
	ns := f.nugget()
	ref := f.dom.ref
	for i := 0; i < n; i++ {
		px, py, pz := coords[3*i]-ref[0], coords[3*i+1]-ref[1], coords[3*i+2]-ref[2]
		v := 0.0
		for s := 0; s < f.nStruct; s++ {
			v += f.sets[r*f.nStruct+s].pointValue(px, py, pz)
		}
		if ns != nil {
			v += f.nuggetS * ns.normal(f.seed, r, stream, first+i)
		}
		out[i] = v
	}
}

// nugget returns a nugget source when the model has a nugget, else nil.
func (f *Field) nugget() *nuggetSource {
	if f.nuggetS == 0 {
		return nil
	}
	return newNuggetSource()
}

// Grid evaluates realisation r at every node (cell centre) of g into out
// (len ≥ g.NumCells(), flat index order) with the fast regular-grid path:
// affine line coordinates, spectral lines by a cos recurrence along the rows
// from exact anchors (docs/math.md 9.1; see the package documentation).
// Rows are processed in parallel over GOMAXPROCS; the result does not
// depend on the number of goroutines.
// Nugget values use GridStream and the flat node index. It returns ctx's
// error when cancelled, a *geostat.PanicError when a goroutine panicked,
// and an error when the box spanning the grid and the field's reference
// point is more than MaxLineIntervals long in variogram ranges (see
// LineIntervals).
func (f *Field) Grid(ctx context.Context, r int, g *grid.Grid, out []float64) error {
	if r < f.r0 || r >= f.r1 {
		panic(fmt.Sprintf("tbsim: realisation %d out of range [%d, %d)", r, f.r0, f.r1))
	}
	if len(out) < g.NumCells() {
		panic("tbsim: Grid output shorter than the grid")
	}
	// The sign tables of partition lines span the grid's box: refuse a grid
	// far larger than the variogram's ranges (or too far away to be exact)
	// before allocating them.
	glo, ghi := g.BoundingBox()
	for a := 0; a < 3; a++ {
		glo[a] -= f.dom.ref[a]
		ghi[a] -= f.dom.ref[a]
	}
	if err := checkLineIntervals(f.v, f.nLines, [3]float64{min(glo[0], 0), min(glo[1], 0), min(glo[2], 0)},
		[3]float64{max(ghi[0], 0), max(ghi[1], 0), max(ghi[2], 0)}, "the grid (relative to the field's reference point)"); err != nil {
		return err
	}
	gg := newGridGeom(g, f.dom.ref)
	nx, nRows := g.Size[0], g.Size[1]*g.Size[2]
	rowsPerTile := max(1, 16384/nx)
	nTiles := (nRows + rowsPerTile - 1) / rowsPerTile
	workers := min(geostat.Workers(ctx), nTiles)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	var panics geostat.Panics
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panics.Recover(cancel)
			ws := newWorkspace()
			ws.done = ctx.Done()
			var rows []gridRow
			for {
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				t := next
				next++
				mu.Unlock()
				if t >= nTiles {
					return
				}
				lo, hi := t*rowsPerTile, min((t+1)*rowsPerTile, nRows)
				rows = rows[:0]
				for q := lo; q < hi; q++ {
					rows = append(rows, gridRow{j: q % g.Size[1], k: q / g.Size[1], i0: 0, i1: nx, off: (q - lo) * nx})
				}
				seg := out[lo*nx : hi*nx]
				clear(seg)
				f.addRows(r, &gg, rows, seg, ws)
			}
		}()
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		return fmt.Errorf("tbsim: grid of realisation %d: %w", r, err)
	}
	return ctx.Err()
}
