package tasks

import (
	"context"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
	"github.com/geostat-engine/geostat/worker/objects"
)

type krigingPlan struct {
	env *Env
	req Request
	p   *KrigingParams
	endpoints
	variogram *geostat.Variogram
	name      string // base name of the written attributes
}

// PrepareKriging validates a kriging request.
func PrepareKriging(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeKriging(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &krigingPlan{env: env, req: req, p: p}
	if pl.endpoints, err = loadEndpoints(ctx, env, req, p.Source, p.Target, estimateSourceKinds, estimateTargetKinds); err != nil {
		return nil, err
	}
	if pl.variogram, err = loadVariogram(ctx, env, req, "variogram", p.Variogram); err != nil {
		return nil, err
	}
	if !p.Ordinary {
		if err := pl.variogram.RequireCovariance(); err != nil {
			return nil, invalid("kriging_method", "simple kriging needs a covariance: %v", err)
		}
	}
	if p.Discretisation.Count() > 1 && pl.target.Object.Grid == nil && pl.tgtBM == nil {
		return nil, invalid("block_discretisation", "block kriging needs a grid or block model target, not a %s", pl.target.Object.Schema.Kind)
	}
	pl.name = p.Target.Name
	if pl.tgtBM != nil {
		// One job writes one model version of one column (A.14.5).
		if len(p.Outputs) > 0 {
			return nil, invalid("outputs", "diagnostic outputs are not written to block models: a job writes one column of a block model")
		}
		pl.name = pl.tgtBM.title
	} else if p.Target.Update != "" {
		a, _ := pl.target.Object.ResolveAttribute(p.Target.Update)
		pl.name = a.Name
	}
	nSrc, nTgt := pl.sizes()
	need := nSrc*200 + nTgt*8*float64(4+len(p.Outputs))
	if nSrc <= kriging.DefaultTableLimit {
		need += nSrc * nSrc * 8
	}
	// Disk: the estimate and each diagnostic, one float64 column each.
	if err := env.admit(req, "target", need, nTgt*8*float64(1+len(p.Outputs))); err != nil {
		return nil, err
	}
	return pl, nil
}

// loadVariogram reads and decodes a variogram object.
func loadVariogram(ctx context.Context, env *Env, req Request, field string, ref ObjectRef) (*geostat.Variogram, error) {
	v, err := loadObject(ctx, env, req.Access, req.Org, field, ref, false)
	if err != nil {
		return nil, err
	}
	if err := requireKind(field, v, objects.KindVariogram); err != nil {
		return nil, err
	}
	d, err := v.Object.DecodeVariogram()
	if err != nil {
		return nil, invalid(field, "%v", err)
	}
	for _, w := range d.Warnings {
		env.Logger.Warn("variogram", "object", ref.Raw, "warning", w)
	}
	return d.Variogram, nil
}

func (pl *krigingPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	progress(2, "reading the source")
	in, err := pl.readEstimation(ctx, pl.env, p.Source, p.Target)
	if err != nil {
		return nil, err
	}
	coords, values, keep := in.coords, in.values, in.keep
	kp := kriging.Params{Variogram: pl.variogram, Mean: p.Mean, Search: p.Neighborhood.Params(), Discretisation: p.Discretisation}
	if p.Ordinary {
		kp.Method = kriging.Ordinary
	}
	if g := pl.target.Object.Grid; g != nil {
		kp.CellSize, kp.Rotation = g.CellSize, g.Rotation
	}
	if pl.tgtBM != nil {
		return pl.runBlockModel(ctx, in, kp, progress)
	}
	progress(8, "preparing the kriging systems")
	k, err := kriging.NewContext(ctx, coords, values, kp)
	if err != nil {
		return nil, err
	}
	n := in.n
	var out kriging.Output
	slots := map[string]*[]float64{"variance": &out.Variance, "samples": &out.Samples, "mean_distance": &out.MeanDistance,
		"slope": &out.Slope, "efficiency": &out.Efficiency}
	if in.tiled {
		// In a cluster, a large target is kriged as tiles of targets.
		cols, err := in.estimateTiles(ctx, pl.env, tilejob.Estimation{Kind: tilejob.Kriging, Kriging: kp, Outputs: p.Outputs}, progress)
		if err != nil {
			return nil, err
		}
		out.Estimate = cols[0]
		for i, o := range p.Outputs {
			*slots[o] = cols[1+i]
		}
	} else {
		out.Estimate = make([]float64, n)
		for _, o := range p.Outputs {
			*slots[o] = make([]float64, n)
		}
		if err := k.Estimate(ctx, in.targets, &out, scaleProgress(progress, 10, 85, "kriging")); err != nil {
			return nil, err
		}
	}
	progress(88, "writing the result")
	ws := ObjectRef{Org: p.Target.Object.Org, Workspace: p.Target.Object.Workspace, ObjectID: pl.target.ObjectID}
	cols := [][]float64{out.Estimate}
	writes := []attributeWrite{{Target: attributeTarget(p.Target)}}
	for _, o := range p.Outputs {
		cols = append(cols, *slots[o])
		writes = append(writes, attributeWrite{Target: objects.AttributeTarget{Operation: objects.OperationCreate, Name: pl.name + "_" + o}})
	}
	// A target filter selects the rows written: the diagnostics follow the
	// estimate (on update, an existing diagnostic attribute keeps its
	// values outside the filter too).
	for i := range writes {
		if keep != nil {
			writes[i].Column, writes[i].Keep = cols[i], keep
			writes[i].Merge = i > 0 && p.Target.Update != ""
			continue
		}
		key, err := storeFloat64(ctx, pl.env, ws.Org, ws.Workspace, cols[i:i+1], []string{valuesColumn})
		if err != nil {
			return nil, err
		}
		writes[i].Values = objects.ContinuousValues{Data: key, Length: int64(n), Width: 1}
	}
	w, err := commit(ctx, pl.env, pl.target, ws, pl.req.User, writes)
	if err != nil {
		return nil, err
	}
	st := k.Stats()
	pl.env.Logger.Info("kriging finished", "systems", st.Systems, "reuse_rate", st.ReuseRate(), "updated", st.Updated, "regularised", st.Regularised, "duplicates", st.Duplicates)
	return map[string]any{
		"message": "Kriging completed successfully.",
		"target":  pl.env.targetAttributeResult(w),
	}, nil
}

// runBlockModel kriges onto a block model target (A.14.4) and writes the
// estimate as one column of a new model version: every block or sub-block
// at its centroid, a block discretisation dividing each row's own extent,
// rotated with the model. Rows of equal extent share one kriging set-up
// (its sub-point offsets), in canonical order, so a regular model (one
// extent: the parent size) is kriged exactly as the regular-3d-grid of the
// same geometry.
func (pl *krigingPlan) runBlockModel(ctx context.Context, in *estimation, kp kriging.Params, progress func(int, string)) (any, error) {
	g := pl.tgtBM.model.Geometry
	kp.CellSize, kp.Rotation = g.ParentSize(), g.GridRotation()
	out := make([]float64, in.n)
	groups := extentGroups(in.blocks, kp.Discretisation.Count() > 1)
	if in.tiled && len(groups) == 1 {
		kp.CellSize = groups[0].extent
		cols, err := in.estimateTiles(ctx, pl.env, tilejob.Estimation{Kind: tilejob.Kriging, Kriging: kp}, progress)
		if err != nil {
			return nil, err
		}
		out = cols[0]
	} else {
		var systems, done int
		progress(8, "preparing the kriging systems")
		for _, grp := range groups {
			gp := kp
			gp.CellSize = grp.extent
			k, err := kriging.NewContext(ctx, in.coords, in.values, gp)
			if err != nil {
				return nil, err
			}
			targets, est := in.targets, out
			if !grp.all {
				targets, est = make([]float64, 0, 3*len(grp.rows)), make([]float64, len(grp.rows))
				for _, r := range grp.rows {
					targets = append(targets, in.targets[3*r:3*r+3]...)
				}
			}
			base := done
			prog := func(d, total int) { scaleProgress(progress, 10, 85, "kriging")(base+d, in.n) }
			if err := k.Estimate(ctx, targets, &kriging.Output{Estimate: est}, prog); err != nil {
				return nil, err
			}
			for i, r := range grp.rows {
				out[r] = est[i]
			}
			done += len(targets) / 3
			systems += int(k.Stats().Systems)
		}
		pl.env.Logger.Info("kriging finished", "target", "block model", "extents", len(groups), "systems", systems)
	}
	progress(88, "writing the result")
	w, err := pl.tgtBM.commit(ctx, pl.env, pl.req, "kriging", in.blocks, out, in.keep)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"message": "Kriging completed successfully.",
		"target":  pl.env.targetAttributeResult(w),
	}, nil
}

// extentGroup is a set of rows of one extent (all: every row, in order,
// rows unset).
type extentGroup struct {
	extent [3]float64
	rows   []int
	all    bool
}

// extentGroups groups the rows of b by their extent, in order of first
// appearance, each in canonical order. Without block discretisation (perRow
// false), or when every row has the parent's extent, all rows are one
// group.
func extentGroups(b *blockmodel.Blocks, perRow bool) []extentGroup {
	if !perRow || b.Whole() {
		return []extentGroup{{extent: b.Geometry().ParentSize(), all: true}}
	}
	index := map[[3]float64]int{}
	var out []extentGroup
	for r := int64(0); r < b.NumRows(); r++ {
		ext := b.Extent(r)
		i, ok := index[ext]
		if !ok {
			i = len(out)
			index[ext] = i
			out = append(out, extentGroup{extent: ext})
		}
		out[i].rows = append(out[i].rows, int(r))
	}
	if len(out) == 1 {
		out[0].rows, out[0].all = nil, true
	}
	return out
}
