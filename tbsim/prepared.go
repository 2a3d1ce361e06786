package tbsim

import "context"

// Prepared is a simulation prepared for one range of realisations: the
// data transformed, the conditioning kriger built and the data residuals of
// every realisation of the range computed. Its Stream simulates any run of
// coarse rows of those realisations without redoing that work, so the
// parts of one realisation range that a process computes one after the
// other (the tiles of a sharded job) pay for the preparation once. A
// Prepared is safe for concurrent use by several Stream calls.
type Prepared struct {
	s *sim
}

// Prepare prepares realisations [r0, r1) of the simulation (in, p) (see
// Prepared). p.Progress is not used: each Stream takes its own.
func Prepare(ctx context.Context, in Input, p Params, r0, r1 int) (*Prepared, error) {
	p.Progress = nil
	// Any valid row range: the rows streamed are chosen by Stream.
	s, err := prepare(ctx, in, p, &Part{R0: r0, R1: r1, Row0: 0, Row1: 1})
	if err != nil {
		return nil, err
	}
	return &Prepared{s: s}, nil
}

// Rows is the number of coarse rows of the target.
func (pr *Prepared) Rows() int { return len(pr.s.rows) }

// Stream simulates the coarse rows [row0, row1) of the prepared
// realisations and hands their tiles to sink: its tiles, values and Result
// are those of StreamPart(ctx, in, p, Part{R0: r0, R1: r1, Row0: row0, Row1:
// row1}, sink), bit for bit. progress, when not nil, is called after every
// tile with the cells done and the cells of the rows.
func (pr *Prepared) Stream(ctx context.Context, row0, row1 int, progress func(done, total int), sink func(tile Tile) error) (*Result, error) {
	if err := checkRows(row0, row1, len(pr.s.rows)); err != nil {
		return nil, err
	}
	s := *pr.s // the shared state is read only; rows, tiles and progress are this call's
	s.row0, s.row1 = row0, row1
	s.p.Progress = progress
	s.tile()
	st, err := s.execute(ctx, sink)
	if err != nil {
		return nil, err
	}
	return &Result{Cells: s.nOut, Realisations: s.R, Variogram: s.v, Search: s.search, Warnings: s.warn, Stats: st}, nil
}
