package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/variogram"
	"github.com/geostat-engine/geostat/grid"
)

// tiny is a hand-made case: two cells, two realisations, a reference with
// mean 3 (z = 1, 5 at p = 0.25, 0.75, no extrapolation).
func tiny(t *testing.T) *Input {
	g, err := grid.New([3]float64{}, [3]int{2, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	ref, err := geostat.NewDistribution([]float64{1, 5}, []float64{0.25, 0.75}, geostat.Tail{}, geostat.Tail{})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 3, SemiMajor: 3, Minor: 3}})
	require.NoError(t, err)
	return &Input{
		Data:             Data{Coords: []float64{0.5, 0.5, 0.5, 1.5, 0.5, 0.5}, Values: []float64{2, 4}},
		Reference:        ref,
		Variogram:        v,
		Grid:             g,
		PointSimulations: []float64{1, 3, 2, 6},
	}
}

func TestComputeHandMade(t *testing.T) {
	r, err := Compute(context.Background(), tiny(t), nil)
	require.NoError(t, err)
	s := r.Summary
	assert.InDelta(t, 3, float64(s.ReferenceMean), 1e-12)
	assert.InDelta(t, 3, float64(s.Mean), 1e-15)
	assert.Equal(t, PointSimulations, s.MeanEnsemble)
	assert.InDelta(t, 0, float64(s.RelativeDifference), 1e-12)
	assert.Equal(t, Acceptable, s.Verdict)
	// Each realisation is off by 1 = 0.71 s, s = √2 the spread of the means.
	assert.Equal(t, 2, s.RealisationVerdicts["acceptable"])
	assert.Equal(t, FluctuationRule, s.MeanCheck.Rule)
	assert.InDelta(t, math.Sqrt2, float64(s.MeanCheck.Spread), 1e-15)

	es := r.ensemble(PointSimulations)
	require.NotNil(t, es)
	require.Len(t, es.Realisations, 2)
	assert.Equal(t, Number(2), es.Realisations[0].Mean)
	assert.Equal(t, Number(1), es.Realisations[0].Variance)
	assert.Equal(t, Number(4), es.Realisations[1].Mean)
	assert.Equal(t, Number(4), es.Realisations[1].Variance)
	assert.InDelta(t, 1.0/3, float64(es.Realisations[0].RelativeDifference), 1e-15)
	assert.InDelta(t, -1/math.Sqrt2, float64(es.Realisations[0].Z), 1e-12)
	// Kolmogorov: {1, 3} against F(1) = 0.25, F(3) = 0.5 → 0.5;
	// {2, 6} against F(2) = 0.375, F(6) = 0.75 → 0.375.
	assert.InDelta(t, 0.5, float64(es.Realisations[0].Kolmogorov), 1e-15)
	assert.InDelta(t, 0.375, float64(es.Realisations[1].Kolmogorov), 1e-15)
	assert.InDelta(t, 0.4375, float64(s.KolmogorovMean), 1e-15)
	assert.InDelta(t, 0.5, float64(s.KolmogorovMax), 1e-15)
	// Quantile P50 of {1, 3} is 2; P5 clamps to 1.
	assert.InDelta(t, 2, es.Realisations[0].Quantiles[9], 1e-15)
	assert.InDelta(t, 1, es.Realisations[0].Quantiles[0], 1e-15)

	// Normal scores derived through the reference: F(1) = 0.25 → G⁻¹(0.25).
	ns := r.ensemble(PointSimulationsNormalScore)
	require.NotNil(t, ns)
	assert.True(t, ns.Derived)
	assert.InDelta(t, (geostat.NormalQuantile(0.25)+geostat.NormalQuantile(0.5))/2, float64(ns.Realisations[0].Mean), 1e-12)

	// Swath along x: two slices of one cell, one datum each.
	sx := r.Swaths[0]
	assert.Equal(t, "x", sx.Axis)
	assert.Equal(t, []int{1, 1}, sx.DataCount)
	assert.Equal(t, []int{1, 1}, sx.CellCount)
	assert.InDeltaSlice(t, []float64{2, 4}, []float64(sx.DataMean), 1e-15)
	assert.InDeltaSlice(t, []float64{1.5, 4.5}, []float64(sx.Mean), 1e-15) // (1+2)/2, (3+6)/2
	assert.InDeltaSlice(t, []float64{1, 3}, []float64(sx.Realisations[0]), 1e-15)

	// One realisation has no spread: the thresholds judge d = 1/3, marginal
	// with 0.3/0.4.
	in := tiny(t)
	in.PointSimulations = in.PointSimulations[:2]
	in.Thresholds = Thresholds{Acceptable: 0.3, Marginal: 0.4}
	r, err = Compute(context.Background(), in, nil)
	require.NoError(t, err)
	assert.Equal(t, RelativeRule, r.Summary.MeanCheck.Rule)
	assert.Equal(t, Marginal, r.Summary.Verdict)
	assert.Equal(t, 1, r.Summary.RealisationVerdicts["marginal"])
}

func TestClassify(t *testing.T) {
	c := &computation{p: &prepared{th: Thresholds{Acceptable: 0.05, Marginal: 0.10}}, refMean: 10}
	for _, tc := range []struct {
		m    float64
		want Verdict
	}{
		{10, Acceptable}, {10.4, Acceptable}, {9.6, Acceptable}, {10.6, Marginal}, {9, Marginal},
		{11.2, Failing}, {8.8, Failing}, {math.NaN(), Failing},
	} {
		d, v := c.classify(c.refMean, tc.m)
		assert.Equal(t, tc.want, v, "m = %g (d = %g)", tc.m, d)
	}
	d, _ := c.classify(c.refMean, 10.5)
	assert.InDelta(t, 0.05, float64(d), 1e-15)
	// A zero reference mean: the absolute difference.
	c.refMean = 0
	d, v := c.classify(c.refMean, -0.07)
	assert.InDelta(t, 0.07, float64(d), 1e-15)
	assert.Equal(t, Marginal, v)
}

// A synthetic ensemble: the statistics agree with brute force and the
// result does not depend on GOMAXPROCS.
func TestComputeSynthetic(t *testing.T) {
	s := makeSynth(t, [3]int{12, 10, 4}, [3]float64{10, 10, 5}, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}, 4, 40, 8, 11)
	in := s.input()
	prev := runtime.GOMAXPROCS(1)
	r1, err := Compute(context.Background(), in, nil)
	runtime.GOMAXPROCS(2)
	require.NoError(t, err)
	r2, err := Compute(context.Background(), in, nil)
	runtime.GOMAXPROCS(prev)
	require.NoError(t, err)
	var j1, j2 bytes.Buffer
	require.NoError(t, r1.WriteJSON(&j1))
	require.NoError(t, r2.WriteJSON(&j2))
	require.Equal(t, j1.String(), j2.String(), "output depends on GOMAXPROCS")

	n := s.g.NumCells()
	assert.Equal(t, n, r1.Summary.Cells)
	assert.Equal(t, 4, r1.Summary.Realisations)
	require.Len(t, r1.Ensembles, 4)
	for _, es := range r1.Ensembles {
		var ens []float64
		switch es.Name {
		case PointSimulations:
			ens = s.point
		case PointSimulationsNormalScore:
			ens = s.pointNS
		case BlockSimulations:
			ens = s.block
		default:
			ens = s.blockNS
		}
		for rr, st := range es.Realisations {
			vals := ens[rr*n : (rr+1)*n]
			m := 0.0
			for _, x := range vals {
				m += x
			}
			m /= float64(n)
			v := 0.0
			for _, x := range vals {
				v += (x - m) * (x - m)
			}
			assert.InDelta(t, m, float64(st.Mean), 1e-12)
			assert.InDelta(t, v/float64(n), float64(st.Variance), 1e-10)
		}
	}
	// The simulated mean is the blocks' average of realisation means.
	blocks := r1.ensemble(BlockSimulations)
	sum := 0.0
	for _, st := range blocks.Realisations {
		sum += float64(st.Mean)
	}
	assert.InDelta(t, sum/4, float64(r1.Summary.Mean), 1e-12)

	// Variograms: 3 axes × points and blocks, γ̂ as LatticeVariogram gives.
	require.Len(t, r1.Variograms, 6)
	for _, vr := range r1.Variograms {
		ens := s.pointNS
		if vr.Support == "block" {
			ens = s.blockNS
		}
		for k, h := range vr.Lags {
			g, _ := variogram.Lattice(ens[n:2*n], s.g.Size, h)
			assert.InDelta(t, g, vr.Realisations[1][k], 1e-12)
			_, np := variogram.Lattice(ens[:n], s.g.Size, h)
			assert.Equal(t, np, vr.Pairs[k])
			w := variogram.LagVector(s.g, h)
			if vr.Support == "point" {
				assert.InDelta(t, s.v.GammaLag(w[0], w[1], w[2]), vr.Model[k], 1e-12)
			}
		}
	}

	// Swaths: every cell counted once per axis; data inside counted.
	for _, sw := range r1.Swaths {
		total := 0
		for _, c := range sw.CellCount {
			total += c
		}
		assert.Equal(t, n, total, "swath %s", sw.Axis)
		data := 0
		for _, c := range sw.DataCount {
			data += c
		}
		assert.Equal(t, len(s.data.Values), data, "swath %s", sw.Axis)
	}

	// The JSON document decodes back with the same numbers (NaN ↔ null).
	var back Report
	require.NoError(t, json.Unmarshal(j1.Bytes(), &back))
	assert.Equal(t, r1.Summary.Mean, back.Summary.Mean)
	assert.Equal(t, len(r1.Variograms), len(back.Variograms))
}

// A masked grid: statistics over the active cells only, variogram pairs
// between active cells only.
func TestComputeMasked(t *testing.T) {
	s := makeSynth(t, [3]int{10, 8, 3}, [3]float64{10, 10, 5}, grid.Point(), 3, 30, 5, 12)
	n := s.g.NumCells()
	mask := make([]bool, n)
	for c := range mask {
		i, j, _ := s.g.IJK(c)
		mask[c] = (i+j)%3 != 0
	}
	m, err := grid.NewMasked(s.g, mask)
	require.NoError(t, err)
	na := m.NumActive()
	pick := func(full []float64) []float64 {
		out := make([]float64, 0, na*s.R)
		for r := range s.R {
			for _, c := range m.ActiveCells() {
				out = append(out, full[r*n+c])
			}
		}
		return out
	}
	in := s.input()
	in.Grid, in.Masked = nil, m
	in.PointSimulations, in.PointSimulationsNormalScore = pick(s.point), pick(s.pointNS)
	in.BlockSimulations, in.BlockSimulationsNormalScore = pick(s.block), pick(s.blockNS)
	r, err := Compute(context.Background(), in, nil)
	require.NoError(t, err)
	assert.Equal(t, na, r.Summary.Cells)

	full := make([]float64, n)
	for c := range full {
		full[c] = math.NaN()
		if mask[c] {
			full[c] = s.pointNS[c] // realisation 0
		}
	}
	for _, vr := range r.Variograms {
		if vr.Support != "point" {
			continue
		}
		for k, h := range vr.Lags {
			g, np := variogram.Lattice(full, s.g.Size, h)
			assert.InDelta(t, g, vr.Realisations[0][k], 1e-12)
			assert.Equal(t, np, vr.Pairs[k])
		}
	}
	for _, sw := range r.Swaths {
		total := 0
		for _, c := range sw.CellCount {
			total += c
		}
		assert.Equal(t, na, total)
	}
}

func TestComputeErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		mod  func(in *Input)
		want string
	}{
		{"no grid", func(in *Input) { in.Grid = nil }, "target"},
		{"no reference", func(in *Input) { in.Reference = nil }, "distribution"},
		{"no variogram", func(in *Input) { in.Variogram = nil }, "variogram_model"},
		{"no ensemble", func(in *Input) { in.PointSimulations = nil }, "at least one ensemble"},
		{"length", func(in *Input) { in.PointSimulations = []float64{1, 2, 3} }, "point_simulations"},
		{"realisations differ", func(in *Input) { in.BlockSimulations = []float64{1, 2} }, "block_simulations"},
		{"thresholds", func(in *Input) { in.Thresholds = Thresholds{Acceptable: 0.2, Marginal: 0.1} }, "report_mean_thresholds.marginal"},
		{"negative threshold", func(in *Input) { in.Thresholds = Thresholds{Acceptable: -1, Marginal: 0.1} }, "report_mean_thresholds"},
		{"weights", func(in *Input) { in.Data.Weights = []float64{1, -1} }, "weights[1]"},
		{"weights length", func(in *Input) { in.Data.Weights = []float64{1} }, "weights"},
		{"coords", func(in *Input) { in.Data.Coords = in.Data.Coords[:5] }, "source coordinates"},
		{"discretisation", func(in *Input) { in.Discretisation = grid.BlockDiscretisation{NX: 10, NY: 1, NZ: 1} }, "block_discretization"},
	}
	for _, c := range cases {
		in := tiny(t)
		c.mod(in)
		_, err := Compute(ctx, in, nil)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

func TestComputeProgressAndCancel(t *testing.T) {
	s := makeSynth(t, [3]int{8, 8, 2}, [3]float64{10, 10, 5}, grid.Point(), 3, 20, 4, 13)
	last, calls, total := 0, 0, 0
	_, err := Compute(context.Background(), s.input(), func(done, tot int) {
		require.Equal(t, last+1, done)
		last, total = done, tot
		calls++
	})
	require.NoError(t, err)
	assert.Equal(t, total, last)
	assert.Equal(t, 4*3+2*3+3, total) // stats, variograms (points, blocks), swaths

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Compute(ctx, s.input(), nil)
	assert.True(t, errors.Is(err, context.Canceled), "err = %v", err)
}

// The page is well-formed (XML), holds every plot with data, no script and
// no link or source, and escapes user text.
func TestHTML(t *testing.T) {
	s := makeSynth(t, [3]int{12, 10, 4}, [3]float64{10, 10, 5}, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}, 3, 30, 6, 21)
	in := s.input()
	in.Context.Title = `Pit <B> & "north" <script>alert(1)</script>`
	in.Context.Details = []Detail{{Label: "<i>label</i>", Value: "a & b"}}
	in.Units = "g/t <u>"
	r, err := Compute(context.Background(), in, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, r.WriteHTML(&buf))
	page := buf.String()

	assert.NotContains(t, strings.ToLower(page), "<script")
	assert.NotContains(t, page, "<B>")
	assert.NotContains(t, page, "<u>")
	assert.NotContains(t, page, "<i>label")
	assert.Contains(t, page, "Pit &lt;B&gt; &amp; &#34;north&#34;")

	// Parse the whole page as XML: every element closed, every entity valid.
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = true
	paths := map[string]int{} // data paths per plot
	var stack []string
	current := ""
	depthOfPlot := -1
	inData := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "page is not well-formed")
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			for _, a := range e.Attr {
				assert.NotEqual(t, "src", a.Name.Local, "src attribute in <%s>", e.Name.Local)
				assert.NotEqual(t, "href", a.Name.Local, "href attribute in <%s>", e.Name.Local)
				if strings.Contains(strings.ToLower(a.Value), "http") {
					// Only the SVG namespace may name a URL.
					assert.Equal(t, "xmlns", a.Name.Local, "URL in attribute %s", a.Name.Local)
				}
				if e.Name.Local == "svg" && a.Name.Local == "data-plot" {
					current, depthOfPlot = a.Value, len(stack)
				}
				if e.Name.Local == "g" && a.Name.Local == "clip-path" && current != "" {
					inData = len(stack)
				}
				if e.Name.Local == "path" && a.Name.Local == "d" && inData > 0 && len(strings.TrimSpace(a.Value)) > 2 {
					paths[current]++
				}
			}
			assert.NotEqual(t, "link", e.Name.Local)
			assert.NotEqual(t, "img", e.Name.Local)
		case xml.EndElement:
			if len(stack) == inData {
				inData = 0
			}
			if len(stack) == depthOfPlot {
				current, depthOfPlot = "", -1
			}
			stack = stack[:len(stack)-1]
		}
	}

	want := []string{"histogram", "cdf", "qq", "gaussian-cdf",
		"variogram-point-major", "variogram-point-semi_major", "variogram-point-minor",
		"variogram-block-major", "variogram-block-semi_major", "variogram-block-minor",
		"swath-x", "swath-y", "swath-z", "realisation-means", "realisation-variances"}
	assert.ElementsMatch(t, want, plotNames(t, page))
	for _, name := range want {
		assert.Positive(t, paths[name], "plot %s has no data path", name)
	}
}
