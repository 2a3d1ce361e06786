package tasks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

// Shape says which request shape a task was submitted in.
type Shape int

const (
	// SeedShape is the seed's POST /compute/orgs/{org}/geostat/{task}:
	// legacy object references with element paths.
	SeedShape Shape = iota
	// CurrentShape is the current client's POST
	// /compute/orgs/{org}/geostatistics/{task} with {"parameters": {...}}.
	CurrentShape
)

// Defaults and limits of the task parameters.
const (
	DefaultSeed           = 38239342
	DefaultLines          = 500
	MaxLines              = 1000
	MaxRealisations       = 100
	MaxKNNSamples         = 10000 // a k-nearest mean over more neighbours is not a local estimate
	MaxKrigingSamples     = 512   // kriging systems are O(n³) per target
	DefaultEnsembleName   = "simulation-results"
	DefaultKrigingSamples = 32
)

// Neighborhood is a decoded search neighbourhood.
type Neighborhood struct {
	Ellipsoid  geostat.Ellipsoid
	MaxSamples int
	MinSamples int
}

// Params returns the neighbor search parameters.
func (n *Neighborhood) Params() neighbor.Params {
	return neighbor.Params{Ellipsoid: n.Ellipsoid, MaxSamples: n.MaxSamples, MinSamples: n.MinSamples}
}

// Source is an object and one of its attributes (an expression or element
// path), with an optional filter.
type Source struct {
	Object    ObjectRef
	Attribute string
	Filter    *Filter
}

// Target is an object and the attribute a task writes: created with the
// name Name (an attribute of that name is replaced, keeping its key), or the
// existing attribute that Update addresses.
type Target struct {
	Object ObjectRef
	Name   string
	Update string
	Filter *Filter
}

// KNNParams are the parameters of the knn task.
type KNNParams struct {
	Source       Source
	Target       Target
	Neighborhood Neighborhood
}

// BreakTiesParams are the parameters of the break-ties task. Neighborhood
// is nil in the seed's shape (ties are then ordered randomly).
type BreakTiesParams struct {
	Source       Source
	Target       Target
	Neighborhood *Neighborhood
	Seed         int64
}

// SimulationParams are the parameters of a conditional turning-bands
// simulation (conditional-tbsim, conditional-turning-bands, and the
// simulation of the seed's simulation-report).
type SimulationParams struct {
	Source                Source
	Target                Target // Name = ensemble name
	Distribution          ObjectRef
	Variogram             ObjectRef
	Neighborhood          *Neighborhood // nil = default from the variogram
	Discretisation        grid.BlockDiscretisation
	Lines                 int
	Seed                  int64
	Realisations          int
	VariogramReproduction bool
	Ordinary              bool
	Normalise             bool
	SaveGaussian          bool
}

// ReportParams are the parameters of the simulation-report task.
type ReportParams struct {
	// Seed shape: run Simulation, then write the report to File.
	Simulation *SimulationParams
	File       string
	// Current shape: validate the ensembles on SimulationTarget.
	SimulationSource                ObjectRef
	SourceAttribute                 string
	SimulationTarget                ObjectRef
	PointSims, PointSimsNormalScore string
	BlockSims, BlockSimsNormalScore string
	Variogram                       ObjectRef
	Neighborhood                    *Neighborhood
	Discretisation                  grid.BlockDiscretisation
	Weights                         string
	NumberOfSimulations             int
	Seed                            int64
	Ordinary                        bool
	Lines                           int
	Title                           string
	Details                         [][2]string
	AcceptableMean, MarginalMean    float64
	VariogramReproduction           bool
}

// KrigingParams are the parameters of the kriging task.
type KrigingParams struct {
	Source         Source
	Target         Target
	Variogram      ObjectRef
	Neighborhood   Neighborhood
	Ordinary       bool
	Mean           float64
	Discretisation grid.BlockDiscretisation
	Outputs        []string
}

// KrigingOutputs returns the optional diagnostics the kriging task can
// write, each as an attribute named <name>_<output>.
func KrigingOutputs() []string {
	return []string{"variance", "samples", "mean_distance", "slope", "efficiency"}
}

// body returns the parameters object: the body itself, or its "parameters"
// member when the body is {"parameters": {...}}.
func body(raw []byte, obj *object, p *problems) *fields {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		p.add("body", "must be a JSON object")
		return newFields(nil, "", p, obj)
	}
	if inner, ok := probe["parameters"]; ok && len(probe) == 1 {
		checkMembers(inner, obj, "parameters", p, 0)
		return newFields(inner, "parameters", p, obj)
	}
	checkMembers(raw, obj, "", p, 0)
	return newFields(raw, "", p, obj)
}

// seedNeighborhood decodes {"max-samples", "anisotropy": {...}}.
func (f *fields) seedNeighborhood(key string) *Neighborhood {
	if !f.has(key) {
		return nil
	}
	n := f.sub(key)
	out := &Neighborhood{MaxSamples: int(n.integer("max-samples"))}
	n.need("anisotropy")
	out.Ellipsoid = n.sub("anisotropy").ellipsoid()
	return out
}

// currentNeighborhood decodes {"ellipsoid", "max_samples", "min_samples"}.
func (f *fields) currentNeighborhood(key string) *Neighborhood {
	if !f.has(key) {
		return nil
	}
	n := f.sub(key)
	out := &Neighborhood{MaxSamples: int(n.integer("max_samples"))}
	out.MinSamples = int(n.integer("min_samples"))
	if out.MinSamples > out.MaxSamples {
		f.p.add(n.name("min_samples"), "must not exceed max_samples (%d > %d)", out.MinSamples, out.MaxSamples)
	}
	n.need("ellipsoid")
	out.Ellipsoid = n.sub("ellipsoid").ellipsoid()
	return out
}

// neighbourhood decodes a neighbourhood of the shape, required or not as
// its rule says.
func (f *fields) neighbourhood(shape Shape, key string) *Neighborhood {
	var n *Neighborhood
	if shape == SeedShape {
		n = f.seedNeighborhood(key)
	} else {
		n = f.currentNeighborhood(key)
	}
	if n == nil && f.rule(key).required {
		f.p.add(f.name(key), "is required")
	}
	return n
}

// currentSource decodes {"object", "attribute", "filter"}; the filter is
// refused where its rule says so.
func (f *fields) currentSource(key string) Source {
	if !f.need(key) {
		return Source{}
	}
	s := f.sub(key)
	out := Source{Object: s.objectURL("object"), Attribute: s.str("attribute")}
	if s.rule("filter").kind == kNull {
		s.reject("filter")
	} else {
		out.Filter = s.filter("filter")
	}
	return out
}

// currentTarget decodes {"object", "attribute": {"operation", "name"|"reference"}, "filter"}.
// The filter is read where the target's rules have one.
func (f *fields) currentTarget(key string) Target {
	if !f.need(key) {
		return Target{}
	}
	s := f.sub(key)
	out := Target{Object: s.objectURL("object")}
	if r := s.obj.lookup("filter"); r != nil && r.kind == kNull {
		s.reject("filter")
	} else if r != nil {
		out.Filter = s.filter("filter")
	}
	if s.obj.lookup("region_filter") != nil && s.has("region_filter") {
		if rf := s.sub("region_filter").regionFilter(); rf != nil {
			if out.Filter == nil {
				out.Filter = rf
			} else {
				out.Filter = &Filter{Type: "all_of", Filters: []*Filter{out.Filter, rf}}
			}
		}
	}
	if !s.need("attribute") {
		return out
	}
	a := s.sub("attribute")
	switch op := a.str("operation"); op {
	case "create":
		out.Name = a.str("name")
	case "update":
		out.Update = a.str("reference")
	case "":
	default:
		f.p.add(a.name("operation"), "must be \"create\" or \"update\" (got %q)", op)
	}
	return out
}

// attributeNamePattern matches every element path from which
// attributeName reads a name (an unanchored search).
const attributeNamePattern = `@name=.|\[\?name=='[^']+'`

// attributeName returns the attribute name an element path or simple
// expression names, for targets of the seed's shape.
func attributeName(path string) string {
	if i := strings.LastIndex(path, "@name="); i >= 0 {
		return path[i+len("@name="):]
	}
	if i := strings.Index(path, "[?name=='"); i >= 0 {
		rest := path[i+len("[?name=='"):]
		if j := strings.Index(rest, "'"); j >= 0 {
			return rest[:j]
		}
	}
	return ""
}

// seedTarget decodes a legacy target whose element path names the attribute
// to write.
func (f *fields) seedTarget(key string) Target {
	ref, path := f.legacyRef(key)
	t := Target{Object: ref}
	if path != "" {
		if t.Name = attributeName(path); t.Name == "" {
			f.p.add(f.name(key)+".object_element[0].path", "must name the attribute as /…/@name=<name> (got %q)", path)
		}
	}
	return t
}

func (f *fields) seed() int64 {
	return f.integer("random_seed")
}

// krigingMethod decodes "simple"/"ordinary", or {"type": ..., "mean": ...};
// the default comes from the member's rule.
func (f *fields) krigingMethod(key string) (ordinary bool, mean float64) {
	defOrdinary := f.rule(key).def == "ordinary"
	r, ok := f.raw(key)
	if !ok {
		return defOrdinary, 0
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		m := f.sub(key)
		s = m.str("type")
		if v, ok := m.number("mean"); ok {
			mean = v
			if s == "ordinary" {
				f.p.add(m.name("mean"), "applies to simple kriging only")
			}
		}
		if s == "" {
			return defOrdinary, mean
		}
	}
	switch s {
	case "simple":
		return false, mean
	case "ordinary":
		return true, mean
	}
	f.p.add(f.name(key), "must be \"simple\" or \"ordinary\" (got %q)", s)
	return defOrdinary, mean
}

// DecodeKNN decodes and checks the fields of a knn request.
func DecodeKNN(shape Shape, raw []byte) (*KNNParams, error) {
	var p problems
	f := body(raw, params(shape, "knn"), &p)
	out := &KNNParams{}
	if shape == SeedShape {
		out.Source.Object, out.Source.Attribute = f.legacyRef("source")
		out.Target = f.seedTarget("target")
	} else {
		out.Source = f.currentSource("source")
		out.Target = f.currentTarget("target")
	}
	if n := f.neighbourhood(shape, "neighborhood"); n != nil {
		out.Neighborhood = *n
	}
	return out, p.err()
}

// DecodeBreakTies decodes and checks the fields of a break-ties request.
func DecodeBreakTies(shape Shape, raw []byte) (*BreakTiesParams, error) {
	var p problems
	f := body(raw, params(shape, "break-ties"), &p)
	out := &BreakTiesParams{}
	if shape == SeedShape {
		out.Source.Object, out.Source.Attribute = f.legacyRef("source")
		out.Target = f.seedTarget("target")
		out.Seed = f.seed()
	} else {
		out.Source = f.currentSource("source")
		out.Target = f.currentTarget("target")
		out.Neighborhood = f.neighbourhood(shape, "neighborhood")
		out.Seed = f.integer("seed")
		if f.has("random_seed") && !f.has("seed") {
			out.Seed = f.seed()
		}
	}
	return out, p.err()
}

// simulation decodes the turning-bands fields shared by the simulation tasks.
// realKey is "realizations" or "realisations".
func (f *fields) simulation(shape Shape, realKey string, out *SimulationParams) {
	if shape == SeedShape {
		out.Source.Object, out.Source.Attribute = f.legacyRef("source")
		out.Target = f.seedTarget("target")
		out.Distribution, _ = f.legacyRef("distribution")
		out.Variogram, _ = f.legacyRef("variogram_model")
	} else {
		out.Source = Source{Object: f.objectURL("source"), Attribute: f.str("source_attribute"), Filter: f.filter("source_filter")}
		out.Target = Target{Object: f.objectURL("target"), Name: DefaultEnsembleName, Filter: f.filter("filter")}
		out.Distribution = f.objectURL("distribution")
		out.Variogram = f.objectURL("variogram_model")
	}
	out.Neighborhood = f.neighbourhood(shape, "neighborhood")
	out.Discretisation = f.discretisation("block_discretization")
	out.Lines = int(f.integer("number_of_lines"))
	out.Seed = f.seed()
	out.Realisations = int(f.integer(realKey))
	out.VariogramReproduction = f.boolean("variogram_reproduction")
	out.Ordinary, _ = f.krigingMethod("kriging_method")
	out.Normalise = f.boolean("normalize_variogram_model")
	out.SaveGaussian = f.boolean("save_gaussian_results")
}

// DecodeSimulation decodes and checks a conditional turning-bands request.
func DecodeSimulation(shape Shape, raw []byte) (*SimulationParams, error) {
	var p problems
	task := "conditional-turning-bands"
	if shape == SeedShape {
		task = "conditional-tbsim"
	}
	f := body(raw, params(shape, task), &p)
	out := &SimulationParams{}
	f.simulation(shape, "realizations", out)
	return out, p.err()
}

// DecodeReport decodes and checks a simulation-report request.
func DecodeReport(shape Shape, raw []byte) (*ReportParams, error) {
	var p problems
	f := body(raw, params(shape, "simulation-report"), &p)
	out := &ReportParams{}
	if shape == SeedShape {
		if !f.has("simulation_parameters") {
			p.add("simulation_parameters", "is required")
		}
		sim := &SimulationParams{}
		f.sub("simulation_parameters").simulation(SeedShape, "realisations", sim)
		sim.VariogramReproduction = f.boolean("variogram_reproduction") || sim.VariogramReproduction
		out.Simulation = sim
		out.File = f.str("target")
		out.VariogramReproduction = sim.VariogramReproduction
		return out, p.err()
	}
	out.SimulationSource = f.objectURL("simulation_source")
	out.SourceAttribute = f.str("source_attribute")
	out.SimulationTarget = f.objectURL("simulation_target")
	out.PointSims = f.str("point_simulations")
	out.PointSimsNormalScore = f.str("point_simulations_normal_score")
	out.BlockSims = f.str("block_simulations")
	out.BlockSimsNormalScore = f.str("block_simulations_normal_score")
	out.Variogram = f.objectURL("variogram_model")
	out.Neighborhood = f.neighbourhood(shape, "neighborhood")
	out.Discretisation = f.discretisation("block_discretization")
	d := f.sub("distribution")
	out.Weights = d.str("weights")
	out.NumberOfSimulations = int(f.integer("number_of_simulations"))
	out.Seed = f.seed()
	out.Ordinary, _ = f.krigingMethod("kriging_method")
	out.Lines = int(f.integer("number_of_lines"))
	out.VariogramReproduction = true
	if f.has("report_context") {
		c := f.sub("report_context")
		out.Title = c.str("title")
		var details []struct {
			Label string `json:"label"`
			Value string `json:"value"`
		}
		if c.unmarshal("details", &details) {
			for _, d := range details {
				out.Details = append(out.Details, [2]string{d.Label, d.Value})
			}
		}
	}
	out.AcceptableMean, out.MarginalMean = f.meanThresholds("report_mean_thresholds")
	return out, p.err()
}

// meanThresholds decodes {"acceptable", "marginal"} of a report's mean
// check, each defaulting to its rule's default; marginal must be at least
// acceptable.
func (f *fields) meanThresholds(key string) (acceptable, marginal float64) {
	t := f.sub(key)
	acceptable, marginal = t.rule("acceptable").def.(float64), t.rule("marginal").def.(float64)
	if v, ok := t.number("acceptable"); ok {
		acceptable = v
	}
	if v, ok := t.number("marginal"); ok {
		marginal = v
		if marginal < acceptable {
			f.p.add(t.name("marginal"), "must be at least the acceptable threshold")
		}
	}
	return acceptable, marginal
}

// DecodeKriging decodes and checks a kriging request (current shape only).
func DecodeKriging(raw []byte) (*KrigingParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "kriging"), &p)
	out := &KrigingParams{}
	out.Source = f.currentSource("source")
	out.Target = f.currentTarget("target")
	out.Variogram = f.objectURL("variogram")
	if n := f.neighbourhood(CurrentShape, "neighborhood"); n != nil {
		out.Neighborhood = *n
	}
	out.Ordinary, out.Mean = f.krigingMethod("kriging_method")
	// Both spellings are checked; block_discretisation wins when both are
	// given.
	out.Discretisation = f.discretisation("block_discretization")
	if f.has("block_discretisation") {
		out.Discretisation = f.discretisation("block_discretisation")
	}
	if f.unmarshal("outputs", &out.Outputs) {
		known := f.rule("outputs").items.enum
		for i, o := range out.Outputs {
			if !slices.Contains(known, o) {
				p.add(fmt.Sprintf("%s[%d]", f.name("outputs"), i), "unknown output %q (want one of %s)", o, strings.Join(known, ", "))
			}
		}
	}
	return out, p.err()
}
