package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
)

// frameRect is a rectangle of an SVG plot.
type frameRect struct{ x, y, w, h float64 }

func (r frameRect) contains(x, y float64) bool {
	const eps = 0.051 // coordinates are printed with one decimal
	return x >= r.x-eps && x <= r.x+r.w+eps && y >= r.y-eps && y <= r.y+r.h+eps
}

// plotGeometry is what checkFrames found in one plot.
type plotGeometry struct {
	frames  []frameRect          // the drawn frames (rect class "frame…")
	clips   map[string]frameRect // clipPath id → its rectangle
	points  int                  // data coordinates checked
	outside []string             // data coordinates outside their clip rectangle
	grouped int                  // data elements inside a clipped group
}

// checkFrames parses every <svg data-plot> of a page and, for every path,
// circle and rect drawn inside a clipped data group, checks that each of its
// coordinates lies inside the clip rectangle, which must itself be one of
// the plot's drawn frames.
func checkFrames(t *testing.T, page string) map[string]*plotGeometry {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = true
	plots := map[string]*plotGeometry{}
	var cur *plotGeometry
	var curName string
	depth, plotDepth, clipDepth := 0, -1, -1
	clipID, pendingClip := "", ""
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	fl := func(e xml.StartElement, name string) float64 {
		v, err := strconv.ParseFloat(attr(e, name), 64)
		require.NoError(t, err, "attribute %s of <%s>", name, e.Name.Local)
		return v
	}
	check := func(what string, x, y float64) {
		cur.points++
		r, ok := cur.clips[clipID]
		if !ok || !r.contains(x, y) {
			cur.outside = append(cur.outside, what+" ("+strconv.FormatFloat(x, 'f', 1, 64)+", "+strconv.FormatFloat(y, 'f', 1, 64)+")")
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			if e.Name.Local == "svg" && attr(e, "data-plot") != "" {
				curName = attr(e, "data-plot")
				cur = &plotGeometry{clips: map[string]frameRect{}}
				plots[curName] = cur
				plotDepth = depth
				continue
			}
			if cur == nil {
				continue
			}
			switch e.Name.Local {
			case "clipPath":
				pendingClip = attr(e, "id")
			case "rect":
				r := frameRect{fl(e, "x"), fl(e, "y"), fl(e, "width"), fl(e, "height")}
				switch {
				case pendingClip != "":
					cur.clips[pendingClip] = r
				case strings.HasPrefix(attr(e, "class"), "frame"):
					cur.frames = append(cur.frames, r)
				case clipDepth > 0:
					cur.grouped++
					check("rect", r.x, r.y)
					check("rect", r.x+r.w, r.y+r.h)
				}
			case "g":
				if cp := attr(e, "clip-path"); cp != "" {
					clipID = strings.TrimSuffix(strings.TrimPrefix(cp, "url(#"), ")")
					clipDepth = depth
					fr, ok := cur.clips[clipID]
					assert.True(t, ok, "plot %s: clip %s undefined", curName, clipID)
					found := false
					for _, f := range cur.frames {
						found = found || f == fr
					}
					assert.True(t, found, "plot %s: clip %s is not a drawn frame", curName, clipID)
				}
			case "circle":
				if clipDepth > 0 {
					cur.grouped++
					check("circle", fl(e, "cx"), fl(e, "cy"))
				}
			case "path":
				if clipDepth > 0 {
					cur.grouped++
					for _, p := range pathPoints(t, attr(e, "d")) {
						check("path."+attr(e, "class"), p[0], p[1])
					}
				}
			}
		case xml.EndElement:
			switch {
			case e.Name.Local == "clipPath":
				pendingClip = ""
			case depth == clipDepth:
				clipDepth, clipID = -1, ""
			case depth == plotDepth:
				cur, plotDepth = nil, -1
			}
			depth--
		}
	}
	return plots
}

// pathPoints returns the absolute points of a path of M, L, H, V and Z
// commands (the only ones the plots use).
func pathPoints(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var pts [][2]float64
	var x, y float64
	fields := strings.FieldsFunc(d, func(r rune) bool { return r == ' ' || r == ',' })
	var toks []string
	for _, f := range fields {
		// Split "M12.5" or "12.5L3" into commands and numbers.
		start := 0
		for i, r := range f {
			if unicode.IsLetter(r) && r != 'e' {
				if i > start {
					toks = append(toks, f[start:i])
				}
				toks = append(toks, string(r))
				start = i + 1
			}
		}
		if start < len(f) {
			toks = append(toks, f[start:])
		}
	}
	num := func(i int) float64 {
		require.Less(t, i, len(toks), "path %q ends early", d)
		v, err := strconv.ParseFloat(toks[i], 64)
		require.NoError(t, err, "path %q", d)
		return v
	}
	for i := 0; i < len(toks); {
		switch toks[i] {
		case "M", "L":
			x, y = num(i+1), num(i+2)
			i += 3
		case "H":
			x = num(i + 1)
			i += 2
		case "V":
			y = num(i + 1)
			i += 2
		case "Z":
			i++
			continue
		default:
			require.Failf(t, "unexpected path command", "%q in %q", toks[i], d)
		}
		pts = append(pts, [2]float64{x, y})
	}
	return pts
}

// Every data coordinate of every plot lies inside the plot's frame, and
// the swath counts have a frame of their own, apart from the means.
func TestPlotsStayInTheirFrames(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(in *Input)
	}{
		{"synthetic", func(*Input) {}},
		// A trend along z far above the rest: the swath axis must reach
		// the slice means of every series.
		{"trend", func(in *Input) {
			n := in.Grid.NumCells()
			for r := 0; r*n < len(in.BlockSimulations); r++ {
				for c := range n {
					if _, _, k := in.Grid.IJK(c); k == in.Grid.Size[2]-1 {
						in.BlockSimulations[r*n+c] += 50
					}
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := makeSynth(t, [3]int{12, 10, 4}, [3]float64{10, 10, 5}, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}, 3, 30, 6, 21)
			in := s.input()
			tc.mod(in)
			r, err := Compute(context.Background(), in, nil)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, r.WriteHTML(&buf))
			plots := checkFrames(t, buf.String())
			require.Len(t, plots, 15)
			for name, g := range plots {
				assert.Positive(t, g.grouped, "plot %s draws nothing in a frame", name)
				assert.Positive(t, g.points, "plot %s", name)
				assert.Empty(t, g.outside, "plot %s: data outside the frame", name)
				if strings.HasPrefix(name, "swath-") {
					require.Len(t, g.frames, 2, "plot %s: a frame for the means, one for the counts", name)
					a, b := g.frames[0], g.frames[1]
					assert.True(t, a.y+a.h < b.y || b.y+b.h < a.y, "plot %s: the count band overlaps the means", name)
				}
			}
		})
	}
}

func TestPathPoints(t *testing.T) {
	got := pathPoints(t, "M1 2L3.5 4H7V-1.5Z M0 0")
	assert.Equal(t, [][2]float64{{1, 2}, {3.5, 4}, {7, 4}, {7, -1.5}, {0, 0}}, got)
}

// Fixed axis limits are the least extent: values beyond them widen the
// axis instead of leaving the frame; NaN and ±Inf are not drawn.
func TestPlotLimitsHoldEveryValue(t *testing.T) {
	p := newPlot("limits", "Limits", "x", "y")
	p.add(series{label: "line", class: "sim", x: []float64{-5, 0, 3, 4}, y: []float64{-2, 0.5, 7, math.Inf(1)}})
	p.add(series{label: "markers", kind: kindMarkers, class: "data", x: []float64{1, math.NaN()}, y: []float64{-9, 100}})
	p.add(series{label: "level", kind: kindHLine, class: "ref", y: []float64{12}})
	p.add(series{label: "band", kind: kindBand, class: "band-acceptable", y: []float64{-11, -10}})
	p.add(series{label: "count", kind: kindBars, class: "bar-count", x: []float64{-5, 0, 3}, y: []float64{4, 9}, band: true})
	p.xMin, p.xMax, p.yMin, p.yMax = -1, 1, 0, 1
	g := checkFrames(t, p.svg())["limits"]
	require.NotNil(t, g)
	assert.Len(t, g.frames, 2)
	assert.Equal(t, 5, g.grouped) // the line, the circle, the level, the band, the bars
	assert.Empty(t, g.outside)
	assert.Positive(t, g.points)
}
