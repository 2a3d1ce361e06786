package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

// WriteJSON writes the report as an indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: json: %w", err)
	}
	return nil
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and inline SVG plots, no script and no external resource, with every user
// text escaped. The markup is also well-formed XML.
func (r *Report) WriteHTML(w io.Writer) error {
	v := view{Report: r, Sections: r.sections()}
	if err := page.Execute(w, v); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// view is the data of the page template.
type view struct {
	*Report
	Sections []section
}

// ensembleLabel is the display name of an ensemble.
func ensembleLabel(name string) string {
	switch name {
	case PointSimulations:
		return "Points"
	case PointSimulationsNormalScore:
		return "Points, normal scores"
	case BlockSimulations:
		return "Blocks"
	case BlockSimulationsNormalScore:
		return "Blocks, normal scores"
	}
	return strings.ReplaceAll(name, "_", " ")
}

// num formats a number with four significant digits, "n/a" when it is not
// available.
func num(x Number) string {
	v := float64(x)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e4 && a < 1e15 {
		return group(int64(math.Round(v)))
	}
	if a < 1e-3 {
		return strconv.FormatFloat(v, 'e', 3, 64)
	}
	dec := max(0, 3-int(math.Floor(math.Log10(a))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// group formats an integer with thin spaces between groups of three digits.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u2009")
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// zfmt formats a z-score with two decimals, "n/a" when it is not available.
func zfmt(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// pct formats a fraction as a percentage.
func pct(x Number) string {
	v := float64(x)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64) + " %"
}

var funcs = template.FuncMap{
	"num":  num,
	"pct":  pct,
	"numf": func(x float64) string { return num(Number(x)) },
	"pctf": func(x float64) string { return pct(Number(x)) },
	// svg marks the plots built by this package as safe markup: every text
	// in them is escaped by the plot helper.
	"svg": func(s string) template.HTML { return template.HTML(s) },
	"verdict": func(v Verdict) string {
		if v == "" {
			return "n/a"
		}
		return string(v)
	},
	// q returns the quantile at probability p of a series over probabilities.
	"q": func(s Series, p float64) Number {
		for i, pr := range probabilities {
			if math.Abs(pr-p) < 1e-9 && i < len(s) {
				return Number(s[i])
			}
		}
		return nan()
	},
	"inc": func(i int) int { return i + 1 },
	// zf formats a z-score with two decimals.
	"zf":       func(x Number) string { return zfmt(float64(x)) },
	"sigmaA":   func() float64 { return AcceptableSigmas },
	"float":    func(x Number) float64 { return float64(x) },
	"sigmaM":   func() float64 { return MarginalSigmas },
	"enslabel": ensembleLabel,
	"lower":    strings.ToLower,
	"int":      func(n int) string { return group(int64(n)) },
	"unit": func(u string) string {
		if u == "" {
			return ""
		}
		return " " + u
	},
	"triple": func(a [3]float64) string {
		return fmt.Sprintf("%s × %s × %s", num(Number(a[0])), num(Number(a[1])), num(Number(a[2])))
	},
	"itriple": func(a [3]int) string { return fmt.Sprintf("%d × %d × %d", a[0], a[1], a[2]) },
	"probs":   func() []float64 { return []float64{0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95} },
	"pname":   func(p float64) string { return "P" + strconv.Itoa(int(math.Round(100*p))) },
}

var page = template.Must(template.New("page").Funcs(funcs).Parse(pageTemplate))

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>` + css + `</style>
</head>
<body>
<header class="top">
<div class="wrap">
<p class="kicker">Simulation validation report</p>
<h1>{{.Title}}</h1>
{{- if .Details}}
<dl class="details">
{{- range .Details}}
<div><dt>{{.Label}}</dt><dd>{{.Value}}</dd></div>
{{- end}}
</dl>
{{- end}}
</div>
</header>
<main class="wrap">
<section class="cards" id="summary">
{{- with .Summary}}
<div class="card verdict v-{{verdict .Verdict}}">
<p class="label">Mean reproduction</p>
<p class="badge">{{verdict .Verdict}}</p>
{{- with .MeanCheck}}
{{- if eq .Rule "fluctuation"}}
<p class="big">z = {{zf .Z}}</p>
<p class="small">m<sub>sim</sub> − m<sub>ref</sub> = {{num .Difference}}{{unit $.Units}} against s = {{num .Spread}}{{unit $.Units}}, the standard deviation of the {{$.Summary.Realisations}} realisation means</p>
<p class="small">rule: acceptable (consistent with the fluctuation) when |z| ≤ {{numf sigmaA}}, marginal when |z| ≤ {{numf sigmaM}}, failing beyond</p>
<p class="small">relative difference {{pct .RelativeDifference}}; ergodic σ of an unconditional realisation mean ≈ {{num $.Summary.ExpectedMeanStd}}{{unit $.Units}}</p>
{{- else if eq .Rule "relative"}}
<p class="big">{{pct .RelativeDifference}}</p>
<p class="small">cannot be judged by fluctuation: {{.Reason}}</p>
<p class="small">rule: relative difference |m<sub>sim</sub> − m<sub>ref</sub>| / |m<sub>ref</sub>| acceptable ≤ {{pctf $.Summary.Thresholds.Acceptable}}, marginal ≤ {{pctf $.Summary.Thresholds.Marginal}}</p>
<p class="small">m<sub>sim</sub> − m<sub>ref</sub> = {{num .Difference}}{{unit $.Units}}; ergodic σ of an unconditional realisation mean ≈ {{num $.Summary.ExpectedMeanStd}}{{unit $.Units}}</p>
{{- else}}
<p class="big">n/a</p>
<p class="small">no simulation in data units</p>
{{- end}}
{{- end}}
<p class="small">realisations: <span class="pill v-acceptable">{{index .RealisationVerdicts "acceptable"}} acceptable</span> <span class="pill v-marginal">{{index .RealisationVerdicts "marginal"}} marginal</span> <span class="pill v-failing">{{index .RealisationVerdicts "failing"}} failing</span></p>
</div>
{{- with .VarianceCheck}}{{if .Rule}}
<div class="card verdict v-{{verdict .Verdict}}">
<p class="label">Variance reproduction</p>
<p class="badge">{{verdict .Verdict}}</p>
{{- if eq .Rule "fluctuation"}}
<p class="big">z = {{zf .Z}}</p>
<p class="small">average variance of the {{lower (enslabel .Ensemble)}} {{num .Value}} against the expected {{num .Target}}, s = {{num .Spread}}, the standard deviation of the {{$.Summary.Realisations}} realisation variances</p>
<p class="small">rule: acceptable when |z| ≤ {{numf sigmaA}}, marginal when |z| ≤ {{numf sigmaM}}, failing beyond; relative difference {{pct .RelativeDifference}}</p>
{{- else}}
<p class="big">{{pct .RelativeDifference}}</p>
<p class="small">cannot be judged by fluctuation: {{.Reason}}</p>
<p class="small">average variance of the {{lower (enslabel .Ensemble)}} {{num .Value}} against the expected {{num .Target}}; rule: relative difference acceptable ≤ {{pctf $.Summary.Thresholds.Acceptable}}, marginal ≤ {{pctf $.Summary.Thresholds.Marginal}}</p>
{{- end}}
</div>
{{- end}}{{end}}
{{- with .QuantileCheck}}{{if .Rule}}
<div class="card verdict v-{{verdict .Verdict}}">
<p class="label">Quantile reproduction</p>
<p class="badge">{{verdict .Verdict}}</p>
{{- if eq .Rule "fluctuation"}}
<p class="big">z = {{zf .Z}}</p>
<p class="small">worst of the quantiles P5 … P95 of the {{lower (enslabel .Ensemble)}}: {{pname (float .Probability)}} averages {{num .Value}}{{unit $.Units}} against the reference's {{num .Target}}{{unit $.Units}}, s = {{num .Spread}}{{unit $.Units}}, the standard deviation of the realisations' {{pname (float .Probability)}}</p>
<p class="small">rule: acceptable when |z| ≤ {{numf sigmaA}}, marginal when |z| ≤ {{numf sigmaM}}, failing beyond</p>
{{- else}}
<p class="big">{{pct .RelativeDifference}}</p>
<p class="small">cannot be judged by fluctuation: {{.Reason}}</p>
<p class="small">worst quantile {{pname (float .Probability)}}: {{num .Value}} against the reference's {{num .Target}}; rule: relative difference acceptable ≤ {{pctf $.Summary.Thresholds.Acceptable}}, marginal ≤ {{pctf $.Summary.Thresholds.Marginal}}</p>
{{- end}}
</div>
{{- end}}{{end}}
<div class="card">
<p class="label">Reference mean</p>
<p class="big">{{num .ReferenceMean}}<span class="unit">{{unit $.Units}}</span></p>
<p class="small">mean of the reference distribution; variance {{num $.Reference.Variance}}</p>
</div>
<div class="card">
<p class="label">Simulated mean</p>
<p class="big">{{num .Mean}}<span class="unit">{{unit $.Units}}</span></p>
<p class="small">average over {{.Realisations}} realisations ({{lower (enslabel .MeanEnsemble)}})</p>
</div>
<div class="card">
<p class="label">CDF reproduction</p>
<p class="big">{{num .KolmogorovMean}}</p>
<p class="small">mean Kolmogorov distance of the point realisations to the reference CDF; largest {{num .KolmogorovMax}}</p>
</div>
{{- end}}
<div class="card">
<p class="label">Data</p>
<p class="big">{{int .Data.Count}}</p>
<p class="small">{{if .Data.Declustered}}declustered{{else}}equal-weight{{end}} mean {{num .Data.Mean}}, variance {{num .Data.Variance}}</p>
</div>
<div class="card">
<p class="label">Support effect</p>
<p class="big">{{num .Support.Ratio}}</p>
<p class="small">block / point variance in data units; normal scores {{num .Support.GaussianRatio}}, model C̄(V,V) {{num .Support.ExpectedGaussianRatio}}</p>
</div>
{{- range .Ensembles}}{{if eq .Name "point_simulations_normal_score"}}
<div class="card">
<p class="label">Normal scores</p>
<p class="big">{{num .Average.Variance}}</p>
<p class="small">average variance of the point normal scores (expected {{num .Expected.Variance}}); average mean {{num .Average.Mean}} (expected 0 ± {{num .Expected.MeanStd}})</p>
</div>
{{- end}}{{end}}
<div class="card">
<p class="label">Ergodic fluctuation</p>
<p class="big">{{num .Ergodic.Sigma2}}</p>
<p class="small">σ̄²(D,D), variance of a realisation's Gaussian mean over {{num .Ergodic.Volume}} {{.LengthUnit}}³</p>
</div>
<div class="card">
<p class="label">Domain</p>
<p class="big">{{int .Grid.Cells}}</p>
<p class="small">cells of {{triple .Grid.CellSize}} {{.LengthUnit}}, grid {{itriple .Grid.Size}}, discretisation {{itriple .Grid.Discretisation}}</p>
</div>
</section>
{{- if .Warnings}}
<section class="warnings">
<h2>Warnings</h2>
<ul>
{{- range .Warnings}}
<li>{{.}}</li>
{{- end}}
</ul>
</section>
{{- end}}
{{- range .Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{- if .Lead}}
<p class="lead">{{.Lead}}</p>
{{- end}}
<div class="plots">
{{- range .Figures}}
<figure class="fig" id="fig-{{.Name}}">
<figcaption><h3>{{.Title}}</h3></figcaption>
{{svg .SVG}}
<p class="caption">{{.Caption}}</p>
</figure>
{{- end}}
</div>
</section>
{{- end}}
<section id="statistics">
<h2>Statistics</h2>
<p class="lead">Data, reference and the averages over realisations of each ensemble (Gaussian ensembles in normal-score units); s is the standard deviation over the realisations.</p>
<div class="table-wrap">
<table>
<thead><tr><th></th><th>Data{{if .Data.Declustered}} (declustered){{end}}</th><th>Reference</th>{{range .Ensembles}}<th>{{enslabel .Name}}</th>{{end}}</tr></thead>
<tbody>
<tr><th>Mean</th><td>{{num .Data.Mean}}</td><td>{{num .Reference.Mean}}</td>{{range .Ensembles}}<td>{{num .Average.Mean}}</td>{{end}}</tr>
<tr class="exp"><th>expected</th><td></td><td></td>{{range .Ensembles}}<td>{{num .Expected.Mean}} ± {{num .Expected.MeanStd}}</td>{{end}}</tr>
<tr class="exp"><th>s of the means</th><td></td><td></td>{{range .Ensembles}}<td>{{num .Spread.Mean}}</td>{{end}}</tr>
<tr><th>Variance</th><td>{{num .Data.Variance}}</td><td>{{num .Reference.Variance}}</td>{{range .Ensembles}}<td>{{num .Average.Variance}}</td>{{end}}</tr>
<tr class="exp"><th>expected</th><td></td><td></td>{{range .Ensembles}}<td>{{num .Expected.Variance}}</td>{{end}}</tr>
<tr class="exp"><th>s of the variances</th><td></td><td></td>{{range .Ensembles}}<td>{{num .Spread.Variance}}</td>{{end}}</tr>
{{- $root := .}}
{{- range probs}}
{{- $p := .}}
<tr><th>{{pname $p}}</th><td>{{num (q $root.Data.Quantiles $p)}}</td><td>{{num (q $root.Reference.Quantiles $p)}}</td>{{range $root.Ensembles}}<td>{{num (q .Average.Quantiles $p)}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
</div>
{{- range .Ensembles}}
<details>
<summary>{{enslabel .Name}}: every realisation</summary>
<div class="table-wrap">
<table>
<thead><tr><th>#</th><th>Mean</th><th>Variance</th><th>Min</th><th>P10</th><th>P50</th><th>P90</th><th>Max</th><th>Kolmogorov</th>{{if eq .Space "data"}}<th>z of the mean</th><th>Rel. diff.</th><th>Verdict</th>{{end}}</tr></thead>
<tbody>
{{- $space := .Space}}
{{- range $i, $r := .Realisations}}
<tr><th>{{inc $i}}</th><td>{{num .Mean}}</td><td>{{num .Variance}}</td><td>{{num .Min}}</td><td>{{num (q .Quantiles 0.1)}}</td><td>{{num (q .Quantiles 0.5)}}</td><td>{{num (q .Quantiles 0.9)}}</td><td>{{num .Max}}</td><td>{{num .Kolmogorov}}</td>{{if eq $space "data"}}<td>{{zf .Z}}</td><td>{{pct .RelativeDifference}}</td><td><span class="pill v-{{verdict .Verdict}}">{{verdict .Verdict}}</span></td>{{end}}</tr>
{{- end}}
</tbody>
</table>
</div>
</details>
{{- end}}
</section>
<section id="definitions">
<h2>Definitions</h2>
<dl class="defs">
{{- range .Definitions}}
<dt>{{.Term}}</dt><dd>{{.Text}}</dd>
{{- end}}
</dl>
</section>
</main>
<footer class="wrap">Self-contained report: inline styles and graphics, no scripts or external resources.</footer>
</body>
</html>
`
