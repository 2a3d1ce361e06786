package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The SVG plots are drawn by a small helper: a plot has axes with ticks,
// labels and units, a legend row, and series drawn in CSS classes of the
// page (thin semi-transparent lines for realisations, bold lines for the
// model and the data). Everything is escaped, so the markup is also
// well-formed XML.

// Series kinds.
const (
	kindLine        = iota
	kindStep        // x are class edges (len(y)+1), y class values
	kindMarkers     // circles only
	kindBars        // x are class edges, bars from the axis
	kindLineMarkers // a line with circles
	kindHLine       // horizontal line at y[0] across the plot
	kindBand        // horizontal band between y[0] and y[1]
)

type series struct {
	label string
	kind  int
	class string
	x, y  []float64
	band  bool // drawn in the count band below the plot area (kindBars)
}

type plot struct {
	name, title    string
	xLabel, yLabel string
	bandLabel      string // label of the count band's axis
	width, height  float64
	// xMin … yMax are the least extent of the axes (NaN: automatic): an
	// axis still grows to hold every plotted value outside them.
	xMin, xMax float64
	yMin, yMax float64
	yFromZero  bool
	series     []series
	note       string // shown in the plot area when there is no data
}

func newPlot(name, title, xLabel, yLabel string) *plot {
	return &plot{name: name, title: title, xLabel: xLabel, yLabel: yLabel, width: 500, height: 340,
		xMin: math.NaN(), xMax: math.NaN(), yMin: math.NaN(), yMax: math.NaN()}
}

func (p *plot) add(s series) { p.series = append(p.series, s) }

const (
	marginLeft   = 70.0
	marginRight  = 16.0
	marginRight2 = 60.0
	marginBottom = 52.0
	// bandHeight is the height of the count band below the plot area,
	// bandGap the space between them.
	bandHeight = 64.0
	bandGap    = 10.0
	legendTop  = 8.0  // top of the first legend row
	legendRow  = 19.0 // height of a legend row
	legendGap  = 12.0 // between the legend and the plot area
	// legendChar is the width of a legend character at the legend's font
	// size (an estimate; the layout leaves room for wide glyphs).
	legendChar = 6.8
)

// span is a numeric axis range.
type span struct{ lo, hi float64 }

func (s span) scale(v, a, b float64) float64 { return a + (v-s.lo)/(s.hi-s.lo)*(b-a) }

// ranges computes the axis ranges from the data of the series: y for the
// plot area, y2 (from 0) for the count band. Every finite plotted value is
// inside its axis range, fixed limits included.
func (p *plot) ranges() (x, y, y2 span) {
	x = span{math.Inf(1), math.Inf(-1)}
	y, y2 = x, span{0, math.Inf(-1)}
	grow := func(s *span, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
		}
	}
	for _, s := range p.series {
		if s.kind != kindHLine && s.kind != kindBand {
			for i, v := range s.x {
				// A polyline's or a marker's x counts only where it is
				// drawn (where y is finite); class edges always.
				if s.kind == kindStep || s.kind == kindBars || (i < len(s.y) && !math.IsNaN(s.y[i]) && !math.IsInf(s.y[i], 0)) {
					grow(&x, v)
				}
			}
		}
		for _, v := range s.y {
			if s.band {
				grow(&y2, v)
			} else {
				grow(&y, v)
			}
		}
		if s.kind == kindBars && !s.band {
			grow(&y, 0)
		}
	}
	if p.yFromZero {
		grow(&y, 0)
	}
	pad := func(s *span, fixLo, fixHi float64) {
		padLo, padHi := math.IsNaN(fixLo) || s.lo < fixLo, math.IsNaN(fixHi) || s.hi > fixHi
		if !math.IsNaN(fixLo) && !(s.lo < fixLo) {
			s.lo = fixLo
		}
		if !math.IsNaN(fixHi) && !(s.hi > fixHi) {
			s.hi = fixHi
		}
		if math.IsInf(s.lo, 0) || math.IsInf(s.hi, 0) {
			s.lo, s.hi = 0, 1
		}
		if s.hi <= s.lo {
			w := math.Max(math.Abs(s.lo)*0.05, 1e-9)
			s.lo, s.hi = s.lo-w, s.hi+w
			return
		}
		d := (s.hi - s.lo) * 0.04
		if padHi {
			s.hi += d
		}
		if padLo && !(p.yFromZero && s.lo == 0) {
			s.lo -= d
		}
	}
	pad(&x, p.xMin, p.xMax)
	pad(&y, p.yMin, p.yMax)
	if math.IsInf(y2.hi, 0) || y2.hi <= 0 {
		y2.hi = 1
	}
	y2.hi *= 1.08
	return x, y, y2
}

// ticks returns about n round tick values covering s, and the decimals to
// print them with.
func ticks(s span, n int) ([]float64, int) {
	raw := (s.hi - s.lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	dec := 0
	for dec < 12 && math.Abs(step*math.Pow(10, float64(dec))-math.Round(step*math.Pow(10, float64(dec)))) > 1e-6 {
		dec++
	}
	var t []float64
	for v := math.Ceil(s.lo/step-1e-9) * step; v <= s.hi+step*1e-9; v += step {
		t = append(t, v)
	}
	return t, dec
}

func tickLabel(v float64, dec int) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e6 || a < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// svg renders the plot as an inline <svg> element. A plot with count
// series (band) draws them in a band of their own below the plot area, with
// their own frame and axis, so that bars never hide the lines.
func (p *plot) svg() string {
	var b strings.Builder
	w, h := p.width, p.height
	hasBand := false
	for _, s := range p.series {
		hasBand = hasBand || s.band
	}
	mr := marginRight
	if hasBand {
		mr = marginRight2
		h += bandHeight + bandGap
	}
	x0, x1 := marginLeft, w-mr
	items, rows := p.legendLayout(x0, x1)
	yb, y1 := h-marginBottom, legendTop+float64(rows)*legendRow+legendGap // bottom of the frames, top in pixels
	y0 := yb                                                              // bottom of the plot area
	bTop := yb                                                            // top of the count band
	if hasBand {
		bTop = yb - bandHeight
		y0 = bTop - bandGap
	}
	xs, ys, y2s := p.ranges()
	X := func(v float64) float64 { return xs.scale(v, x0, x1) }
	Y := func(v float64) float64 { return ys.scale(v, y0, y1) }
	Y2 := func(v float64) float64 { return y2s.scale(v, yb, bTop) }
	esc := html.EscapeString
	id := "clip-" + p.name
	bandID := id + "-band"

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="%s" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`,
		esc(p.name), w, h, w, h, esc(p.title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(p.title))
	fmt.Fprintf(&b, `<defs><clipPath id="%s"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`,
		esc(id), f1(x0), f1(y1), f1(x1-x0), f1(y0-y1))
	if hasBand {
		fmt.Fprintf(&b, `<clipPath id="%s"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`,
			esc(bandID), f1(x0), f1(bTop), f1(x1-x0), f1(yb-bTop))
	}
	b.WriteString(`</defs>`)
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(y1), f1(x1-x0), f1(y0-y1))
	if hasBand {
		fmt.Fprintf(&b, `<rect class="frame band" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(bTop), f1(x1-x0), f1(yb-bTop))
	}

	// Grid and ticks.
	xt, xd := ticks(xs, 6)
	yt, yd := ticks(ys, 5)
	b.WriteString(`<g class="grid">`)
	for _, v := range xt {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(X(v)), f1(y0), f1(X(v)), f1(y1))
		if hasBand {
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(X(v)), f1(yb), f1(X(v)), f1(bTop))
		}
	}
	for _, v := range yt {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x0), f1(Y(v)), f1(x1), f1(Y(v)))
	}
	b.WriteString(`</g><g class="ticks">`)
	for _, v := range xt {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, f1(X(v)), f1(yb+17), esc(tickLabel(v, xd)))
	}
	for _, v := range yt {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, f1(x0-6), f1(Y(v)+4), esc(tickLabel(v, yd)))
	}
	if hasBand {
		rt, rd := ticks(span{0, y2s.hi / 1.08}, 2)
		for _, v := range rt {
			fmt.Fprintf(&b, `<text class="right" x="%s" y="%s" text-anchor="start">%s</text>`, f1(x1+6), f1(Y2(v)+4), esc(tickLabel(v, rd)))
		}
	}
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<text class="axis-label" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1(h-12), esc(p.xLabel))
	fmt.Fprintf(&b, `<text class="axis-label" transform="translate(17 %s) rotate(-90)" text-anchor="middle">%s</text>`, f1((y0+y1)/2), esc(p.yLabel))
	if hasBand {
		fmt.Fprintf(&b, `<text class="axis-label right" transform="translate(%s %s) rotate(90)" text-anchor="middle">%s</text>`, f1(w-12), f1((yb+bTop)/2), esc(p.bandLabel))
	}

	// Data, clipped to the plot area (bars and bands first) and to the
	// count band.
	fmt.Fprintf(&b, `<g clip-path="url(#%s)">`, esc(id))
	for pass := range 2 {
		for _, s := range p.series {
			back := s.kind == kindBars || s.kind == kindBand
			if s.band || back != (pass == 0) {
				continue
			}
			p.drawSeries(&b, s, X, Y, x0, x1, y0)
		}
	}
	b.WriteString(`</g>`)
	if hasBand {
		fmt.Fprintf(&b, `<g clip-path="url(#%s)">`, esc(bandID))
		for _, s := range p.series {
			if s.band {
				p.drawSeries(&b, s, X, Y2, x0, x1, yb)
			}
		}
		b.WriteString(`</g>`)
	}
	if p.note != "" {
		fmt.Fprintf(&b, `<text class="note" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((x0+x1)/2), f1((y0+y1)/2), esc(p.note))
	}
	p.legend(&b, items)
	b.WriteString(`</svg>`)
	return b.String()
}

func (p *plot) drawSeries(b *strings.Builder, s series, X, Y func(float64) float64, x0, x1, y0 float64) {
	esc := html.EscapeString
	cls := esc(s.class)
	switch s.kind {
	case kindLine, kindLineMarkers:
		if d := pathData(s.x, s.y, X, Y); d != "" {
			fmt.Fprintf(b, `<path class="%s" d="%s"/>`, cls, d)
		}
		if s.kind == kindLineMarkers {
			p.markers(b, s, X, Y)
		}
	case kindMarkers:
		p.markers(b, s, X, Y)
	case kindStep:
		var d strings.Builder
		pen := false
		for i, v := range s.y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				pen = false
				continue
			}
			if !pen {
				fmt.Fprintf(&d, "M%s %s", f1(X(s.x[i])), f1(Y(v)))
				pen = true
			} else {
				fmt.Fprintf(&d, "L%s %s", f1(X(s.x[i])), f1(Y(v)))
			}
			fmt.Fprintf(&d, "L%s %s", f1(X(s.x[i+1])), f1(Y(v)))
		}
		if d.Len() > 0 {
			fmt.Fprintf(b, `<path class="%s" d="%s"/>`, cls, d.String())
		}
	case kindBars:
		// One path of rectangles, so that the data are a path too.
		var d strings.Builder
		base := Y(0)
		if s.band {
			base = y0
		}
		for i, v := range s.y {
			if math.IsNaN(v) || v == 0 {
				continue
			}
			xa, xb := X(s.x[i]), X(s.x[i+1])
			gap := math.Min(1, (xb-xa)*0.1)
			fmt.Fprintf(&d, "M%s %sH%sV%sH%sZ", f1(xa+gap), f1(base), f1(xb-gap), f1(Y(v)), f1(xa+gap))
		}
		if d.Len() > 0 {
			fmt.Fprintf(b, `<path class="%s" d="%s"/>`, cls, d.String())
		}
	case kindHLine:
		if len(s.y) > 0 && !math.IsNaN(s.y[0]) {
			fmt.Fprintf(b, `<path class="%s" d="M%s %sH%s"/>`, cls, f1(x0), f1(Y(s.y[0])), f1(x1))
		}
	case kindBand:
		if len(s.y) > 1 && !math.IsNaN(s.y[0]) && !math.IsNaN(s.y[1]) {
			fmt.Fprintf(b, `<path class="%s" d="M%s %sH%sV%sH%sZ"/>`, cls, f1(x0), f1(Y(s.y[0])), f1(x1), f1(Y(s.y[1])), f1(x0))
		}
	}
}

func (p *plot) markers(b *strings.Builder, s series, X, Y func(float64) float64) {
	fmt.Fprintf(b, `<g class="%s">`, html.EscapeString("m-"+s.class))
	for i, v := range s.y {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(s.x[i]) {
			continue
		}
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3"/>`, f1(X(s.x[i])), f1(Y(v)))
	}
	b.WriteString(`</g>`)
}

// pathData returns the d attribute of a polyline through the finite points,
// broken where a value is missing.
func pathData(x, y []float64, X, Y func(float64) float64) string {
	var d strings.Builder
	pen := false
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) || math.IsNaN(x[i]) {
			pen = false
			continue
		}
		c := 'L'
		if !pen {
			c = 'M'
			pen = true
		}
		fmt.Fprintf(&d, "%c%s %s", c, f1(X(x[i])), f1(Y(y[i])))
	}
	return d.String()
}

// legendItem is a series' place in the legend.
type legendItem struct {
	s    series
	x, y float64
}

// legendLayout places the labelled series in rows above the plot area,
// wrapping when a row is full; it returns the items and the number of rows.
func (p *plot) legendLayout(x0, x1 float64) ([]legendItem, int) {
	var items []legendItem
	seen := map[string]bool{}
	x, row := x0, 0
	for _, s := range p.series {
		if s.label == "" || seen[s.label] {
			continue
		}
		seen[s.label] = true
		w := 24 + legendChar*float64(len([]rune(s.label)))
		if x > x0 && x+w > x1 {
			x, row = x0, row+1
		}
		items = append(items, legendItem{s: s, x: x, y: legendTop + float64(row)*legendRow + legendRow/2})
		x += w + 14
	}
	if len(items) == 0 {
		return nil, 0
	}
	return items, row + 1
}

// legend draws the legend items.
func (p *plot) legend(b *strings.Builder, items []legendItem) {
	b.WriteString(`<g class="legend">`)
	for _, it := range items {
		s, x, y := it.s, it.x, it.y
		cls := html.EscapeString(s.class)
		switch s.kind {
		case kindBars, kindBand:
			fmt.Fprintf(b, `<rect class="%s" x="%s" y="%s" width="16" height="11"/>`, cls, f1(x), f1(y-5.5))
		case kindMarkers:
			fmt.Fprintf(b, `<g class="m-%s"><circle cx="%s" cy="%s" r="3.5"/></g>`, cls, f1(x+8), f1(y))
		default:
			fmt.Fprintf(b, `<path class="%s legend-line" d="M%s %sH%s"/>`, cls, f1(x), f1(y), f1(x+18))
			if s.kind == kindLineMarkers {
				fmt.Fprintf(b, `<g class="m-%s"><circle cx="%s" cy="%s" r="3"/></g>`, cls, f1(x+9), f1(y))
			}
		}
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, f1(x+24), f1(y+4.5), html.EscapeString(s.label))
	}
	b.WriteString(`</g>`)
}
