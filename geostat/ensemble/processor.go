package ensemble

import (
	"context"

	"github.com/geostat-engine/geostat/geostat"
)

// TileProcessor runs a fixed set of reducers over tiles handed over one at
// a time, as ProcessTile does, but keeps its working buffers (a cell-major
// chunk per goroutine, 256 KiB) from one tile to the next, where
// ProcessTile makes them at every call: the choice of a caller fed by a
// stream of tiles, such as a simulation's tile sink. Results are those of
// ProcessTile, bit for bit. A TileProcessor is not safe for concurrent use.
type TileProcessor struct {
	rs        []Reducer
	scratches []*scratch
}

// NewTileProcessor checks that the reducers agree on their cells and
// realisations and returns a processor running them over the tiles of up to
// geostat.Workers(ctx) goroutines.
func NewTileProcessor(ctx context.Context, rs ...Reducer) (*TileProcessor, error) {
	rs, err := checkedReducers(rs)
	if err != nil {
		return nil, err
	}
	return &TileProcessor{rs: rs, scratches: make([]*scratch, geostat.Workers(ctx))}, nil
}

// Process runs the reducers over every cell of t (see ProcessTile).
func (p *TileProcessor) Process(ctx context.Context, t Tile) error {
	return checkedTile(ctx, t, p.rs, p.scratches)
}
