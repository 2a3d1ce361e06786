package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/geostat/report"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
)

// Defaults of consim.
const (
	// DefaultSimulationsToSave is number_of_simulations_to_save's default.
	DefaultSimulationsToSave = 5
	// MaxReportDetails bounds report_context.details.
	MaxReportDetails = 10
)

// DefaultConsimQuantiles returns the quantile levels consim computes when
// location_wise_quantiles is absent (P10, P50, P90); a list given replaces
// them (an empty list: none).
func DefaultConsimQuantiles() []float64 { return []float64{0.1, 0.5, 0.9} }

// The names of the ensembles consim saves on its target.
var consimEnsembles = []string{"simulations", "simulations_normal_score", "point_simulations", "point_simulations_normal_score"}

// consimRules declares the members of a consim request.
func consimRules(filter, nb *object, disc, seed, method *rule) []*rule {
	tail := func(bound, doc string) *object {
		p := number("power", "The denominator of the power model's exponent, in (0, 1]").positive()
		p.max, p.hasMax = 1, true
		return &object{fields: []*rule{p.req(), number(bound, doc).req()}}
	}
	attr := &object{tag: "operation", fields: []*rule{str("operation", "create a new attribute, or update an existing category attribute").req()},
		variants: []variant{
			{when: []string{"create"}, obj: &object{fields: []*rule{str("name", "The new attribute's name").req()}}},
			{when: []string{"update"}, obj: &object{fields: []*rule{str("reference", "The expression of the category attribute to update").req()}}},
		}}
	category := &object{fields: []*rule{
		number("cutoff_grade", "The grade above which a block is this material").atLeast(0).req(),
		number("metal_price", "The price per unit of metal").atLeast(0).req(),
		str("label", "The category's label in the lookup table").req(),
	}}
	categories := array("material_categories", member("", category, "").req(),
		"The material categories, from the lowest cutoff to the highest (sorted, distinct labels)").req()
	categories.minItems = 1
	loss := &object{ref: "ConsimLossCalculation", doc: "Classification of the blocks by expected loss (docs/ensemble.md)", fields: []*rule{
		categories,
		number("processing_cost", "Cost of processing a unit of material").atLeast(0).req(),
		number("mining_waste_cost", "Cost of mining a unit as waste").atLeast(0).req(),
		number("mining_ore_cost", "Cost of mining a unit as ore").atLeast(0).req(),
		number("metal_recovery_fraction", "Recovered fraction of the metal").between(0, 1).req(),
		member("target_attribute", attr, "The category attribute written on target_object").req(),
	}}
	details := array("details", member("", &object{fields: []*rule{str("label", "The row's label"), str("value", "The row's value")}}, "").req(),
		"Label and value rows shown under the title (1 to 10)").req()
	details.minItems, details.maxItems = 1, MaxReportDetails
	list := func(name, doc string) *rule { return array(name, number("", "").req(), doc) }
	levels := array("location_wise_quantiles", number("", "").between(0, 1).req(),
		"Quantile levels in [0, 1], distinct (absent: 0.1, 0.5, 0.9; an empty list: none)")
	return []*rule{
		objectRef("source_object", "The conditioning samples' object URL (a point set or downhole intervals)"),
		str("source_attribute", "The attribute expression of the conditioning values").req(),
		objectRef("target_object", "The grid receiving the results"),
		member("filter", filter, "Cells of the target simulated (the others get no value)"),
		member("source_filter", filter, "Samples used (break ties, distribution and conditioning)"),
		member("neighborhood", nb, "The conditioning neighbourhood (also the local means of tie breaking)").req(),
		objectRef("variogram_model", "The variogram of the normal scores"),
		disc,
		member("distribution", &object{ref: "ConsimDistribution", doc: "How the distribution of the data is built", fields: []*rule{
			str("weights", "Expression of declustering weights on source_object (one per sample)"),
			member("tail_extrapolation", &object{fields: []*rule{
				member("upper", tail("max", "The upper bound, above the largest value"), "Upper power-model tail").req(),
				member("lower", tail("min", "The lower bound, below the smallest value"), "Lower power-model tail"),
			}}, "Power-model tails (none: no extrapolation)"),
		}}, "How the distribution of the data is built (default: equal weights, no tails)"),
		method,
		integer("number_of_lines", DefaultLines, 1, MaxLines, "Turning-bands lines"),
		integer("number_of_simulations", 1, 1, MaxRealisations, "Number of realisations"),
		seed,
		integer("number_of_simulations_to_save", DefaultSimulationsToSave, 0, MaxRealisations,
			"Realisations (the first ones) saved on the target; more than number_of_simulations saves them all"),
		member("loss_calculation", loss, "Optional classification of the blocks by expected loss"),
		levels,
		list("probability_above_cutoff", "Cutoffs c of P(X > c), distinct"),
		list("mean_above_cutoff", "Cutoffs c of E[X | X > c], distinct"),
		boolean("perform_validation", false, "Also write a validation report and give its dashboard link"),
		member("report_context", &object{fields: []*rule{
			str("title", "The report's title").req(),
			details,
		}}, "What the report shows about its context"),
		meanThresholdsRule(),
	}
}

// ConsimParams are the parameters of the consim workflow.
type ConsimParams struct {
	// Sim is the simulation (Target.Name is the saved block ensemble's).
	Sim SimulationParams
	// Weights is the expression of the declustering weights ("" none).
	Weights string
	// Lower and Upper are the distribution's tails (zero: none).
	Lower, Upper geostat.Tail
	// Save is the number of realisations saved, at most Sim.Realisations.
	Save int
	// Ops are the location-wise statistics (Summary always).
	Ops ensemble.Operations
	// Loss, when set, is the loss classification and LossTarget its
	// category attribute.
	Loss       *ensemble.Economics
	LossTarget Target
	// Validate asks for the validation report.
	Validate                     bool
	Title                        string
	Details                      [][2]string
	AcceptableMean, MarginalMean float64
}

// DecodeConsim decodes and checks a consim request, repeating the client's
// checks: the ranges of the counts, nx/ny/nz, tail powers in (0, 1], the
// kriging method, 1 to 10 report details, non-negative thresholds, costs and
// prices, recovery in [0, 1].
func DecodeConsim(raw []byte) (*ConsimParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "consim"), &p)
	out := &ConsimParams{}
	sp := &out.Sim
	sp.Source = Source{Object: f.objectURL("source_object"), Attribute: f.str("source_attribute"), Filter: f.filter("source_filter")}
	sp.Target = Target{Object: f.objectURL("target_object"), Name: consimEnsembles[0], Filter: f.filter("filter")}
	sp.Variogram = f.objectURL("variogram_model")
	sp.Neighborhood = f.neighbourhood(CurrentShape, "neighborhood")
	sp.Discretisation = f.discretisation("block_discretization")
	sp.Lines = int(f.integer("number_of_lines"))
	sp.Realisations = int(f.integer("number_of_simulations"))
	sp.Seed = f.seed()
	sp.Ordinary, _ = f.krigingMethod("kriging_method")
	sp.Normalise = true
	out.Save = min(int(f.integer("number_of_simulations_to_save")), sp.Realisations)

	d := f.sub("distribution")
	out.Weights = d.str("weights")
	if d.has("tail_extrapolation") {
		te := d.sub("tail_extrapolation")
		if te.need("upper") {
			out.Upper = te.sub("upper").powerTail("max", geostat.UpperPowerTail)
		}
		if te.has("lower") {
			out.Lower = te.sub("lower").powerTail("min", geostat.LowerPowerTail)
		}
	}

	out.Ops = ensemble.Operations{Summary: true, Quantiles: DefaultConsimQuantiles()}
	if q, ok := f.numbers("location_wise_quantiles"); ok {
		out.Ops.Quantiles = q
	}
	out.Ops.ProbabilityAbove, _ = f.numbers("probability_above_cutoff")
	out.Ops.MeanAbove, _ = f.numbers("mean_above_cutoff")
	if p.err() == nil {
		if err := out.Ops.Validate(); err != nil {
			// The library names location-wise's members; consim's lists
			// are location_wise_quantiles and plain cutoff lists.
			rename := strings.NewReplacer("quantiles", "location_wise_quantiles", ".cutoffs", "")
			name, reason := "location_wise_quantiles", err.Error()
			if fe, ok := err.(*ensemble.FieldError); ok {
				name, reason = rename.Replace(fe.Name), rename.Replace(fe.Reason)
			}
			p.add(f.name(name), "%s", reason)
		}
	}

	if f.has("loss_calculation") {
		l := f.sub("loss_calculation")
		e := &ensemble.Economics{}
		var cats []json.RawMessage
		if l.unmarshal("material_categories", &cats) {
			for i, raw := range cats {
				c := newFields(raw, fmt.Sprintf("%s[%d]", l.name("material_categories"), i), &p, l.rule("material_categories").items.obj)
				var cat ensemble.Category
				cat.CutoffGrade, _ = c.number("cutoff_grade")
				cat.MetalPrice, _ = c.number("metal_price")
				cat.Label = c.str("label")
				e.Categories = append(e.Categories, cat)
			}
		}
		if l.need("material_categories") && len(cats) == 0 {
			p.add(l.name("material_categories"), "at least one category is required")
		}
		e.ProcessingCost, _ = l.number("processing_cost")
		e.MiningWasteCost, _ = l.number("mining_waste_cost")
		e.MiningOreCost, _ = l.number("mining_ore_cost")
		e.MetalRecoveryFraction, _ = l.number("metal_recovery_fraction")
		if l.need("target_attribute") {
			a := l.sub("target_attribute")
			switch op := a.str("operation"); op {
			case "create":
				out.LossTarget.Name = a.str("name")
			case "update":
				out.LossTarget.Update = a.str("reference")
			case "":
			default:
				p.add(a.name("operation"), "must be \"create\" or \"update\" (got %q)", op)
			}
		}
		if p.err() == nil {
			if err := e.Validate(); err != nil {
				name, reason := "", err.Error()
				if fe, ok := err.(*ensemble.FieldError); ok {
					name, reason = fe.Name, fe.Reason
				}
				p.add(l.name(name), "%s", reason)
			}
		}
		out.Loss = e
	}

	out.Validate = f.boolean("perform_validation")
	if f.has("report_context") {
		c := f.sub("report_context")
		out.Title = c.str("title")
		var details []*struct {
			Label string `json:"label"`
			Value string `json:"value"`
		}
		if c.need("details") && c.unmarshal("details", &details) {
			if len(details) < 1 || len(details) > MaxReportDetails {
				p.add(c.name("details"), "must have 1 to %d rows (got %d)", MaxReportDetails, len(details))
			}
			for i, d := range details {
				if d == nil {
					p.add(fmt.Sprintf("%s[%d]", c.name("details"), i), "must be a {label, value} object")
					continue
				}
				out.Details = append(out.Details, [2]string{d.Label, d.Value})
			}
		}
	}
	out.AcceptableMean, out.MarginalMean = f.meanThresholds("report_mean_thresholds")
	sp.SaveGaussian = out.Save > 0 || out.Validate
	return out, p.err()
}

// powerTail decodes a power-model tail {"power", bound} with build (the
// upper or lower tail's constructor); its error is reported on power. The
// zero Tail when a member is missing.
func (f *fields) powerTail(bound string, build func(bound, power float64) (geostat.Tail, error)) geostat.Tail {
	pw, ok1 := f.number("power")
	m, ok2 := f.number(bound)
	if !ok1 || !ok2 {
		return geostat.Tail{}
	}
	t, err := build(m, pw)
	if err != nil {
		f.p.add(f.name("power"), "%v", err)
	}
	return t
}

type consimPlan struct {
	env     *Env
	req     Request
	p       *ConsimParams
	sim     *simulation
	weights *objects.Attribute
}

// consimField maps the simulation's field names onto consim's members.
func consimField(f string) string {
	switch f {
	case "source":
		return "source_object"
	case "target":
		return "target_object"
	case "realizations":
		return "number_of_simulations"
	}
	return f
}

// PrepareConsim validates a consim request: fields, references, kinds,
// attributes, and the job's memory and output disk.
func PrepareConsim(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeConsim(req.Body)
	if err != nil {
		return nil, err
	}
	if p.Validate && env.Files == nil {
		return nil, &StatusError{Status: 501, Type: problem.ComputeNotImplemented, Title: "Not Implemented.",
			Detail: "perform_validation: this worker has no file area to store reports in"}
	}
	pl := &consimPlan{env: env, req: req, p: p}
	if pl.sim, err = prepareSimulation(ctx, env, req, &p.Sim, consimField); err != nil {
		return nil, err
	}
	if p.Weights != "" {
		if pl.weights, err = continuousAttribute("distribution.weights", pl.sim.source, p.Weights); err != nil {
			return nil, err
		}
		if pl.weights.List != pl.sim.sourceAttr.List {
			return nil, invalid("distribution.weights", "the weights must be an attribute of the same list as source_attribute")
		}
	}
	if p.Loss != nil && p.LossTarget.Update != "" {
		a, err := pl.sim.target.Object.ResolveAttribute(p.LossTarget.Update)
		if err != nil {
			return nil, invalid("loss_calculation.target_attribute.reference", "attribute not found: %v", err)
		}
		if a.Type != objects.AttributeCategory {
			return nil, invalid("loss_calculation.target_attribute.reference", "attribute %q is a %s attribute, not a category attribute", a.Name, a.Type)
		}
	}
	// Memory: the simulation's (prepareSimulation); the statistics and the
	// categories, streamed into their blobs (consimOutputs): a row group
	// being filled per output and the reducers of one tile; and for the
	// report the four ensembles kept whole. Disk: the saved ensembles, one
	// float64 column per statistic, the categories and the report.
	cells, r := float64(pl.sim.cells()), float64(p.Sim.Realisations)
	outputs := float64(4 + len(p.Ops.Quantiles) + len(p.Ops.ProbabilityAbove) + len(p.Ops.MeanAbove))
	need := (outputs+1)*min(cells, float64(objects.DefaultRowGroupRows))*8*2 + (outputs+1)*float64(pl.sim.tileCells())*8
	disk := 4*cells*float64(p.Save)*8 + cells*outputs*8 + cells*4
	if p.Validate {
		need += 4 * cells * r * 8
		disk += reportDiskBytes
	}
	if err := env.admit(req, "number_of_simulations", need+pl.sim.memory, disk); err != nil {
		return nil, err
	}
	return pl, nil
}

// consimData is the data consim simulates from, after its first steps.
type consimData struct {
	coords, values, weights []float64
	distribution            *geostat.Distribution
}

// transform breaks the ties of the conditioning values (the break-ties task
// with consim's neighbourhood and random_seed) and builds their
// distribution (the continuous-distribution table, weighted when weights
// are given, with the tails asked for).
func (pl *consimPlan) transform(ctx context.Context, progress func(int, string), data *consimData) func(context.Context, []float64, []float64) ([]float64, *geostat.Distribution, error) {
	return func(ctx context.Context, coords, values []float64) ([]float64, *geostat.Distribution, error) {
		p := pl.p
		progress(6, "breaking ties")
		tied, err := breakTies(ctx, values, coords, p.Sim.Neighborhood, p.Sim.Seed, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("breaking ties: %w", err)
		}
		var w []float64
		if pl.weights != nil {
			if w, err = readColumn(ctx, pl.sim.source, pl.weights); err != nil {
				return nil, nil, dataOf("distribution.weights", pl.sim.source, err)
			}
		}
		progress(7, "building the distribution")
		dist, err := geostat.BuildDistribution(tied, w, p.Lower, p.Upper)
		if err != nil {
			return nil, nil, &problem.Error{Status: 422, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
				Detail: fmt.Sprintf("distribution: the data of %s give no distribution: %v", pl.sim.source.Path, err),
				Extra:  map[string]any{"field": "distribution", "object": pl.sim.source.Path}}
		}
		*data = consimData{coords: coords, values: tied, weights: w, distribution: dist}
		return tied, dist, nil
	}
}

func (pl *consimPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p, sim := pl.p, pl.sim
	cells, reals := sim.cells(), p.Sim.Realisations
	ref := ObjectRef{Org: p.Sim.Target.Object.Org, Workspace: p.Sim.Target.Object.Workspace, ObjectID: sim.target.ObjectID}
	// The statistics and categories are computed tile by tile and streamed
	// into their blobs (consimOutputs).
	outs, err := newConsimOutputs(ctx, pl.env, ref.Org, ref.Workspace, p.Ops, p.Loss, cells, reals)
	if err != nil {
		return nil, err
	}
	defer outs.abort()
	var data consimData
	sim.transform = pl.transform(ctx, progress, &data)
	sim.names, sim.save = []string{}, p.Save
	if p.Save > 0 {
		sim.names = consimEnsembles
	}
	sim.onTile = func(t tbsim.Tile) error { return outs.tile(ctx, t) }
	hi := 88
	if p.Validate {
		hi = 70
	}
	so, err := sim.run(ctx, pl.env, progress, 5, hi, p.Validate)
	if err != nil {
		return nil, err
	}

	// Everything is written into one new version of the target. The
	// report is computed before it (a failure to compute it leaves the
	// target untouched) and stored after it: a report is a file that
	// describes the committed simulation, so it must never be visible
	// before that simulation is (a worker that dies between the two writes
	// leaves the simulation without its report, never a report of a
	// simulation that does not exist).
	out := map[string]any{"links": map[string]any{}}
	var rendered *renderedReport
	var reportFile string
	if p.Validate {
		in := &report.Input{
			Context:   report.Context{Title: p.Title},
			Data:      report.Data{Coords: data.coords, Values: data.values, Weights: data.weights},
			Reference: data.distribution, Variogram: so.result.Variogram,
			Grid: sim.grid, Masked: sim.masked, Discretisation: p.Sim.Discretisation,
			BlockSimulations: so.kept[0], BlockSimulationsNormalScore: so.kept[1],
			PointSimulations: so.kept[2], PointSimulationsNormalScore: so.kept[3],
			Thresholds: report.Thresholds{Acceptable: p.AcceptableMean, Marginal: p.MarginalMean},
		}
		if sim.masked != nil {
			in.Grid = nil
		}
		if in.Context.Title == "" {
			in.Context.Title = "Conditional simulation validation: " + sim.target.Object.Name
		}
		for _, d := range p.Details {
			in.Context.Details = append(in.Context.Details, report.Detail{Label: d[0], Value: d[1]})
		}
		if len(p.Details) == 0 {
			in.Context.Details = simulationDetails(&p.Sim)
		}
		reportFile = path.Join("reports", safeName(sim.target.Object.Name)+"-consim-validation.html")
		if rendered, err = renderReport(ctx, progress, in); err != nil {
			return nil, err
		}
	}

	progress(96, "writing the results")
	stats := outs.outs
	sw, keys, err := outs.finish(ctx)
	if err != nil {
		return nil, err
	}
	writes := append(so.writes, sw...)
	if p.Loss != nil {
		cw, err := categoryWrite(ctx, pl.env, ref.Org, ref.Workspace, attributeTarget(p.LossTarget), keys, cells, p.Loss.LookupTable())
		if err != nil {
			return nil, err
		}
		writes = append(writes, cw)
	}
	w, err := commit(ctx, pl.env, sim.target, ref, pl.req.User, writes)
	if err != nil {
		return nil, err
	}
	if rendered != nil {
		progress(98, "storing the report")
		rp := &reportPlan{env: pl.env, req: pl.req}
		fileURL, links, err := rp.storeReport(ctx, rendered, ref.Org, ref.Workspace, reportFile)
		if err != nil {
			return nil, err
		}
		out["validation_summary"] = map[string]any{"reference_mean": rendered.rep.Summary.ReferenceMean, "mean": rendered.rep.Summary.Mean}
		out["validation_report"] = map[string]any{"reference": fileURL, "name": path.Base(reportFile)}
		out["links"] = links
	}
	list := w.Object.AttributeLists()[0]
	attr := func(name string) map[string]any {
		return map[string]any{"reference": nameExpression(&objects.Attribute{List: list, Name: name}), "name": name}
	}
	t := pl.env.targetResult(w)
	summary := map[string]any{}
	var quantiles, probs, means []any
	for _, o := range stats {
		a := attr(o.Name)
		switch {
		case strings.HasPrefix(o.Name, "Quantile: "):
			a["quantile"] = o.Level
			quantiles = append(quantiles, a)
		case strings.HasPrefix(o.Name, "Prob>"):
			a["cutoff"] = o.Level
			probs = append(probs, a)
		case strings.HasPrefix(o.Name, "Mean>"):
			a["cutoff"] = o.Level
			means = append(means, a)
		default:
			summary[o.Name] = a
		}
	}
	t["summary_attributes"] = summary
	if quantiles != nil {
		t["quantile_attributes"] = quantiles
	}
	if probs != nil {
		t["probability_above_cutoff_attributes"] = probs
	}
	if means != nil {
		t["mean_above_cutoff_attributes"] = means
	}
	if p.Save > 0 {
		for _, n := range consimEnsembles {
			t[n] = attr(n)
		}
	}
	if p.Loss != nil {
		name := p.LossTarget.Name
		if p.LossTarget.Update != "" {
			a, err := w.Object.ResolveAttribute(p.LossTarget.Update)
			if err != nil {
				return nil, err
			}
			name = a.Name
		}
		t["loss_calculation_attribute"] = attr(name)
	}
	out["target"] = t
	if len(so.result.Warnings) > 0 {
		out["warnings"] = so.result.Warnings
	}
	return out, nil
}
