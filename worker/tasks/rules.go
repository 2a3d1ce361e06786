package tasks

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// The request fields of every task are declared once, in the tables below:
// each member's name, JSON type, whether it is required, its bounds, default,
// allowed values and nested members. The decoder (decode.go, params.go,
// filter.go) reads its rules from these tables, and RequestSchema renders
// the same tables as the JSON Schemas of the OpenAPI document, so that the
// document cannot drift from what the decoder accepts. Checks that JSON
// Schema cannot state (min_samples ≤ max_samples, marginal ≥ acceptable,
// the filter nesting depth) are said in the member's description.

// kind is the JSON type of a request member.
type kind int

const (
	kString kind = iota
	// kObjectRef is a string holding a geoscience object reference URL.
	kObjectRef
	kInteger
	kNumber
	kBoolean
	kObject
	kArray
	// kNull is a member that must be absent (or null).
	kNull
	// kOneOf is a member that takes one of several forms (alts).
	kOneOf
)

// rule is what the decoder enforces on one request member. As everywhere in
// the request shapes, a member that is null counts as absent. An array's
// items may be null unless their rule is required.
type rule struct {
	name     string
	doc      string
	kind     kind
	required bool
	// def is the value used when the member is absent (nil: none).
	def any
	// Integer bounds (inclusive).
	imin, imax int64
	// Number bounds: min is exclusive when minExcl.
	min, max                float64
	hasMin, hasMax, minExcl bool
	// enum lists the allowed values of a string member (nil: any).
	enum []string
	// pattern is a regular expression (unanchored, RE2 and ECMA-262
	// compatible) that every value the decoder accepts matches.
	pattern string
	obj     *object // kObject
	items   *rule   // kArray: every element
	// first, when set, is the rule of the array's first element instead
	// of items.
	first    *rule
	minItems int
	// maxItems bounds an array's length (0: no bound).
	maxItems int
	alts     []*rule // kOneOf
}

// object is the rule set of a JSON object: its members and, when tag is
// set, the variants that the value of member tag selects (each variant's
// members apply on top of fields).
type object struct {
	// ref names the object among the shared schemas ("" = inline).
	ref      string
	doc      string
	fields   []*rule
	tag      string
	variants []variant
	// values, when set, is the rule of every member not in fields (a map
	// such as tags).
	values *rule
}

// variant is the extra members of an object whose tag member has one of the
// values in when.
type variant struct {
	when []string
	obj  *object
}

// lookup finds the rule of a member, in the object's own fields or in one
// of its variants.
func (o *object) lookup(key string) *rule {
	if o == nil {
		return nil
	}
	for _, r := range o.fields {
		if r.name == key {
			return r
		}
	}
	for _, v := range o.variants {
		if r := v.obj.lookup(key); r != nil {
			return r
		}
	}
	return nil
}

// Constructors of rules, so that the tables read as declarations.

func str(name, doc string) *rule { return &rule{name: name, doc: doc, kind: kString} }

func objectRef(name, doc string) *rule {
	return &rule{name: name, doc: doc, kind: kObjectRef, required: true, pattern: objectRefPattern}
}

func integer(name string, def, min, max int64, doc string) *rule {
	return &rule{name: name, doc: doc, kind: kInteger, def: def, imin: min, imax: max}
}

func number(name, doc string) *rule { return &rule{name: name, doc: doc, kind: kNumber} }

func boolean(name string, def bool, doc string) *rule {
	return &rule{name: name, doc: doc, kind: kBoolean, def: def}
}

func member(name string, o *object, doc string) *rule {
	return &rule{name: name, doc: doc, kind: kObject, obj: o}
}

func array(name string, items *rule, doc string) *rule {
	return &rule{name: name, doc: doc, kind: kArray, items: items}
}

func absent(name, doc string) *rule { return &rule{name: name, doc: doc, kind: kNull} }

func oneOf(name, doc string, alts ...*rule) *rule {
	return &rule{name: name, doc: doc, kind: kOneOf, alts: alts}
}

func (r *rule) req() *rule { r.required = true; return r }

func (r *rule) values(v ...string) *rule { r.enum = v; return r }

func (r *rule) defaults(v any) *rule { r.def = v; return r }

func (r *rule) positive() *rule { r.hasMin, r.minExcl = true, true; return r }

func (r *rule) between(min, max float64) *rule {
	r.min, r.max, r.hasMin, r.hasMax = min, max, true, true
	return r
}

func (r *rule) atLeast(min float64) *rule { r.min, r.hasMin = min, true; return r }

func (r *rule) atMost(max float64) *rule { r.max, r.hasMax = max, true; return r }

// Shared members.

// ellipsoidObject is {"ellipsoid_ranges": {...}, "rotation": {...}}.
func ellipsoidObject() *object {
	ranges := &object{fields: []*rule{
		number("major", "Range along the major axis").positive().req(),
		number("semi_major", "Range along the semi-major axis").positive().req(),
		number("minor", "Range along the minor axis").positive().req(),
	}}
	rotation := &object{fields: []*rule{
		number("dip_azimuth", "Degrees clockwise from north (default 0)").between(0, 360),
		number("dip", "Degrees down from horizontal (default 0)").between(0, 180),
		number("pitch", "Degrees within the dipping plane (default 0)").between(0, 360),
	}}
	return &object{ref: "Ellipsoid", doc: "A search or anisotropy ellipsoid: ranges and rotation (docs/math.md, section 1)", fields: []*rule{
		member("ellipsoid_ranges", ranges, "The ellipsoid's ranges, positive").req(),
		member("rotation", rotation, "The ellipsoid's rotation (all angles default to 0)"),
	}}
}

// discretisationObject is {"nx", "ny", "nz"}.
func discretisationObject() *object {
	n := func(axis string) *rule {
		return integer(axis, 1, 1, grid.MaxDiscretisation, "Sub-points per cell along "+axis[1:])
	}
	return &object{ref: "BlockDiscretisation", doc: "Sub-points per cell that average a block value", fields: []*rule{n("nx"), n("ny"), n("nz")}}
}

// filterObject is a row filter expression {"type", ...}; all_of and any_of
// nest filter expressions.
func filterObject() *object {
	f := &object{ref: "FilterExpression", tag: "type",
		doc:    "A condition on one attribute, or all_of / any_of over nested expressions (at most 32 levels deep)",
		fields: []*rule{str("type", "condition, all_of or any_of").req()}}
	ops := []string{}
	for op := range thresholdOps {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	condition := &object{tag: "operator", fields: []*rule{
		str("attribute", "The attribute expression the condition reads").req(),
		str("operator", "in / not_in (category names or keys) or a comparison with threshold").req(),
	}, variants: []variant{
		{when: []string{"in", "not_in"}, obj: &object{fields: []*rule{
			array("values", oneOf("", "A category name or key", str("", ""), number("", "")).req(),
				"The category names (strings) or keys (numbers) to match").req(),
			absent("threshold", "applies to the comparison operators only (null is accepted)"),
		}}},
		{when: ops, obj: &object{fields: []*rule{number("threshold", "The value compared against").req(),
			absent("values", "applies to in / not_in only (null is accepted)")}}},
	}}
	nested := &object{fields: []*rule{}}
	f.variants = []variant{{when: []string{"condition"}, obj: condition}, {when: []string{"all_of", "any_of"}, obj: nested}}
	filters := array("filters", member("", f, "").req(), "The nested expressions").req()
	filters.minItems = 1
	nested.fields = append(nested.fields, filters)
	return f
}

// regionFilterObject is the legacy kriging target.region_filter
// {"attribute", "names" | "values"}: exactly one of the two lists.
func regionFilterObject() *object {
	return &object{ref: "RegionFilter", doc: "Legacy target filter: the rows whose category attribute has one of the names or keys; exactly one of names and values", fields: []*rule{
		str("attribute", "The attribute expression of a category (or integer) attribute").req(),
		array("names", str("", ""), "Category names to keep (exactly one of names and values)"),
		array("values", integer("", 0, math.MinInt64, math.MaxInt64, "").req(), "Category keys to keep (exactly one of names and values)"),
	}}
}

// wrapFilter is {"where": <expression>}.
func wrapFilter(expr *object) *object {
	return &object{ref: "Filter", doc: "A row filter (docs/objects.md, section 4.3)", fields: []*rule{
		member("where", expr, "The filter expression").req(),
	}}
}

// legacyRefObject is the seed's geoscience-object-reference. With element
// set, an object_element whose first path names an attribute is required;
// named also asks that path to name the attribute (@name=<name>).
func legacyRefObject(ref string, element, named bool) *object {
	path := str("path", "Element path, e.g. /locations/attributes/@name=grade").req()
	if named {
		path.pattern = attributeNamePattern
		path.doc = "Element path naming the attribute as /…/@name=<name>"
	}
	first := member("", &object{fields: []*rule{str("type", ""), path}}, "")
	first.required = true
	els := array("object_element", member("", &object{fields: []*rule{str("type", ""), str("path", "")}}, ""),
		"Elements of the object; the first one's path names the attribute")
	els.first = first
	if element {
		els.required, els.minItems = true, 1
	}
	return &object{ref: ref, doc: "A geoscience-object-reference of the seed's request shapes", fields: []*rule{
		str("type", "Always geoscience-object-reference").values(legacyRefType),
		str("key", "The attribute's key, not used: the element path names the attribute"),
		objectRef("object_reference", "The object's URL"),
		els,
	}}
}

// legacyRefType is the type member of a seed object reference.
const legacyRefType = "geoscience-object-reference"

// seedNeighborhoodObject is {"max-samples", "anisotropy"}.
func seedNeighborhoodObject(ref string, maxSamples int64, ell *object) *object {
	return &object{ref: ref, doc: "A search neighbourhood of the seed's shapes", fields: []*rule{
		integer("max-samples", 1, 1, maxSamples, "The largest number of samples used per target").req(),
		member("anisotropy", ell, "The search ellipsoid").req(),
	}}
}

// currentNeighborhoodObject is {"ellipsoid", "max_samples", "min_samples"}.
func currentNeighborhoodObject(ref string, maxSamples int64, ell *object) *object {
	return &object{ref: ref, doc: "A search neighbourhood", fields: []*rule{
		member("ellipsoid", ell, "The search ellipsoid").req(),
		integer("max_samples", 1, 1, maxSamples, "The largest number of samples used per target").req(),
		integer("min_samples", 0, 0, maxSamples, "Targets with fewer samples get no value; must not exceed max_samples"),
	}}
}

// currentSourceObject is {"object", "attribute", "filter"}.
func currentSourceObject(ref string, filter *object) *object {
	o := &object{ref: ref, doc: "An object and one of its attributes", fields: []*rule{
		objectRef("object", "The object's URL"),
		str("attribute", "The attribute expression, e.g. locations.attributes[?name=='grade']").req(),
	}}
	if filter != nil {
		o.fields = append(o.fields, member("filter", filter, "Rows of the source that take part"))
	} else {
		o.fields = append(o.fields, absent("filter", "filters are not supported here"))
	}
	return o
}

// currentTargetObject is {"object", "attribute": {"operation", ...}, "filter"}.
func currentTargetObject(ref string, filter *object) *object {
	attr := &object{tag: "operation", fields: []*rule{str("operation", "create a new attribute, or update an existing one").req()},
		variants: []variant{
			{when: []string{"create"}, obj: &object{fields: []*rule{str("name", "The new attribute's name (an attribute of that name is replaced, keeping its key)").req()}}},
			{when: []string{"update"}, obj: &object{fields: []*rule{str("reference", "The expression of the attribute to update").req()}}},
		}}
	o := &object{ref: ref, doc: "The object a task writes to and the attribute it writes", fields: []*rule{
		objectRef("object", "The object's URL"),
		member("attribute", attr, "The attribute written").req(),
	}}
	if filter != nil {
		o.fields = append(o.fields, member("filter", filter, "Rows of the target that are written"))
	} else {
		o.fields = append(o.fields, absent("filter", "filters are not supported here"))
	}
	return o
}

// krigingMethodObject is {"type", "mean"}.
func krigingMethodObject() *object {
	return &object{ref: "KrigingMethod", doc: "Simple kriging (with a known mean) or ordinary kriging", tag: "type",
		fields: []*rule{str("type", "simple or ordinary").req()}, variants: []variant{
			{when: []string{"simple"}, obj: &object{fields: []*rule{number("mean", "The known mean of simple kriging")}}},
			{when: []string{"ordinary"}, obj: &object{fields: []*rule{absent("mean", "A mean applies to simple kriging only")}}},
		}}
}

// krigingMethodRule is "simple" | "ordinary" | method, with a default.
func krigingMethodRule(def string, method *object) *rule {
	return oneOf("kriging_method", "Simple or ordinary kriging, as a name or {type, mean}",
		str("", "").values("simple", "ordinary"), member("", method, "")).defaults(def)
}

// The request tables of every task, by topic and task name.
type requestTables struct {
	byTopic map[string]map[string]*object
	// shared are the named objects, by ref.
	shared map[string]*object
}

var tables = buildTables()

func buildTables() *requestTables {
	ell := ellipsoidObject()
	disc := discretisationObject()
	method := krigingMethodObject()
	filter := wrapFilter(filterObject())
	seedSource := legacyRefObject("SeedAttributeReference", true, false)
	seedTarget := legacyRefObject("SeedTargetReference", true, true)
	seedObject := legacyRefObject("SeedObjectReference", false, false)
	seedNbKNN := seedNeighborhoodObject("SeedNeighborhood", MaxKNNSamples, ell)
	seedNbKriging := seedNeighborhoodObject("SeedKrigingNeighborhood", MaxKrigingSamples, ell)
	nbKNN := currentNeighborhoodObject("Neighborhood", MaxKNNSamples, ell)
	nbKriging := currentNeighborhoodObject("KrigingNeighborhood", MaxKrigingSamples, ell)
	source := currentSourceObject("Source", filter)
	sourceNoFilter := currentSourceObject("SourceWithoutFilter", nil)
	target := currentTargetObject("Target", filter)
	targetNoFilter := currentTargetObject("TargetWithoutFilter", nil)
	krigingTarget := currentTargetObject("KrigingTarget", filter)
	krigingTarget.fields = append(krigingTarget.fields, member("region_filter", regionFilterObject(),
		"Legacy form of filter (older clients): the rows whose category attribute is one of names or values; ANDed with filter when both are given"))
	seed := func() *rule {
		return integer("random_seed", DefaultSeed, math.MinInt64, math.MaxInt64, "Seed of the random streams")
	}
	discMember := func(name string) *rule {
		return member(name, disc, "Block discretisation of the target cells (default 1 × 1 × 1: point support)")
	}

	simulation := func(shape Shape, realKey string) []*rule {
		var out []*rule
		if shape == SeedShape {
			out = []*rule{
				member("source", seedSource, "The conditioning samples and their attribute").req(),
				member("target", seedTarget, "The grid or points to simulate; the path names the ensemble").req(),
				member("distribution", seedObject, "The distribution object of the attribute").req(),
				member("variogram_model", seedObject, "The variogram of the normal scores").req(),
				member("neighborhood", seedNbKriging, "The kriging neighbourhood (default: from the variogram's ranges)"),
			}
		} else {
			out = []*rule{
				objectRef("source", "The conditioning samples' object URL"),
				str("source_attribute", "The attribute expression of the conditioning values").req(),
				member("source_filter", filter, "Rows of the source used"),
				objectRef("target", "The grid or points to simulate (the ensemble is named "+DefaultEnsembleName+")"),
				member("filter", filter, "Rows of the target simulated"),
				objectRef("distribution", "The distribution object of the attribute"),
				objectRef("variogram_model", "The variogram of the normal scores"),
				member("neighborhood", nbKriging, "The kriging neighbourhood (default: from the variogram's ranges)"),
			}
		}
		return append(out,
			discMember("block_discretization"),
			integer("number_of_lines", DefaultLines, 1, MaxLines, "Turning-bands lines"),
			seed(),
			integer(realKey, 1, 1, MaxRealisations, "Number of realisations"),
			boolean("variogram_reproduction", false, "Also check the variogram reproduction"),
			krigingMethodRule("simple", method),
			boolean("normalize_variogram_model", true, "Scale the variogram to a unit sill"),
			boolean("save_gaussian_results", false, "Also write the Gaussian (normal-score) realisations"),
		)
	}
	t := &requestTables{byTopic: map[string]map[string]*object{
		TopicSeed: {
			"knn": {doc: "k-nearest mean, seed shape", fields: []*rule{
				member("source", seedSource, "The samples and their attribute").req(),
				member("target", seedTarget, "The object and the attribute to write").req(),
				member("neighborhood", seedNbKNN, "The search neighbourhood").req(),
			}},
			"break-ties": {doc: "Break ties, seed shape (ties are ordered randomly)", fields: []*rule{
				member("source", seedSource, "The samples and their attribute").req(),
				member("target", seedTarget, "The object and the attribute to write").req(),
				seed(),
			}},
			"conditional-tbsim": {doc: "Conditional turning-bands simulation, seed shape", fields: simulation(SeedShape, "realizations")},
			"simulation-report": {doc: "Simulate, then write a validation report, seed shape", fields: []*rule{
				member("simulation_parameters", &object{ref: "SeedSimulationParameters", fields: simulation(SeedShape, "realisations")},
					"The simulation to run").req(),
				boolean("variogram_reproduction", false, "Also check the variogram reproduction"),
				str("target", "The file path of the report").req(),
			}},
		},
		TopicCurrent: {
			"knn": {doc: "k-nearest mean", fields: []*rule{
				member("source", source, "The samples and their attribute").req(),
				member("target", target, "The object and the attribute to write").req(),
				member("neighborhood", nbKNN, "The search neighbourhood").req(),
			}},
			"break-ties": {doc: "Break ties by local means, or randomly without a neighbourhood", fields: []*rule{
				member("source", sourceNoFilter, "The samples and their attribute").req(),
				member("target", targetNoFilter, "The object and the attribute to write").req(),
				member("neighborhood", nbKNN, "The neighbourhood of the local means (none: ties are ordered randomly)"),
				integer("seed", DefaultSeed, math.MinInt64, math.MaxInt64, "Seed of the random order (random_seed is read when seed is absent)"),
				seed(),
			}},
			"conditional-turning-bands": {doc: "Conditional turning-bands simulation", fields: simulation(CurrentShape, "realizations")},
			"simulation-report": {doc: "Validation report of stored simulations", fields: []*rule{
				objectRef("simulation_source", "The conditioning samples' object URL"),
				str("source_attribute", "The attribute expression of the conditioning values").req(),
				objectRef("simulation_target", "The simulated object's URL"),
				str("point_simulations", "Expression of the point realisations").req(),
				str("point_simulations_normal_score", "Expression of the point realisations' normal scores").req(),
				str("block_simulations", "Expression of the block realisations").req(),
				str("block_simulations_normal_score", "Expression of the block realisations' normal scores").req(),
				objectRef("variogram_model", "The variogram of the normal scores"),
				member("neighborhood", nbKriging, "The kriging neighbourhood (default: from the variogram's ranges)"),
				discMember("block_discretization"),
				member("distribution", &object{fields: []*rule{str("weights", "Expression of declustering weights")}}, "The sample distribution"),
				integer("number_of_simulations", 1, 1, math.MaxInt32, "Number of realisations to validate").req(),
				seed(),
				krigingMethodRule("simple", method),
				integer("number_of_lines", DefaultLines, 1, math.MaxInt32, "Turning-bands lines"),
				member("report_context", &object{fields: []*rule{
					str("title", "The report's title"),
					array("details", member("", &object{fields: []*rule{str("label", ""), str("value", "")}}, ""), "Label and value rows shown under the title"),
				}}, "What the report shows about its context"),
				meanThresholdsRule(),
			}},
			"consim": {doc: "The conditional simulation workflow in one job: break ties, distribution, normal score, conditional turning bands, back-transform, block averaging, location-wise statistics, optional loss classification and validation report (docs/api.md)",
				fields: consimRules(filter, nbKriging, discMember("block_discretization"), seed(), krigingMethodRule("simple", method))},
			"kriging": {doc: "Simple or ordinary, point or block kriging", fields: []*rule{
				member("source", source, "The samples and their attribute").req(),
				member("target", krigingTarget, "The object and the attribute to write; a filter selects the rows written (on update the others keep their values)").req(),
				objectRef("variogram", "The variogram object's URL"),
				member("neighborhood", nbKriging, "The kriging neighbourhood").req(),
				krigingMethodRule("ordinary", method),
				discMember("block_discretisation"),
				member("block_discretization", disc, "The same, in the spelling of the other tasks; block_discretisation wins when both are given"),
				array("outputs", str("", "").values(KrigingOutputs()...).req(), "Diagnostics written as <name>_<output>"),
			}},
			"variogram-model":         variogramModelRequest(filter),
			"location-wise":           locationWiseRules(sourceNoFilter),
			"loss-calculation":        classificationRules("loss", sourceNoFilter, targetNoFilter),
			"profit-calculation":      classificationRules("profit", sourceNoFilter, targetNoFilter),
			"declustering":            declusteringRules(targetNoFilter, nbKNN),
			"continuous-distribution": distributionRules(sourceNoFilter),
			"normal-score":            normalScoreRules(sourceNoFilter, targetNoFilter),
			"idw":                     idwRules(source, target, nbKNN),
		},
	}}
	t.shared = map[string]*object{}
	for topic, tasks := range t.byTopic {
		for task, o := range tasks {
			o.ref = taskSchemaName(topic, task)
			t.collect(o)
		}
	}
	return t
}

// collect records the named objects reachable from o.
func (t *requestTables) collect(o *object) {
	if o == nil {
		return
	}
	if o.ref != "" {
		if prev, ok := t.shared[o.ref]; ok {
			if prev != o {
				panic(fmt.Sprintf("tasks: two request objects named %s", o.ref))
			}
			return
		}
		t.shared[o.ref] = o
	}
	var walk func(r *rule)
	walk = func(r *rule) {
		if r == nil {
			return
		}
		t.collect(r.obj)
		walk(r.items)
		walk(r.first)
		for _, a := range r.alts {
			walk(a)
		}
	}
	for _, r := range o.fields {
		walk(r)
	}
	for _, v := range o.variants {
		t.collect(v.obj)
	}
}

// request returns the table of a task's parameters under a topic.
func (t *requestTables) request(topic, task string) *object { return t.byTopic[topic][task] }

// params returns the table of a task in a shape.
func params(shape Shape, task string) *object {
	if shape == SeedShape {
		return tables.request(TopicSeed, task)
	}
	return tables.request(TopicCurrent, task)
}

// variogramModelRequest is the request of the variogram-model task
// (variogram_model.go): the source samples, the directions and lags of the
// experimental variograms, the model to fit and the two objects written.
func variogramModelRequest(filter *object) *object {
	source := &object{ref: "VariogramSource", doc: "The samples: a pointset or downhole intervals (at their mid-points), a continuous attribute and optional declustering weights", fields: []*rule{
		objectRef("object", "The object's URL"),
		str("attribute", "The attribute expression of the values, e.g. locations.attributes[?name=='grade']").req(),
		str("weights", "The attribute expression of declustering weights on the same object (finite, ≥ 0); a pair weighs the product of its samples' weights; samples without a weight are left out"),
		member("filter", filter, "Rows of the source that take part"),
	}}
	direction := &object{ref: "VariogramDirection", doc: "A direction of the experimental variograms (docs/api.md, variogram-model)", fields: []*rule{
		number("azimuth", "Degrees clockwise from north").between(0, 360).req(),
		number("dip", "Degrees below the horizontal: positive downwards (gamv's dip is the opposite)").between(-90, 90).defaults(0.0),
		number("azimuth_tolerance", "Half-window around the azimuth in degrees, in (0, 90]; 90 accepts every azimuth").positive().atMost(90).defaults(22.5),
		number("dip_tolerance", "Half-window around the dip in degrees, in (0, 90]").positive().atMost(90).defaults(22.5),
		number("bandwidth", "Largest horizontal distance of a pair's separation from the direction's vertical plane (absent: no limit)").positive(),
		number("bandheight", "Largest distance of a pair's separation from the direction within that vertical plane (absent: no limit)").positive(),
	}}
	directions := array("directions", oneOf("", "A direction, or the string omnidirectional (every pair)",
		str("", "").values("omnidirectional"), member("", direction, "")).req(),
		"The directions, each computed on its own; a direction and its opposite are the same").req()
	directions.minItems, directions.maxItems = 1, MaxVariogramDirections
	lags := &object{ref: "VariogramLags", doc: "Lag k = 0 … number_of_lags collects the pairs with k·d − t ≤ |h| ≤ k·d + t (both ends closed), 0 < |h| ≤ (number_of_lags + ½)·d", fields: []*rule{
		number("lag_distance", "The lag spacing d").positive().req(),
		integer("number_of_lags", 0, 1, MaxVariogramLags, "The number of lags after lag 0 (each direction has number_of_lags + 1 lags)").req(),
		number("lag_tolerance", "The half-width t of a lag window (default d/2)").positive(),
	}}
	alphaTypes := []string{geostat.Spheroidal.String(), geostat.GeneralisedCauchy.String()}
	var plainTypes []string
	for t := geostat.Spherical; t <= geostat.Linear; t++ {
		if !t.HasAlpha() {
			plainTypes = append(plainTypes, t.String())
		}
	}
	structure := &object{ref: "VariogramStructureChoice", doc: "A structure to fit: its type and, for the spheroidal and generalised Cauchy types, its shape factor alpha (not fitted)",
		tag: "variogram_type", fields: []*rule{str("variogram_type", "The structure type").req()}, variants: []variant{
			{when: alphaTypes, obj: &object{fields: []*rule{integer("alpha", 0, 3, 9, "The shape factor: 3, 5, 7 or 9").req()}}},
			{when: plainTypes, obj: &object{fields: []*rule{absent("alpha", "alpha applies to the spheroidal and generalised Cauchy types only")}}},
		}}
	structures := array("structures", member("", structure, "").req(), "1 to 3 nested structures").req()
	structures.minItems, structures.maxItems = 1, 3
	axis := func(name string) *rule {
		r := integer(name, 0, 0, MaxVariogramDirections-1, "Index in directions of the direction along the "+strings.ReplaceAll(name, "_", "-")+" axis")
		r.def = nil // no default: an axis not given is not given
		return r
	}
	aniso := &object{ref: "VariogramAnisotropy", doc: "How the structures' anisotropy is obtained", tag: "type",
		fields: []*rule{str("type", "isotropic (one range per structure), given (the axes are directions of the request, the three ranges are fitted) or fitted (the rotation is fitted too)").req()},
		variants: []variant{
			{when: []string{"isotropic"}, obj: &object{fields: []*rule{}}},
			{when: []string{"given", "fitted"}, obj: &object{fields: []*rule{axis("major"), axis("semi_major"), axis("minor")}}},
		}}
	model := &object{ref: "VariogramModelChoices", doc: "The nested model to fit by weighted least squares", fields: []*rule{
		boolean("nugget", true, "Fit a nugget effect (false: the nugget is 0)"),
		structures,
		member("anisotropy", aniso, "The anisotropy (default isotropic). given needs two of major, semi_major and minor, naming different directional directions; fitted starts from them when given"),
		str("weighting", "The least-squares weight of a lag: cressie N(h)/γ̂(h)² (with the experimental γ̂), pairs N(h), or pairs_over_distance_squared N(h)/h²").
			values("cressie", "pairs", "pairs_over_distance_squared").defaults("cressie"),
		str("sill_constraint", "The total sill: free, data_variance (the data variance) or unit (1). Default unit with a distribution (normal scores), free without").
			values("free", "data_variance", "unit"),
		number("range_min", "The smallest range (default half the smallest lag centroid); below range_max").positive(),
		number("range_max", "The largest range (default the end of the last lag used); above range_min").positive(),
		integer("min_pairs", 1, 1, math.MaxInt32, "Lags with fewer pairs are not fitted"),
		integer("starts", 8, 1, 1000, "Starting points of the minimisation"),
		integer("random_seed", DefaultSeed, math.MinInt64, math.MaxInt64, "Seed of the random starting points"),
	}}
	objTarget := func(ref, what string) *object {
		return &object{ref: ref, doc: "The " + what + " object written", fields: []*rule{
			objectRef("reference", "The object's URL: a path URL creates the object there; an existing object (by path or id) gets a new version with overwrite"),
			boolean("overwrite", false, "Write a new version of an existing object (false: an existing object fails the request)"),
			str("description", "The object's description"),
			member("tags", &object{values: str("", "A tag value")}, "Key-value tags of the object"),
		}}
	}
	targets := &object{ref: "VariogramTargets", doc: "The two objects written; they must differ", fields: []*rule{
		member("experimental_variogram", objTarget("ExperimentalVariogramTarget", "experimental-variogram"), "The experimental variograms").req(),
		member("variogram", objTarget("VariogramTarget", "variogram"), "The fitted model").req(),
	}}
	distribution := objectRef("distribution", "A distribution object: the values are transformed to normal scores through it before the variograms are computed")
	distribution.required = false
	return &object{doc: "Experimental variograms of scattered data and a fitted nested variogram model", fields: []*rule{
		member("source", source, "The samples").req(),
		distribution,
		directions,
		member("lags", lags, "The lags").req(),
		member("model", model, "The model to fit").req(),
		member("target", targets, "The objects written").req(),
	}}
}

// meanThresholdsRule is the report's fallback rule for the mean check
// (simulation-report and consim): the realisations' spread judges the
// mean; these relative thresholds apply only when there is no spread to
// judge by (one realisation, or identical realisation means).
func meanThresholdsRule() *rule {
	return member("report_mean_thresholds", &object{fields: []*rule{
		number("acceptable", "Relative mean difference shown as acceptable when the realisations give no spread to judge by (one realisation, or identical means)").atLeast(0).defaults(0.05),
		number("marginal", "Relative mean difference shown as marginal when the realisations give no spread to judge by; at least acceptable").atLeast(0).defaults(0.10),
	}}, "Fallback thresholds of the mean check: the mean is judged by the spread of the realisation means, and by these only when there is none (docs/math.md 7.1)")
}
