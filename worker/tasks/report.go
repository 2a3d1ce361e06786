package tasks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/report"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// ReportFiles stores validation reports in the workspace file area.
type ReportFiles interface {
	// PutFile stores content at path in a workspace (a new version when
	// the file exists) and returns the file id and version id.
	PutFile(ctx context.Context, org, ws, path string, content io.Reader, contentType string, by store.User) (id, version string, err error)
	// FileURL is the URL of a stored file version, under the worker's
	// public base URL.
	FileURL(base, org, ws, id, version string) string
	// DashboardURL is the worker route that serves the latest version of a
	// report as a page (it needs the Authorization header).
	DashboardURL(base, org, ws, id string) string
	// ViewURL is a short-lived signed URL that shows one version of a
	// report in a browser, without a token.
	ViewURL(base, org, ws, id, version string) (string, error)
	// CheckPath reports whether a file path is valid.
	CheckPath(path string) error
}

type reportPlan struct {
	env *Env
	req Request
	p   *ReportParams
	// Seed shape: the simulation to run first.
	sim *simulation
	// Current shape: the stored ensembles and their context.
	source, target *Version
	sourceAttr     *objects.Attribute
	ensembles      [4]*objects.Attribute
	weights        *objects.Attribute
	variogram      *geostat.Variogram
	grid           *grid.Grid
	masked         *grid.Masked
}

// ensembleFields are the request fields of the four ensembles, in the order
// block, block normal score, point, point normal score.
var ensembleFields = [4]string{"block_simulations", "block_simulations_normal_score", "point_simulations", "point_simulations_normal_score"}

// PrepareReport validates a simulation-report request. In the seed's shape
// it runs a simulation and reports on it; in the current shape it validates
// the four ensembles already stored on simulation_target.
func PrepareReport(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeReport(req.Shape, req.Body)
	if err != nil {
		return nil, err
	}
	if env.Files == nil {
		return nil, &StatusError{Status: 501, Type: problem.ComputeNotImplemented, Title: "Not Implemented.",
			Detail: "this worker has no file area to store reports in"}
	}
	pl := &reportPlan{env: env, req: req, p: p}
	if req.Shape == SeedShape {
		if err := checkReportPath(env.Files, "target", p.File); err != nil {
			return nil, err
		}
		prefix := func(f string) string { return "simulation_parameters." + f }
		if pl.sim, err = prepareSimulation(ctx, env, req, p.Simulation, prefix); err != nil {
			return nil, err
		}
		ref := p.Simulation.Target.Object
		if err := req.Access(ref.Org, ref.Workspace, true); err != nil {
			return nil, err
		}
		return pl, nil
	}
	if pl.source, err = loadObject(ctx, env, req.Access, req.Org, "simulation_source", p.SimulationSource, false); err != nil {
		return nil, err
	}
	if err := requireKind("simulation_source", pl.source, pointKinds...); err != nil {
		return nil, err
	}
	if pl.sourceAttr, err = continuousAttribute("source_attribute", pl.source, p.SourceAttribute); err != nil {
		return nil, err
	}
	if p.Weights != "" {
		if pl.weights, err = continuousAttribute("distribution.weights", pl.source, p.Weights); err != nil {
			return nil, err
		}
	}
	if pl.variogram, err = loadVariogram(ctx, env, req, "variogram_model", p.Variogram); err != nil {
		return nil, err
	}
	// The report writes into the target's workspace: editor needed there.
	if pl.target, err = loadObject(ctx, env, req.Access, req.Org, "simulation_target", p.SimulationTarget, true); err != nil {
		return nil, err
	}
	if err := requireKind("simulation_target", pl.target, gridKinds...); err != nil {
		return nil, err
	}
	exprs := [4]string{p.BlockSims, p.BlockSimsNormalScore, p.PointSims, p.PointSimsNormalScore}
	for i, e := range exprs {
		a, err := pl.target.Object.ResolveAttribute(e)
		if err != nil {
			return nil, invalid(ensembleFields[i], "attribute not found: %v", err)
		}
		if a.Type != objects.AttributeEnsembleContinuous && a.Type != objects.AttributeScalar {
			return nil, invalid(ensembleFields[i], "attribute %q is a %s attribute, not a continuous ensemble", a.Name, a.Type)
		}
		if a.Width() != p.NumberOfSimulations {
			return nil, invalid(ensembleFields[i], "attribute %q has %d realisations, number_of_simulations is %d", a.Name, a.Width(), p.NumberOfSimulations)
		}
		pl.ensembles[i] = a
	}
	g := pl.target.Object.Grid
	if pl.grid, err = g.Geometry(); err != nil {
		return nil, invalid("simulation_target", "%v", err)
	}
	if g.Masked {
		if pl.masked, err = g.MaskedGeometry(ctx, pl.target.Blobs); err != nil {
			return nil, invalid("simulation_target", "%v", err)
		}
	}
	cells, _ := pl.target.Object.ExpectedLength(pl.target.Object.AttributeLists()[0])
	// Disk: the report page and its JSON, bounded by reportDiskBytes.
	if err := env.admit(req, "number_of_simulations", float64(cells)*float64(p.NumberOfSimulations)*8*5, reportDiskBytes); err != nil {
		return nil, err
	}
	return pl, nil
}

// reportDiskBytes bounds the size of a validation report (page and JSON):
// its figures are summaries, not per-cell data.
const reportDiskBytes = 4 << 20

// checkReportPath checks a report file path of the seed's shape.
func checkReportPath(files ReportFiles, field, p string) error {
	if err := files.CheckPath(p); err != nil {
		return invalid(field, "%v", err)
	}
	if !strings.HasSuffix(strings.ToLower(p), ".html") {
		return invalid(field, "the report is an HTML page: the path must end in .html (got %q)", p)
	}
	return nil
}

func (pl *reportPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	if pl.sim != nil {
		return pl.runSeed(ctx, progress)
	}
	return pl.runCurrent(ctx, progress)
}

// runSeed simulates, writes the ensemble as the simulation task does, then
// the report to the target file.
func (pl *reportPlan) runSeed(ctx context.Context, progress func(int, string)) (any, error) {
	sp := pl.p.Simulation
	so, err := pl.sim.run(ctx, pl.env, progress, 0, 70, true)
	if err != nil {
		return nil, err
	}
	in := &report.Input{
		Context:   report.Context{Title: "Conditional simulation validation: " + pl.sim.target.Object.Name},
		Data:      report.Data{Coords: so.coords, Values: so.values},
		Reference: pl.sim.distribution, Variogram: so.result.Variogram,
		Grid: pl.sim.grid, Masked: pl.sim.masked, Discretisation: sp.Discretisation,
		BlockSimulations: so.kept[0], BlockSimulationsNormalScore: so.kept[1],
		PointSimulations: so.kept[2], PointSimulationsNormalScore: so.kept[3],
		Thresholds:     report.Thresholds{Acceptable: pl.p.AcceptableMean, Marginal: pl.p.MarginalMean},
		SkipVariograms: !pl.p.VariogramReproduction,
	}
	if pl.sim.masked != nil {
		in.Grid = nil
	}
	in.Context.Details = simulationDetails(sp)
	ref := ObjectRef{Org: sp.Target.Object.Org, Workspace: sp.Target.Object.Workspace, ObjectID: pl.sim.target.ObjectID}
	w, err := commit(ctx, pl.env, pl.sim.target, ref, pl.req.User, so.writes)
	if err != nil {
		return nil, err
	}
	rep, fileURL, links, err := pl.writeReport(ctx, progress, in, ref.Org, ref.Workspace, pl.p.File)
	if err != nil {
		return nil, err
	}
	out := pl.env.seedResult(w, "Simulation report completed successfully.")
	out["validation_summary"] = map[string]any{"reference_mean": rep.Summary.ReferenceMean, "mean": rep.Summary.Mean, "verdict": rep.Summary.Verdict}
	out["validation_report"] = map[string]any{"reference": fileURL}
	out["links"] = links
	return out, nil
}

// simulationDetails lists a simulation's parameters for the report header.
func simulationDetails(sp *SimulationParams) []report.Detail {
	method := "simple"
	if sp.Ordinary {
		method = "ordinary"
	}
	d := sp.Discretisation
	return []report.Detail{
		{Label: "Realisations", Value: fmt.Sprint(sp.Realisations)},
		{Label: "Lines", Value: fmt.Sprint(sp.Lines)},
		{Label: "Kriging", Value: method},
		{Label: "Block discretisation", Value: fmt.Sprintf("%d × %d × %d", d.NX, d.NY, d.NZ)},
		{Label: "Random seed", Value: fmt.Sprint(sp.Seed)},
	}
}

// runCurrent reads the stored ensembles and validates them.
func (pl *reportPlan) runCurrent(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	progress(2, "reading the data")
	coords, values, err := sourceData(ctx, pl.source, pl.sourceAttr, nil, "simulation_source")
	if err != nil {
		return nil, err
	}
	var weights []float64
	if pl.weights != nil {
		if weights, err = readColumn(ctx, pl.source, pl.weights); err != nil {
			return nil, dataOf("distribution.weights", pl.source, err)
		}
	}
	// The reference distribution is the data's own (declustered when
	// weights are given), without tail extrapolation. A value of weight 0
	// (a sample the declustering task's evaluation locations did not reach)
	// carries no probability mass and is left out of it, as in
	// continuous-distribution.
	tableValues := values
	if weights != nil {
		tableValues = append([]float64(nil), values...)
		for i, w := range weights {
			if w == 0 && i < len(tableValues) {
				tableValues[i] = math.NaN()
			}
		}
	}
	z, pr, err := geostat.ScoreTable(tableValues, weights)
	if err != nil {
		return nil, invalid("source_attribute", "%v", err)
	}
	ref, err := geostat.NewDistribution(z, pr, geostat.Tail{}, geostat.Tail{})
	if err != nil {
		return nil, invalid("source_attribute", "%v", err)
	}
	progress(10, "reading the ensembles")
	var ens [4][]float64
	for i, a := range pl.ensembles {
		cols, err := pl.target.Object.ReadContinuous(ctx, pl.target.Blobs, a)
		if err != nil {
			return nil, dataOf(ensembleFields[i], pl.target, err)
		}
		for _, c := range cols {
			ens[i] = append(ens[i], c...)
		}
	}
	title := p.Title
	if title == "" {
		title = "Simulation validation: " + pl.target.Object.Name
	}
	in := &report.Input{
		Context:   report.Context{Title: title},
		Data:      report.Data{Coords: coords, Values: values, Weights: weights},
		Reference: ref, Variogram: pl.variogram.Normalised(),
		Grid: pl.grid, Masked: pl.masked, Discretisation: p.Discretisation,
		BlockSimulations: ens[0], BlockSimulationsNormalScore: ens[1], PointSimulations: ens[2], PointSimulationsNormalScore: ens[3],
		Thresholds: report.Thresholds{Acceptable: p.AcceptableMean, Marginal: p.MarginalMean},
	}
	if pl.masked != nil {
		in.Grid = nil
	}
	for _, d := range p.Details {
		in.Context.Details = append(in.Context.Details, report.Detail{Label: d[0], Value: d[1]})
	}
	tref := p.SimulationTarget
	file := path.Join("reports", safeName(pl.target.Object.Name)+"-validation.html")
	rep, fileURL, links, err := pl.writeReport(ctx, progress, in, tref.Org, tref.Workspace, file)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"validation_summary": map[string]any{"reference_mean": rep.Summary.ReferenceMean, "mean": rep.Summary.Mean, "verdict": rep.Summary.Verdict},
		"validation_report":  map[string]any{"reference": fileURL},
		"links":              links,
	}, nil
}

// safeName makes an object name usable as a file name.
func safeName(n string) string {
	n = strings.TrimSuffix(strings.TrimSpace(n), ".json")
	n = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, n)
	if n == "" {
		n = "simulation"
	}
	return n
}

// writeReport computes the report and stores its page (and its JSON next to
// it) in the file area. It returns the report, the API URL of the stored
// page and the result's links: "view", a short-lived signed URL that opens
// this version of the page in a browser without a token, and "dashboard",
// the worker route that shows the latest version to a caller with a token.
func (pl *reportPlan) writeReport(ctx context.Context, progress func(int, string), in *report.Input, org, ws, file string) (*report.Report, string, map[string]any, error) {
	r, err := renderReport(ctx, progress, in)
	if err != nil {
		return nil, "", nil, err
	}
	progress(95, "storing the report")
	fileURL, links, err := pl.storeReport(ctx, r, org, ws, file)
	if err != nil {
		return nil, "", nil, err
	}
	return r.rep, fileURL, links, nil
}

// renderedReport is a computed report and its page and JSON, not stored
// yet.
type renderedReport struct {
	rep       *report.Report
	page, doc []byte
}

// renderReport computes the report and renders its page and JSON (progress
// 75 to 92). Nothing is stored: a job that writes objects too stores the
// report after them (storeReport), so that no report is ever visible for
// results that were not committed.
func renderReport(ctx context.Context, progress func(int, string), in *report.Input) (*renderedReport, error) {
	progress(75, "computing the report")
	rep, err := report.Compute(ctx, in, scaleProgress(progress, 75, 92, "computing the report"))
	if err != nil {
		return nil, err
	}
	var page, doc bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		return nil, err
	}
	if err := rep.WriteJSON(&doc); err != nil {
		return nil, err
	}
	return &renderedReport{rep: rep, page: page.Bytes(), doc: doc.Bytes()}, nil
}

// storeReport stores a rendered report's page at file (and its JSON next to
// it) in the file area, and returns the API URL of the stored page and the
// result's links (see writeReport).
func (pl *reportPlan) storeReport(ctx context.Context, r *renderedReport, org, ws, file string) (string, map[string]any, error) {
	id, ver, err := pl.env.Files.PutFile(ctx, org, ws, file, bytes.NewReader(r.page), "text/html; charset=utf-8", pl.req.User)
	if err != nil {
		return "", nil, fmt.Errorf("storing the report: %w", err)
	}
	jsonPath := strings.TrimSuffix(file, path.Ext(file)) + ".json"
	if _, _, err := pl.env.Files.PutFile(ctx, org, ws, jsonPath, bytes.NewReader(r.doc), "application/json", pl.req.User); err != nil {
		return "", nil, fmt.Errorf("storing the report data: %w", err)
	}
	view, err := pl.env.Files.ViewURL(pl.env.PublicURL, org, ws, id, ver)
	if err != nil {
		return "", nil, err
	}
	links := map[string]any{"view": view, "dashboard": pl.env.Files.DashboardURL(pl.env.PublicURL, org, ws, id)}
	return pl.env.Files.FileURL(pl.env.PublicURL, org, ws, id, ver), links, nil
}
