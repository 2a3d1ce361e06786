package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// figure is one plot of the page with its caption.
type figure struct {
	Name    string
	Title   string
	Caption string
	SVG     string
}

// section groups figures under a heading.
type section struct {
	ID      string
	Title   string
	Lead    string
	Figures []figure
}

func unitsOf(u string) string {
	if u == "" {
		return ""
	}
	return " (" + u + ")"
}

func realisationIndex(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i + 1)
	}
	return x
}

// sections builds the plots of the report.
func (r *Report) sections() []section {
	var out []section
	dataU := unitsOf(r.Units)
	lenU := unitsOf(r.LengthUnit)
	// The data are declustered only when weights were given.
	dataLabel, theData := "Data", "the data"
	if r.Data.Declustered {
		dataLabel, theData = "Data (declustered)", "the declustered data"
	}

	// Distribution reproduction.
	var dist section
	dist.ID, dist.Title = "distribution", "Distribution reproduction"
	if d := r.Distribution; d != nil {
		dist.Lead = fmt.Sprintf("Each thin line is one of the %d realisations (%s); the bold red line is the reference distribution.", len(d.Realisations), strings.ToLower(ensembleLabel(d.Ensemble)))
		h := d.Histogram
		p := newPlot("histogram", "Histogram", "Value"+dataU, "Fraction of values")
		p.add(series{label: dataLabel, kind: kindBars, class: "bar-data", x: h.Edges, y: h.Data})
		for i, s := range h.Realisations {
			p.add(series{label: label(i == 0, "Realisations"), kind: kindStep, class: "real", x: h.Edges, y: s})
		}
		p.add(series{label: "Reference", kind: kindStep, class: "model", x: h.Edges, y: h.Reference})
		p.yFromZero = true
		dist.Figures = append(dist.Figures, figure{Name: p.name, Title: "Histogram", SVG: p.svg(),
			Caption: "Class frequencies of the realisations (thin), " + theData + " (grey bars) and the reference distribution (red)."})

		p = newPlot("cdf", "Cumulative distribution", "Value"+dataU, "Cumulative probability")
		for i, s := range d.Realisations {
			p.add(series{label: label(i == 0, "Realisations"), class: "real", x: s, y: d.Probabilities})
		}
		p.add(series{label: dataLabel, class: "data", x: d.DataQuantiles, y: d.Probabilities})
		p.add(series{label: "Reference", class: "model", x: d.ReferenceQuantiles, y: d.Probabilities})
		p.yMin, p.yMax = 0, 1
		dist.Figures = append(dist.Figures, figure{Name: p.name, Title: "Cumulative distribution", SVG: p.svg(),
			Caption: fmt.Sprintf("Kolmogorov distance to the reference: mean %s, largest %s.", num(d.KolmogorovMean), num(d.KolmogorovMax))})

		dist.Figures = append(dist.Figures, qqFigure("qq", "QQ plot", d, "Reference quantile"+dataU, "Simulated quantile"+dataU, theData))
	}
	if g := r.Gaussian; g != nil {
		p := newPlot("gaussian-cdf", "Normal scores: cumulative distribution", "Normal score", "Cumulative probability")
		for i, s := range g.Realisations {
			p.add(series{label: label(i == 0, "Realisations"), class: "real", x: s, y: g.Probabilities})
		}
		p.add(series{label: "Standard normal", class: "model", x: g.ReferenceQuantiles, y: g.Probabilities})
		p.yMin, p.yMax = 0, 1
		p.xMin, p.xMax = -3.5, 3.5
		dist.Figures = append(dist.Figures, figure{Name: p.name, Title: "Normal scores: cumulative distribution", SVG: p.svg(),
			Caption: fmt.Sprintf("Point normal scores against N(0, 1); Kolmogorov distance: mean %s, largest %s.", num(g.KolmogorovMean), num(g.KolmogorovMax))})
	}
	if len(dist.Figures) > 0 {
		out = append(out, dist)
	}

	// Variogram reproduction.
	if len(r.Variograms) > 0 {
		vs := section{ID: "variograms", Title: "Variogram reproduction",
			Lead: "Experimental variograms of the normal scores along the axes of the longest structure (thin: realisations, dashed: their average) against the model (red) evaluated at the actual lattice lags."}
		for _, v := range r.Variograms {
			name := "variogram-" + v.Support + "-" + v.Axis
			sup := "Points"
			modelLabel := "Model γ(h)"
			if v.Support == "block" {
				sup = "Blocks"
				modelLabel = "Model γ_V(h)"
			}
			title := fmt.Sprintf("%s — %s axis", sup, strings.ReplaceAll(v.Axis, "_", "-"))
			p := newPlot(name, title, "Lag distance"+lenU, "Semivariogram (normal scores)")
			for i, s := range v.Realisations {
				p.add(series{label: label(i == 0, "Realisations"), class: "real", x: v.Distance, y: s})
			}
			p.add(series{label: "Average", class: "mean", x: v.Distance, y: v.Mean})
			p.add(series{label: modelLabel, kind: kindLineMarkers, class: "model", x: v.Distance, y: v.Model})
			p.add(series{label: "Sill", kind: kindHLine, class: "ref", y: []float64{float64(v.Sill)}})
			p.yFromZero = true
			p.xMin = 0
			cap := fmt.Sprintf("Direction (%s), range %s %s; %d lags, %d pairs at the first lag.",
				direction(v.Direction), num(v.Range), r.LengthUnit, len(v.Lags), first(v.Pairs))
			if v.Support == "block" {
				cap = "Block averages against the regularised model. " + cap
			}
			vs.Figures = append(vs.Figures, figure{Name: name, Title: title, SVG: p.svg(), Caption: cap})
		}
		out = append(out, vs)
	}

	// Swaths.
	if len(r.Swaths) > 0 {
		ss := section{ID: "swaths", Title: "Swath plots",
			Lead: fmt.Sprintf("Mean per slice of the %s (thin: realisations, dashed: ensemble mean) against the mean of %s (black); the bars in the band below count the data per slice.", strings.ToLower(ensembleLabel(r.Swaths[0].Ensemble)), theData)}
		for _, s := range r.Swaths {
			name := "swath-" + s.Axis
			title := "Swath along " + strings.ToUpper(s.Axis)
			p := newPlot(name, title, strings.ToUpper(s.Axis)+lenU, "Mean"+dataU)
			counts := make([]float64, len(s.DataCount))
			edges := make([]float64, len(s.Centres)+1)
			for k, c := range s.Centres {
				edges[k] = c - float64(s.Width)/2
				counts[k] = float64(s.DataCount[k])
			}
			edges[len(s.Centres)] = s.Centres[len(s.Centres)-1] + float64(s.Width)/2
			p.add(series{label: "Data count", kind: kindBars, class: "bar-count", x: edges, y: counts, band: true})
			p.bandLabel = "Count"
			for i, rs := range s.Realisations {
				p.add(series{label: label(i == 0, "Realisations"), class: "real", x: s.Centres, y: rs})
			}
			p.add(series{label: "Ensemble mean", class: "mean", x: s.Centres, y: s.Mean})
			p.add(series{label: "Data", kind: kindLineMarkers, class: "data", x: s.Centres, y: s.DataMean})
			p.xMin, p.xMax = edges[0], edges[len(edges)-1]
			ss.Figures = append(ss.Figures, figure{Name: name, Title: title, SVG: p.svg(),
				Caption: fmt.Sprintf("%d slices of %s%s.", len(s.Centres), num(s.Width), " "+r.LengthUnit)})
		}
		out = append(out, ss)
	}

	// Per-realisation statistics.
	rs := section{ID: "realisations", Title: "Realisation statistics",
		Lead: "Mean and variance of every realisation against the reference and the ergodic fluctuation expected of a domain of this size."}
	if es := r.ensemble(r.Summary.MeanEnsemble); es != nil {
		p := newPlot("realisation-means", "Mean per realisation", "Realisation", "Mean"+dataU)
		x := realisationIndex(len(es.Realisations))
		m := float64(r.Summary.ReferenceMean)
		ck := r.Summary.MeanCheck
		// The bands of the rule the means were judged by.
		acc, marg := AcceptableSigmas*float64(ck.Spread), MarginalSigmas*float64(ck.Spread)
		rule := fmt.Sprintf("green: acceptable (±%gs), amber: marginal (±%gs), s = %s the standard deviation of the realisation means",
			AcceptableSigmas, MarginalSigmas, num(ck.Spread))
		if ck.Rule != FluctuationRule {
			th := r.Summary.Thresholds
			scale := math.Abs(m)
			if m == 0 {
				scale = 1
			}
			acc, marg = th.Acceptable*scale, th.Marginal*scale
			rule = fmt.Sprintf("no spread to judge by (%s): green: acceptable (±%s), amber: marginal (±%s)", ck.Reason, pct(Number(th.Acceptable)), pct(Number(th.Marginal)))
		}
		p.add(series{label: "Marginal", kind: kindBand, class: "band-marginal", y: []float64{m - marg, m + marg}})
		p.add(series{label: "Acceptable", kind: kindBand, class: "band-acceptable", y: []float64{m - acc, m + acc}})
		p.add(series{label: "Reference mean", kind: kindHLine, class: "model", y: []float64{m}})
		sd := float64(es.Expected.MeanStd)
		if !math.IsNaN(sd) {
			p.add(series{label: "±2σ ergodic", kind: kindHLine, class: "ref", y: []float64{m - 2*sd}})
			p.add(series{kind: kindHLine, class: "ref", y: []float64{m + 2*sd}})
		}
		means := make([]float64, len(es.Realisations))
		for i, st := range es.Realisations {
			means[i] = float64(st.Mean)
		}
		p.add(series{label: "Realisation", kind: kindLineMarkers, class: "sim", x: x, y: means})
		p.xMin, p.xMax = 0.5, float64(len(x))+0.5
		rs.Figures = append(rs.Figures, figure{Name: p.name, Title: "Mean per realisation", SVG: p.svg(),
			Caption: fmt.Sprintf("Mean of the %s per realisation against the reference mean; %s; dashed: ±2σ of the ergodic fluctuation of an unconditional realisation.", strings.ToLower(ensembleLabel(es.Name)), rule)})
	}
	{
		p := newPlot("realisation-variances", "Variance per realisation", "Realisation", "Variance"+unitsOf(squared(r.Units)))
		n := r.Summary.Realisations
		x := realisationIndex(n)
		added := false
		for _, c := range []struct{ name, cls, label, exp string }{
			{PointSimulations, "sim", "Points", "Expected, points"},
			{BlockSimulations, "sim2", "Blocks", "Expected, blocks"},
		} {
			es := r.ensemble(c.name)
			if es == nil {
				continue
			}
			v := make([]float64, len(es.Realisations))
			for i, st := range es.Realisations {
				v[i] = float64(st.Variance)
			}
			p.add(series{label: c.exp, kind: kindHLine, class: "exp-" + c.cls, y: []float64{float64(es.Expected.Variance)}})
			p.add(series{label: c.label, kind: kindLineMarkers, class: c.cls, x: x, y: v})
			added = true
		}
		if added {
			p.add(series{label: "Reference variance", kind: kindHLine, class: "model", y: []float64{float64(r.Reference.Variance)}})
			p.xMin, p.xMax = 0.5, float64(n)+0.5
			p.yFromZero = true
			rs.Figures = append(rs.Figures, figure{Name: p.name, Title: "Variance per realisation", SVG: p.svg(),
				Caption: fmt.Sprintf("Spatial variance of each realisation in data units; block/point variance ratio %s (model, Gaussian units: %s).",
					num(r.Support.Ratio), num(r.Support.ExpectedGaussianRatio))})
		}
	}
	if len(rs.Figures) > 0 {
		out = append(out, rs)
	}
	return out
}

func qqFigure(name, title string, d *DistributionReproduction, xl, yl, theData string) figure {
	p := newPlot(name, title, xl, yl)
	for i, s := range d.Realisations {
		p.add(series{label: label(i == 0, "Realisations"), class: "real", x: d.ReferenceQuantiles, y: s})
	}
	p.add(series{label: "Average", class: "mean", x: d.ReferenceQuantiles, y: d.MeanQuantiles})
	p.add(series{label: "Data", kind: kindMarkers, class: "data", x: d.ReferenceQuantiles, y: thin(d.DataQuantiles, 5)})
	p.add(series{label: "1:1", class: "model", x: d.ReferenceQuantiles, y: d.ReferenceQuantiles})
	// Equal axes.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range append(slicesOf(d.Realisations), d.ReferenceQuantiles, d.DataQuantiles) {
		for _, v := range s {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	pad := (hi - lo) * 0.04
	p.xMin, p.xMax, p.yMin, p.yMax = lo-pad, hi+pad, lo-pad, hi+pad
	return figure{Name: name, Title: title, SVG: p.svg(),
		Caption: "Quantiles p = 0.01 … 0.99 of each realisation (thin) and of " + theData + " (dots) against the reference quantiles; on the diagonal the distribution is reproduced."}
}

func slicesOf(s []Series) []Series { return s }

// thin keeps every k-th value (and NaN elsewhere), for markers.
func thin(s Series, k int) Series {
	out := make(Series, len(s))
	for i := range s {
		if (i+1)%k == 0 {
			out[i] = s[i]
		} else {
			out[i] = math.NaN()
		}
	}
	return out
}

func label(show bool, s string) string {
	if show {
		return s
	}
	return ""
}

// direction formats a unit vector, without negative zeros.
func direction(d [3]float64) string {
	var parts []string
	for _, c := range d {
		c = math.Round(c*100) / 100
		if c == 0 {
			c = 0 // drop the sign of −0
		}
		parts = append(parts, strconv.FormatFloat(c, 'f', 2, 64))
	}
	return strings.Join(parts, ", ")
}

func first(x []int) int {
	if len(x) == 0 {
		return 0
	}
	return x[0]
}

func squared(u string) string {
	if u == "" {
		return ""
	}
	return "(" + u + ")²"
}

// ensemble returns the statistics of the named ensemble, or nil.
func (r *Report) ensemble(name string) *EnsembleStats {
	for i := range r.Ensembles {
		if r.Ensembles[i].Name == name {
			return &r.Ensembles[i]
		}
	}
	return nil
}
