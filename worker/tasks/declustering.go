package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/geostat-engine/geostat/geostat/declus"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
)

// DefaultDeclusteringPower is the IDW exponent of a declustering request
// without a power member.
const DefaultDeclusteringPower = 2.0

// DeclusteringParams are the parameters of the declustering task.
type DeclusteringParams struct {
	Source ObjectRef
	// Attribute, when set, is a source attribute: samples whose value is
	// missing are left out (weight 0), and cell declustering over several
	// sizes compares the declustered means of its values.
	Attribute string
	Target    Target
	// Influence methods (the default).
	Grid         ObjectRef
	Neighborhood *Neighborhood
	// Power is the IDW exponent; 0 selects KNN (an explicit null power).
	Power float64
	// Cell is set for cell declustering.
	Cell *declus.CellParams
}

// Reasons of the checks across members of a declustering request.
const (
	reasonInfluenceNeeds  = "is required by the influence method (method absent or of type influence)"
	reasonSizesNeedValues = "is required to choose among several cell sizes (their declustered means of this attribute decide)"
)

// declusteringRules declares the members of a declustering request.
func declusteringRules(target, nb *object) *object {
	source := &object{ref: "DeclusteringSource", doc: "The samples to decluster", fields: []*rule{
		objectRef("object", "The samples' object URL (a point set, or downhole intervals at their mid points)"),
		str("attribute", "Optional: an attribute of the samples; samples whose value is missing are left out (weight 0). Required by cell declustering over several cell sizes"),
	}}
	locations := &object{ref: "EvaluationLocations", doc: "Evaluation locations: the points of a point set or intervals, the cell centres of a grid, the active cells of a masked grid", fields: []*rule{
		objectRef("object", "The object's URL"),
	}}
	positives := func(name, doc string) *rule {
		return array(name, number("", "").positive().req(), doc)
	}
	sizes := positives("", "Cell sizes along x, each tried")
	sizes.minItems = 1
	sizeRange := &object{fields: []*rule{
		number("min", "The smallest cell size").positive().req(),
		number("max", "The largest cell size").positive().req(),
		integer("steps", 10, 1, 10000, "As GSLIB's number of cell sizes: steps + 1 sizes from min to max in equal increments; 1 tries min alone"),
	}}
	anisotropy := positives("anisotropy", "[ay, az]: a cell measures size × size·ay × size·az (GSLIB's Y and Z cell anisotropy; default [1, 1])")
	anisotropy.minItems, anisotropy.maxItems = 2, 2
	method := &object{ref: "DeclusteringMethod", tag: "type",
		doc:    "influence (the client's method: shares of influence over the evaluation locations, KNN or IDW by power) or cell (GSLIB declus cell declustering)",
		fields: []*rule{str("type", "influence or cell").req()},
		variants: []variant{
			{when: []string{"influence"}, obj: &object{fields: []*rule{}}},
			{when: []string{"cell"}, obj: &object{fields: []*rule{
				oneOf("cell_size", "The cell sizes along x: a list, or {min, max, steps}",
					sizes, member("", sizeRange, "")).req(),
				anisotropy,
				integer("offsets", DefaultCellOffsets, 1, 1000, "Grid origins averaged per cell size (GSLIB's number of origin offsets)"),
				str("objective", "With several sizes, keep the one whose declustered mean is the smallest (min: high values clustered) or the largest (max)").values("min", "max").defaults("min"),
			}}},
		}}
	return &object{doc: "Declustering weights of samples, one per sample, summing to 1 (GSLIB declus sums to n). Influence: each evaluation location shares one unit among the samples it finds (KNN: equally; IDW: by h^-power; at h = 0 equally among the coincident samples); a sample no location reaches gets 0; no location reaching any sample is 422. Cell: GSLIB declus conventions (docs/api.md 8.2)", fields: []*rule{
		member("source", source, "The samples").req(),
		member("grid", locations, "The evaluation locations; "+reasonInfluenceNeeds),
		member("target", target, "Where the weights are written: a continuous attribute, one value per sample").req(),
		member("neighborhood", nb, "The search around each evaluation location; "+reasonInfluenceNeeds),
		number("power", "The IDW exponent (> 0; absent: 2.0); null selects KNN (equal shares). Ignored by cell declustering").positive().defaults(DefaultDeclusteringPower),
		member("method", method, "The method (absent: influence)"),
	}}
}

// DefaultCellOffsets is the number of grid origins cell declustering
// averages when offsets is absent (the value of GSLIB's example parameter
// file).
const DefaultCellOffsets = 5

// DecodeDeclustering decodes and checks the fields of a declustering
// request.
func DecodeDeclustering(raw []byte) (*DeclusteringParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "declustering"), &p)
	out := &DeclusteringParams{Power: DefaultDeclusteringPower}
	if f.need("source") {
		s := f.sub("source")
		out.Source = s.objectURL("object")
		out.Attribute = s.str("attribute")
	}
	out.Target = f.currentTarget("target")
	// A missing power is IDW with 2.0; an explicit null is KNN.
	if r, ok := f.m["power"]; ok && strings.TrimSpace(string(r)) == "null" {
		out.Power = 0
	} else if v, ok := f.number("power"); ok {
		out.Power = v
	}
	typ := "influence"
	if f.has("method") {
		m := f.sub("method")
		if t, ok := m.strOK("type"); ok && t != "" {
			typ = t
		}
		switch typ {
		case "influence":
		case "cell":
			out.Cell = m.cellParams(&p)
			if len(out.Cell.Sizes) > 1 && out.Attribute == "" {
				p.add(f.name("source")+".attribute", reasonSizesNeedValues)
			}
		default:
			p.add(m.name("type"), "must be \"influence\" or \"cell\" (got %q)", typ)
		}
	}
	if typ == "influence" {
		if f.has("grid") {
			out.Grid = f.sub("grid").objectURL("object")
		} else {
			p.add(f.name("grid"), reasonInfluenceNeeds)
		}
		if out.Neighborhood = f.neighbourhood(CurrentShape, "neighborhood"); out.Neighborhood == nil {
			p.add(f.name("neighborhood"), reasonInfluenceNeeds)
		}
	}
	return out, p.err()
}

// cellParams decodes the members of a cell method.
func (m *fields) cellParams(p *problems) *declus.CellParams {
	c := &declus.CellParams{Offsets: int(m.integer("offsets"))}
	if o, ok := m.strOK("objective"); ok {
		switch o {
		case "min":
		case "max":
			c.Objective = declus.Maximize
		default:
			p.add(m.name("objective"), "must be \"min\" or \"max\" (got %q)", o)
		}
	}
	numbers := func(key string, raw json.RawMessage) ([]float64, bool) {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, false
		}
		out := make([]float64, len(items))
		for i, it := range items {
			var x *float64
			if json.Unmarshal(it, &x) != nil || x == nil {
				p.add(fmt.Sprintf("%s[%d]", m.name(key), i), "must be a number")
				continue
			}
			if !(*x > 0) {
				p.add(fmt.Sprintf("%s[%d]", m.name(key), i), "must be a positive finite number (got %v)", *x)
			}
			out[i] = *x
		}
		return out, true
	}
	if raw, ok := m.raw("cell_size"); !ok {
		p.add(m.name("cell_size"), "is required")
	} else if sizes, ok := numbers("cell_size", raw); ok {
		if len(sizes) == 0 {
			p.add(m.name("cell_size"), "must list at least one cell size")
		}
		c.Sizes = sizes
	} else {
		r := m.sub("cell_size")
		lo, _ := r.number("min")
		hi, _ := r.number("max")
		c.Sizes = declus.SizeRange(lo, hi, int(r.integer("steps")))
	}
	c.AnisY, c.AnisZ = 1, 1
	if raw, ok := m.raw("anisotropy"); ok {
		a, ok := numbers("anisotropy", raw)
		switch {
		case !ok:
			p.add(m.name("anisotropy"), "must be a list [ay, az] of two positive numbers")
		case len(a) != 2:
			p.add(m.name("anisotropy"), "must be a list [ay, az] of two positive numbers (got %d items)", len(a))
		default:
			c.AnisY, c.AnisZ = a[0], a[1]
		}
	}
	return c
}

type declusteringPlan struct {
	env                  *Env
	req                  Request
	p                    *DeclusteringParams
	source, target, grid *Version
	attr                 *objects.Attribute // nil: positions only
	n                    int64
}

// PrepareDeclustering validates a declustering request: the samples (a
// point set or downhole intervals at their mid points), the target (the
// samples' object, or an object with exactly one element per sample, which
// gets the weights in sample order), and for the influence methods the
// evaluation locations (a point set, intervals, or either grid kind) and the
// neighbourhood.
//
// Methods and decisions (docs/api.md): influence (the client's): at every
// evaluation location the search finds n samples and shares one unit among
// them (KNN: 1/n each; IDW: in proportion to h^−power, h the
// ellipsoid-normalised distance; a location at distance 0 of samples gives
// them its whole unit in equal parts); locations with fewer than
// min_samples samples give nothing; a sample's weight is its total share,
// normalised so that the weights sum to 1 (GSLIB's declus scales them to sum
// to the number of samples), and a sample no location reaches gets 0. When
// no location reaches any sample the job fails with 422. cell: GSLIB's
// declus (declus.Cell): cells of size × size·ay × size·az aligned with the
// coordinate axes, origins starting 0.01 below the data minimum and shifted
// diagonally, weights 1/(samples in the cell) averaged over the origins; with
// several sizes the one whose declustered mean is extreme by objective,
// equal weights when none improves on the equal-weight mean.
func PrepareDeclustering(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeDeclustering(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &declusteringPlan{env: env, req: req, p: p}
	if pl.source, err = loadObject(ctx, env, req.Access, req.Org, "source", p.Source, false); err != nil {
		return nil, err
	}
	if err := requireKind("source", pl.source, pointKinds...); err != nil {
		return nil, err
	}
	list := pl.source.Object.AttributeLists()[0]
	if p.Attribute != "" {
		if pl.attr, err = continuousAttribute("source.attribute", pl.source, p.Attribute); err != nil {
			return nil, err
		}
		list = pl.attr.List
	}
	if pl.n, err = pl.source.Object.ExpectedLength(list); err != nil {
		return nil, dataOf("source", pl.source, err)
	}
	if pl.n == 0 {
		return nil, invalid("source", "the object %s has no samples to decluster", p.Source.Raw)
	}
	if pl.target, err = loadObject(ctx, env, req.Access, req.Org, "target", p.Target.Object, true); err != nil {
		return nil, err
	}
	if err := requireKind("target", pl.target, targetKinds...); err != nil {
		return nil, err
	}
	if err := checkTargetAttribute("target.attribute", pl.target, p.Target); err != nil {
		return nil, err
	}
	if pl.target.ObjectID != pl.source.ObjectID {
		nt, err := elements("target", pl.target)
		if err != nil {
			return nil, err
		}
		if nt != pl.n {
			return nil, invalid("target", "the target has %d elements for %d samples: the weights are written one per sample, in the samples' order", nt, pl.n)
		}
	}
	n := float64(pl.n)
	need := n * 8 * 8
	if p.Cell == nil {
		if pl.grid, err = loadObject(ctx, env, req.Access, req.Org, "grid", p.Grid, false); err != nil {
			return nil, err
		}
		if err := requireKind("grid", pl.grid, targetKinds...); err != nil {
			return nil, err
		}
		nl, err := elements("grid", pl.grid)
		if err != nil {
			return nil, err
		}
		// The index, the locations and one fixed-point accumulator per
		// sample and goroutine.
		need = n*80 + float64(nl)*24 + float64(env.threads())*n*16
	} else {
		need += n * 8 * float64(p.Cell.Offsets)
	}
	if err := env.admit(req, "source", need, n*8); err != nil {
		return nil, err
	}
	return pl, nil
}

// declusData is a 422 naming the member a declustering's data fails on.
func declusData(field string, v *Version, err error) error {
	return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
		Detail: fmt.Sprintf("%s: the samples of %s cannot be declustered: %v", field, v.Path, err),
		Extra:  map[string]any{"field": field, "object": v.Path}, Err: err}
}

func (pl *declusteringPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	progress(2, "reading the samples")
	var coords, values []float64
	var err error
	if pl.attr != nil {
		if coords, err = pl.source.Object.ListLocations(ctx, pl.source.Blobs, pl.attr.List); err != nil {
			return nil, dataOf("source", pl.source, err)
		}
		if values, err = readColumn(ctx, pl.source, pl.attr); err != nil {
			return nil, dataOf("source", pl.source, err)
		}
	} else if coords, err = pl.source.Object.Locations(ctx, pl.source.Blobs); err != nil {
		return nil, dataOf("source", pl.source, err)
	}
	var weights []float64
	var what string
	if p.Cell != nil {
		if values != nil && !slices.ContainsFunc(values, func(v float64) bool { return !math.IsNaN(v) }) {
			return nil, declusData("source.attribute", pl.source, fmt.Errorf("attribute %q has no value", pl.attr.Name))
		}
		progress(10, "declustering by cells")
		res, err := declus.Cell(ctx, coords, values, *p.Cell, scaleProgress(progress, 10, 85, "declustering by cells"))
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, declusData("method.cell_size", pl.source, err)
		}
		weights = res.Weights
		if res.Size == 0 {
			what = "cell declustering: no cell size improved on the equal-weight mean, the weights are equal"
		} else {
			what = fmt.Sprintf("cell declustering with cells of %g", res.Size)
		}
	} else {
		progress(5, "reading the evaluation locations")
		locs, err := pl.grid.Object.Locations(ctx, pl.grid.Blobs)
		if err != nil {
			return nil, dataOf("grid", pl.grid, err)
		}
		ix, err := neighbor.NewIndexContext(ctx, coords, values, nil, p.Neighborhood.Params())
		if err != nil {
			return nil, fmt.Errorf("neighborhood: %w", err)
		}
		if ix.Indexed() == 0 { // only with an attribute: the source has samples
			return nil, declusData("source.attribute", pl.source, fmt.Errorf("attribute %q has no value", pl.attr.Name))
		}
		prog := scaleProgress(progress, 10, 85, "declustering")
		var res *declus.Result
		if p.Power == 0 {
			what = "KNN declustering"
			res, err = declus.KNN(ctx, ix, locs, prog)
		} else {
			what = fmt.Sprintf("IDW declustering (power %g)", p.Power)
			res, err = declus.IDW(ctx, ix, locs, p.Power, prog)
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil, err
			}
			return nil, declusData("neighborhood", pl.grid, err)
		}
		weights = res.Weights
		what += fmt.Sprintf(" over %d evaluation locations; %d samples reached by none have weight 0", res.Locations, res.Unreached)
	}
	progress(88, "writing the weights")
	w, err := writeSingle(ctx, pl.env, pl.target, p.Target, pl.req.User, weights, nil)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"message": fmt.Sprintf("Declustering completed successfully: %d weights summing to 1, %s.", len(weights), what),
		"target":  pl.env.targetAttributeResult(w),
	}, nil
}
