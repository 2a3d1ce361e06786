package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/objects"
)

// classificationRules declares the members of loss-calculation and
// profit-calculation (the same members; criterion is "loss" or "profit").
func classificationRules(criterion string, source, target *object) *object {
	category := &object{doc: "A material category", fields: []*rule{
		number("cutoff_grade", "The grade above which a block is this material (≥ 0; categories ordered by cutoff)").atLeast(0).defaults(0.0),
		number("metal_price", "The price per unit of metal (≥ 0)").atLeast(0).defaults(0.0),
		str("label", "The category's label in the lookup table (each label once)").defaults("waste"),
	}}
	cats := array("material_categories", member("", category, "").req(),
		"The categories from the lowest to the highest cutoff grade; key k of the output is the k-th category (0-based), "+
			"a block that qualifies for none gets the first one, one without finite realisations none (key -1)").req()
	cats.minItems = 1
	decision := "the expected loss of including the block is lower than that of excluding it"
	if criterion == "profit" {
		decision = "the expected profit of including the block is higher than that of excluding it"
	}
	return &object{doc: "Classify every block of a grid into material categories from its realisations: a block belongs to the last " +
		"category for which " + decision + " (docs/ensemble.md)", fields: []*rule{
		member("source", source, "The grid and its ensemble of simulated grades").req(),
		member("target", target, "The category attribute to create or update (on the source's grid or one with as many cells)").req(),
		cats,
		number("processing_cost", "Cost of processing a unit of material (≥ 0)").atLeast(0).req(),
		number("mining_waste_cost", "Cost of mining a unit as waste (≥ 0)").atLeast(0).req(),
		number("mining_ore_cost", "Cost of mining a unit as ore (≥ 0)").atLeast(0).req(),
		number("metal_recovery_fraction", "The recovered fraction of the metal, in [0, 1]").between(0, 1).req(),
	}}
}

// ClassificationParams are the parameters of loss-calculation and
// profit-calculation.
type ClassificationParams struct {
	Source    Source
	Target    Target
	Economics ensemble.Economics
}

// DecodeClassification decodes and checks a loss-calculation or
// profit-calculation request (task names which).
func DecodeClassification(task string, raw []byte) (*ClassificationParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, task), &p)
	out := &ClassificationParams{Source: f.currentSource("source"), Target: f.currentTarget("target")}
	before := len(p.list)
	e := &out.Economics
	e.ProcessingCost, _ = f.number("processing_cost")
	e.MiningWasteCost, _ = f.number("mining_waste_cost")
	e.MiningOreCost, _ = f.number("mining_ore_cost")
	e.MetalRecoveryFraction, _ = f.number("metal_recovery_fraction")
	var items []json.RawMessage
	if f.need("material_categories") && f.unmarshal("material_categories", &items) {
		list := f.rule("material_categories")
		if len(items) < list.minItems {
			p.add(f.name("material_categories"), "needs at least one category")
		}
		for i, raw := range items {
			at := fmt.Sprintf("%s[%d]", f.name("material_categories"), i)
			if string(bytes.TrimSpace(raw)) == "null" {
				p.add(at, "must be a category object, not null")
				continue
			}
			c := newFields(raw, at, &p, list.items.obj)
			cat := ensemble.Category{Label: c.rule("label").def.(string)}
			if v, ok := c.number("cutoff_grade"); ok {
				cat.CutoffGrade = v
			}
			if v, ok := c.number("metal_price"); ok {
				cat.MetalPrice = v
			}
			if s, ok := c.strOK("label"); ok {
				cat.Label = s
			}
			e.Categories = append(e.Categories, cat)
		}
	}
	// The library's checks (cutoffs in order, labels once) once the
	// members decode.
	if len(p.list) == before {
		if err := e.Validate(); err != nil && !f.fieldProblem(err) {
			p.add(prefixName(f.prefix), "%v", err)
		}
	}
	return out, p.err()
}

type classificationPlan struct {
	env       *Env
	req       Request
	criterion ensemble.Criterion
	p         *ClassificationParams
	source    *ensembleSource
	target    *Version
}

// PrepareLossCalculation validates a loss-calculation request.
func PrepareLossCalculation(ctx context.Context, env *Env, req Request) (Plan, error) {
	return prepareClassification(ctx, env, req, "loss-calculation", ensemble.MinimiseLoss)
}

// PrepareProfitCalculation validates a profit-calculation request.
func PrepareProfitCalculation(ctx context.Context, env *Env, req Request) (Plan, error) {
	return prepareClassification(ctx, env, req, "profit-calculation", ensemble.MaximiseProfit)
}

func prepareClassification(ctx context.Context, env *Env, req Request, task string, crit ensemble.Criterion) (Plan, error) {
	p, err := DecodeClassification(task, req.Body)
	if err != nil {
		return nil, err
	}
	pl := &classificationPlan{env: env, req: req, criterion: crit, p: p}
	if pl.source, err = loadEnsembleSource(ctx, env, req, p.Source); err != nil {
		return nil, err
	}
	if pl.target, err = loadGridTarget(ctx, env, req, p.Target.Object, pl.source); err != nil {
		return nil, err
	}
	if p.Target.Update != "" {
		a, err := pl.target.Object.ResolveAttribute(p.Target.Update)
		if err != nil {
			return nil, invalid("target.attribute.reference", "attribute not found: %v", err)
		}
		if a.Type != objects.AttributeCategory {
			return nil, invalid("target.attribute.reference", "attribute %q is a %s attribute; only a category attribute can be updated with a classification", a.Name, a.Type)
		}
	}
	// Memory: one tile of the ensemble and the keys; disk: the int32 keys
	// and the lookup table.
	keys := 4 * float64(pl.source.cells)
	if err := env.admit(req, "source", pl.source.tileBytes()+2*keys, keys+64*float64(len(p.Economics.Categories))+4096); err != nil {
		return nil, err
	}
	return pl, nil
}

func (pl *classificationPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	src := pl.source
	c, err := ensemble.NewClassifier(pl.criterion, pl.p.Economics, src.cells, src.width)
	if err != nil {
		return nil, err
	}
	progress(2, "reading the realisations")
	if err := src.process(ctx, progress, 5, 85, c); err != nil {
		return nil, err
	}
	progress(88, "writing the categories")
	ref := pl.p.Target.Object
	ws := ObjectRef{Org: ref.Org, Workspace: ref.Workspace, ObjectID: pl.target.ObjectID}
	cw, err := storeCategory(ctx, pl.env, ws.Org, ws.Workspace, attributeTarget(pl.p.Target), c.Keys(), c.LookupTable())
	if err != nil {
		return nil, err
	}
	w, err := commit(ctx, pl.env, pl.target, ws, pl.req.User, []attributeWrite{cw})
	if err != nil {
		return nil, err
	}
	msg := "Loss calculation completed successfully."
	if pl.criterion == ensemble.MaximiseProfit {
		msg = "Profit calculation completed successfully."
	}
	return map[string]any{"message": msg, "target": pl.env.targetAttributeResult(w)}, nil
}
