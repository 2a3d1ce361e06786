package tbsim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/stretchr/testify/require"
)

// hugeIntervalsCase is a simulation whose every tile spans thousands of
// intervals of each of 1000 partition lines (cells of 10⁵ m, a spherical
// range of 150 m, inside MaxLineIntervals): building the sign tables of
// one tile takes far longer than a cancel may take to stop it, and grows
// memory while it runs.
func hugeIntervalsCase(t *testing.T) (Input, Params) {
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{10, 10, 10}, [3]float64{1e5, 1e5, 1e5}, geostat.Rotation{})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0, structure(geostat.Spherical, 0, 1, 150, 150, 150, geostat.Rotation{}))
	require.NoError(t, err)
	coords := []float64{5e5, 5e5, 5e5, 2e5, 7e5, 3e5}
	values := []float64{0.3, -1.1}
	p := DefaultParams()
	p.Realisations, p.Lines = 100, MaxLines
	return Input{Grid: g, Coords: coords, Values: values, Variogram: v}, p
}

// TestCancelStopsTileWithin2s cancels (through a deadline) a simulation
// while its tiles build sign tables of millions of entries: Stream returns
// the context's error within 2 s of the cancel, so a cancelled job frees
// its goroutines and stops growing memory. Before the kernels checked the
// context, the tile in progress ran on for many seconds.
func TestCancelStopsTileWithin2s(t *testing.T) {
	in, p := hugeIntervalsCase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Stream(ctx, in, p, func(Tile) error { return nil })
		done <- err
	}()
	<-ctx.Done()
	select {
	case err := <-done:
		require.Error(t, err)
		require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	case <-time.After(2 * time.Second):
		t.Fatal("the simulation did not stop within 2 s of the cancel")
	}
}

// TestFieldGridCancel checks the same of Field.Grid, the unconditional
// grid path.
func TestFieldGridCancel(t *testing.T) {
	in, _ := hugeIntervalsCase(t)
	lo, hi := in.Grid.BoundingBox()
	f, err := NewField(in.Variogram, 1, MaxLines, 1, lo, hi)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		out := make([]float64, in.Grid.NumCells())
		done <- f.Grid(ctx, 0, in.Grid, out)
	}()
	<-ctx.Done()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(2 * time.Second):
		t.Fatal("Field.Grid did not stop within 2 s of the cancel")
	}
}

// TestTilePanicIsAnError breaks a prepared simulation (a line set of its
// field is gone, as a bug could leave it) so that its tile goroutines
// panic: execute returns a *geostat.PanicError with the panicking
// goroutine's stack instead of crashing the process, and Field.Grid and
// the residuals at the data do the same.
func TestTilePanicIsAnError(t *testing.T) {
	in, p := smallCase(t)
	s, err := prepare(context.Background(), in, p, nil)
	require.NoError(t, err)
	s.field.sets[0] = nil
	_, err = s.execute(context.Background(), func(Tile) error { return nil })
	var pe *geostat.PanicError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, string(pe.Stack), "tbsim.(*Field).addRows")

	out := make([]float64, in.Masked.Grid.NumCells())
	err = s.field.Grid(context.Background(), 0, in.Masked.Grid, out)
	require.ErrorAs(t, err, &pe)
	require.ErrorAs(t, s.residuals(context.Background()), &pe)
}

// TestTileWorkerSetUpPanicIsAnError breaks a prepared simulation so that
// every tile goroutine panics in its set-up, before any tile: execute
// returns a *geostat.PanicError naming the set-up (the goroutines answer
// their tiles with it, so the collector does not wait for ever) instead of
// crashing the process.
func TestTileWorkerSetUpPanicIsAnError(t *testing.T) {
	in, p := smallCase(t)
	s, err := prepare(context.Background(), in, p, nil)
	require.NoError(t, err)
	s.R = -1 // makeslice: len out of range in newTileWorker
	done := make(chan error, 1)
	go func() {
		_, err := s.execute(context.Background(), func(Tile) error { return nil })
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("execute did not return after its tile workers' set-up panicked")
	}
	var pe *geostat.PanicError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, string(pe.Stack), "tbsim.(*sim).newTileWorker")
}
