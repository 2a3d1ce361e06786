package tasks

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/objects"
)

// simulation is a validated conditional turning-bands simulation with its
// inputs loaded.
type simulation struct {
	p            *SimulationParams
	source       *Version
	sourceAttr   *objects.Attribute
	target       *Version
	variogram    *geostat.Variogram
	distribution *geostat.Distribution
	grid         *grid.Grid
	masked       *grid.Masked
	// Set by consim (zero values: the conditional-turning-bands task).
	//
	// names are the ensembles written (nil: the target name, and with
	// SaveGaussian its _normal_score, _point and _point_normal_score).
	names []string
	// save is how many realisations (the first ones) each ensemble keeps
	// (0: all).
	save int
	// transform turns the conditioning values read into those simulated
	// and builds their distribution (nil: the values as read, with the
	// distribution object loaded at submit).
	transform func(ctx context.Context, coords, values []float64) ([]float64, *geostat.Distribution, error)
	// onTile sees every finished tile, after it is written.
	onTile func(tbsim.Tile) error
	// memory is the simulation's estimated memory (bytes), which consim
	// adds its own to.
	memory float64
}

// prepareSimulation loads and checks everything a simulation needs.
func prepareSimulation(ctx context.Context, env *Env, req Request, p *SimulationParams, field func(string) string) (*simulation, error) {
	s := &simulation{p: p}
	var err error
	if s.source, err = loadObject(ctx, env, req.Access, req.Org, field("source"), p.Source.Object, false); err != nil {
		return nil, err
	}
	if err := requireKind(field("source"), s.source, pointKinds...); err != nil {
		return nil, err
	}
	attrField := field("source_attribute")
	if req.Shape == SeedShape {
		attrField = field("source.object_element")
	}
	if s.sourceAttr, err = continuousAttribute(attrField, s.source, p.Source.Attribute); err != nil {
		return nil, err
	}
	if s.variogram, err = loadVariogram(ctx, env, req, field("variogram_model"), p.Variogram); err != nil {
		return nil, err
	}
	if !p.Ordinary {
		if err := s.variogram.RequireCovariance(); err != nil {
			return nil, invalid(field("kriging_method"), "simple kriging conditioning needs a covariance: %v", err)
		}
	}
	if p.Distribution.Raw != "" { // consim builds its distribution from the data
		dv, err := loadObject(ctx, env, req.Access, req.Org, field("distribution"), p.Distribution, false)
		if err != nil {
			return nil, err
		}
		if err := requireKind(field("distribution"), dv, objects.KindDistribution); err != nil {
			return nil, err
		}
		if s.distribution, err = dv.Object.Distribution.Build(ctx, dv.Blobs); err != nil {
			return nil, invalid(field("distribution"), "%v", err)
		}
	}
	if s.target, err = loadObject(ctx, env, req.Access, req.Org, field("target"), p.Target.Object, true); err != nil {
		return nil, err
	}
	if err := requireKind(field("target"), s.target, gridKinds...); err != nil {
		return nil, err
	}
	g := s.target.Object.Grid
	if s.grid, err = g.Geometry(); err != nil {
		return nil, invalid(field("target"), "%v", err)
	}
	if g.Masked {
		if s.masked, err = g.MaskedGeometry(ctx, s.target.Blobs); err != nil {
			return nil, invalid(field("target"), "%v", err)
		}
	}
	// The turning-bands lines of spherical and cubic structures tabulate a
	// sign per variogram range the grid spans (tbsim.LineIntervals): a grid
	// far longer than the ranges is refused here, before any job exists.
	lo, hi := s.grid.BoundingBox()
	table := tbsim.LineIntervals(s.variogram, p.Lines, lo, hi)
	if !(table <= tbsim.MaxLineIntervals) {
		return nil, invalid(field("target"), "the grid spans too many ranges of the variogram's spherical or cubic structures: "+
			"turning bands would tabulate %.3g intervals per structure and realisation, more than %d (a smaller grid, longer ranges or fewer lines)",
			table, tbsim.MaxLineIntervals)
	}
	// Memory: the Parquet row groups being filled for every output, the
	// tiles in flight (sub-points × realisations per cell), the line sign
	// tables of the tile workers and, for variogram reproduction, the
	// Gaussian ensemble kept whole.
	cells := float64(s.cells())
	r := float64(p.Realisations)
	outs := 1.0
	if p.SaveGaussian {
		outs = 4
	}
	need := outs*min(cells, float64(objects.DefaultRowGroupRows))*r*8*2 +
		float64(env.threads())*4*4096*float64(p.Discretisation.Count())*r*8 + cells*8 +
		float64(env.threads())*table*8
	if p.VariogramReproduction {
		need += cells * r * 8
	}
	s.memory = need
	// Disk: every output ensemble, a float64 per cell and realisation.
	if err := env.admit(req, field("realizations"), need, outs*cells*r*8); err != nil {
		return nil, err
	}
	return s, nil
}

// checkDomain refuses conditioning data so far from the grid that the
// turning-bands lines over the grid and the data would need more than
// tbsim.MaxLineIntervals intervals: 422 invalid-data naming the source's
// coordinates (the grid alone was checked at submit).
func (s *simulation) checkDomain(coords, values []float64) error {
	lo, hi := s.grid.BoundingBox()
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		for a := 0; a < 3; a++ {
			lo[a], hi[a] = math.Min(lo[a], coords[3*i+a]), math.Max(hi[a], coords[3*i+a])
		}
	}
	table := tbsim.LineIntervals(s.variogram, s.p.Lines, lo, hi)
	if table <= tbsim.MaxLineIntervals {
		return nil
	}
	member := "locations.coordinates"
	if o := s.source.Object; o.Intervals != nil {
		member = o.Intervals.MidPoints.Path
	} else if o.Pointset != nil {
		member = o.Pointset.Coordinates.Path
	}
	return dataOf("source", s.source, &objects.DataError{Member: member, Err: fmt.Errorf(
		"%s: the data and the grid together span %v – %v, too many ranges of the variogram's spherical or cubic structures: "+
			"turning bands would tabulate %.3g intervals per structure and realisation, more than %d", member, lo, hi, table, tbsim.MaxLineIntervals)})
}

// tileCells returns the largest number of cells a tile of the simulation
// holds (tbsim.AutoTileRows rows of the grid; on a masked grid at most that
// many of their cells are active).
func (s *simulation) tileCells() int {
	g := s.grid
	if s.masked != nil {
		g = s.masked.Grid
	}
	rows := tbsim.AutoTileRows(g.Size[0], g.Size[1]*g.Size[2], s.p.Discretisation.Count(), s.p.Realisations)
	return min(s.cells(), rows*g.Size[0])
}

func (s *simulation) cells() int {
	if s.masked != nil {
		return s.masked.NumActive()
	}
	return s.grid.NumCells()
}

// ensembleSink streams one output ensemble into a Parquet blob.
type ensembleSink struct {
	name string
	*streamBlob
	cols [][]float64
}

// simOutput is what a simulation run produced.
type simOutput struct {
	writes    []attributeWrite
	variogram []tbsim.ExperimentalVariogram
	result    *tbsim.Result
	// coords and values are the conditioning data the simulation read
	// (filtered-out data NaN).
	coords, values []float64
	// kept holds the four ensembles (block, block normal score, point,
	// point normal score) in memory when run was asked to keep them.
	kept [4][]float64
}

// run simulates, streaming the ensembles into blobs, and returns the
// attribute writes, the experimental variograms when asked for, and with
// keep the four ensembles in memory (for the validation report).
func (s *simulation) run(ctx context.Context, env *Env, progress func(int, string), lo, hi int, keep bool) (*simOutput, error) {
	p := s.p
	progress(lo, "reading the data")
	coords, values, err := sourceData(ctx, s.source, s.sourceAttr, p.Source.Filter, "source")
	if err != nil {
		return nil, err
	}
	if s.transform != nil {
		if values, s.distribution, err = s.transform(ctx, coords, values); err != nil {
			return nil, err
		}
	}
	if err := s.checkDomain(coords, values); err != nil {
		return nil, err
	}
	in := tbsim.Input{Grid: s.grid, Masked: s.masked, Coords: coords, Values: values, Variogram: s.variogram, Distribution: s.distribution}
	if in.Filter, err = applyFilter(ctx, "filter", s.target, p.Target.Filter, s.cells()); err != nil {
		return nil, err
	}
	tp := tbsim.DefaultParams()
	tp.Realisations, tp.Lines, tp.Seed = p.Realisations, p.Lines, p.Seed
	tp.Discretisation, tp.NormaliseVariogram = p.Discretisation, p.Normalise
	tp.SaveGaussian = p.SaveGaussian || p.VariogramReproduction || keep
	if p.Ordinary {
		tp.Method = kriging.Ordinary
	}
	if p.Neighborhood != nil {
		np := p.Neighborhood.Params()
		tp.Search = &np
	}
	tp.Progress = scaleProgress(progress, lo+2, hi-5, "simulating")

	names := []string{p.Target.Name}
	if p.SaveGaussian {
		names = append(names, p.Target.Name+"_normal_score", p.Target.Name+"_point", p.Target.Name+"_point_normal_score")
	}
	if s.names != nil {
		names = s.names
	}
	save := p.Realisations
	if s.save > 0 {
		save = min(s.save, save)
	}
	ws := p.Target.Object
	sinks := make([]*ensembleSink, len(names))
	defer func() {
		for _, es := range sinks {
			if es != nil {
				es.abort()
			}
		}
	}()
	for i, n := range names {
		b, err := openBlob(ctx, env, ws.Org, ws.Workspace, objects.Float64Types(save), objects.EnsembleColumnNames(realisationPrefix, save))
		if err != nil {
			return nil, err
		}
		sinks[i] = &ensembleSink{name: n, streamBlob: b, cols: make([][]float64, save)}
	}
	out := &simOutput{coords: coords, values: values}
	cells := s.cells()
	for i := range out.kept {
		// The block normal score is kept for variogram reproduction too.
		if keep || i == 1 && p.VariogramReproduction {
			out.kept[i] = make([]float64, cells*p.Realisations)
		}
	}
	var res *tbsim.Result
	if env.Cluster != nil && s.clusterable(keep) {
		res, err = s.runOnCluster(ctx, env, in, tp, sinks, scaleProgress(progress, lo+2, hi-5, "simulating (shards done)"))
	} else {
		res, err = tbsim.Stream(ctx, in, tp, func(t tbsim.Tile) error {
			outs := [][]float64{t.Block, t.BlockGaussian, t.Point, t.PointGaussian}
			n := t.Hi - t.Lo
			for i, es := range sinks {
				for r := range es.cols {
					es.cols[r] = outs[i][r*n : (r+1)*n]
				}
				if err := es.tw.WriteFloat64Columns(es.cols); err != nil {
					return fmt.Errorf("writing %s: %w", es.name, err)
				}
			}
			for i, dst := range out.kept {
				if dst == nil {
					continue
				}
				for r := 0; r < t.Realisations; r++ {
					copy(dst[r*cells+t.Lo:r*cells+t.Hi], outs[i][r*n:(r+1)*n])
				}
			}
			if s.onTile != nil {
				return s.onTile(t)
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	progress(hi-4, "storing the ensembles")
	for i, es := range sinks {
		key, err := es.commit(ctx)
		if err != nil {
			return nil, err
		}
		t := objects.AttributeTarget{Operation: objects.OperationCreate, Name: es.name}
		if i == 0 {
			t = attributeTarget(p.Target)
		}
		out.writes = append(out.writes, attributeWrite{Target: t, Values: objects.ContinuousValues{
			Data: key, Length: int64(cells), Width: save, Ensemble: true}})
	}
	out.result = res
	if p.VariogramReproduction {
		progress(hi-2, "computing experimental variograms")
		axes, err := tbsim.VariogramReproduction(ctx, tbsim.ReproductionInput{Grid: s.grid, Masked: s.masked, Values: out.kept[1],
			Realisations: p.Realisations, Variogram: res.Variogram, Discretisation: p.Discretisation})
		if err != nil {
			return nil, err
		}
		out.variogram = axes[:]
	}
	return out, nil
}

type simulationPlan struct {
	env *Env
	req Request
	sim *simulation
}

// PrepareSimulation validates a conditional turning-bands request
// (conditional-tbsim in the seed's shape, conditional-turning-bands in the
// current one).
func PrepareSimulation(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeSimulation(req.Shape, req.Body)
	if err != nil {
		return nil, err
	}
	prefix := func(f string) string { return f }
	sim, err := prepareSimulation(ctx, env, req, p, prefix)
	if err != nil {
		return nil, err
	}
	return &simulationPlan{env: env, req: req, sim: sim}, nil
}

func (pl *simulationPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	so, err := pl.sim.run(ctx, pl.env, progress, 0, 95, false)
	if err != nil {
		return nil, err
	}
	p := pl.sim.p
	ref := ObjectRef{Org: p.Target.Object.Org, Workspace: p.Target.Object.Workspace, ObjectID: pl.sim.target.ObjectID}
	w, err := commit(ctx, pl.env, pl.sim.target, ref, pl.req.User, so.writes)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Conditional simulation completed successfully: %d realisations of %d cells.", p.Realisations, pl.sim.cells())
	var out map[string]any
	if pl.req.Shape == SeedShape {
		out = pl.env.seedResult(w, msg)
	} else {
		t := pl.env.targetResult(w)
		t["simulations"] = map[string]any{"reference": nameExpression(w.Attribute), "name": w.Attribute.Name}
		out = map[string]any{"message": msg, "target": t}
	}
	if so.variogram != nil {
		out["variogram_reproduction"] = so.variogram
	}
	if len(so.result.Warnings) > 0 {
		out["warnings"] = so.result.Warnings
	}
	return out, nil
}

// clusterable reports whether the simulation can run as cluster shards:
// the plain task (no consim transform or tile hook, every realisation
// saved under the default names) without anything kept in memory
// (variogram reproduction and the validation report keep the Gaussian
// ensemble and run in this process).
func (s *simulation) clusterable(keep bool) bool {
	return s.transform == nil && s.onTile == nil && s.names == nil && s.save == 0 && !keep && !s.p.VariogramReproduction
}

// runOnCluster simulates (in, tp) as shards on the cluster and writes the
// ensembles into the sinks' writers. The returned Result carries the
// simulation's warnings and model, from preparing it here (one empty part:
// the data transform, the field and the kriging of the residuals, no
// cells), which also reports a bad input before any shard is queued.
func (s *simulation) runOnCluster(ctx context.Context, env *Env, in tbsim.Input, tp tbsim.Params, sinks []*ensembleSink, progress func(done, total int)) (*tbsim.Result, error) {
	tp.Progress = nil
	res, err := tbsim.StreamPart(ctx, in, tp, tbsim.Part{R0: 0, R1: 1, Row0: 0, Row1: 1}, func(tbsim.Tile) error { return nil })
	if err != nil {
		return nil, err
	}
	writers := make([]*objects.TableWriter, len(sinks))
	for i, es := range sinks {
		writers[i] = es.tw
	}
	if err := env.Cluster.Run(ctx, in, tp, writers, progress); err != nil {
		return nil, err
	}
	return res, nil
}
