package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/geostat-engine/geostat/geostat"
)

// Ensemble indices in prepared.ens.
const (
	iPoint = iota
	iPointNS
	iBlock
	iBlockNS
)

// maxLags is the largest number of lags per variogram axis; lagReach the
// multiple of the axis range the lags reach.
const (
	maxLags  = 20
	lagReach = 1.5
	// histClasses is the number of histogram classes.
	histClasses = 30
	// defaultSlices is the default largest number of swath slices.
	defaultSlices = 20
)

// Compute computes the validation report of an ensemble (docs/math.md
// section 7). It runs over GOMAXPROCS goroutines, one realisation at a time
// per goroutine; the result does not depend on their number. progress, when
// not nil, receives the number of finished units of work and their total;
// calls are serialised. Errors name the offending input.
func Compute(ctx context.Context, in *Input, progress func(done, total int)) (*Report, error) {
	p, err := prepare(in)
	if err != nil {
		return nil, err
	}
	c := &computation{p: p, in: in, r: &Report{}}
	c.tr = &tracker{progress: progress}
	if err := c.run(ctx); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return c.r, nil
}

// computation carries the state of one Compute call.
type computation struct {
	p  *prepared
	in *Input
	r  *Report
	tr *tracker

	refMean, refVar float64
	sigma2          float64 // σ̄²(D, D)
	blockCov        float64 // C̄(V, V)
	sill            float64
	distIdx         int // data-unit ensemble of the distribution reproduction (-1: none)
	swathIdx        int // ensemble of the swaths (-1: none)
}

func (c *computation) run(ctx context.Context) error {
	p, in, r := c.p, c.in, c.r
	r.Title = in.Context.Title
	if r.Title == "" {
		r.Title = "Simulation validation report"
	}
	r.Details = in.Context.Details
	r.Units = in.Units
	r.LengthUnit = in.LengthUnit
	if r.LengthUnit == "" {
		r.LengthUnit = "m"
	}
	r.Probabilities = slices.Clone(Series(probabilities))

	c.describeGrid()
	c.summariseData()
	c.ergodic()

	c.distIdx = -1
	switch {
	case p.ens[iPoint] != nil:
		c.distIdx = iPoint
	case p.ens[iBlock] != nil:
		c.distIdx = iBlock
		c.warn("No point simulations: the data-unit distribution is checked on the block values, whose variance is smaller than the reference's by the support effect.")
	}
	c.swathIdx = -1
	for _, i := range []int{iBlock, iPoint, iBlockNS, iPointNS} {
		if p.ens[i] != nil {
			c.swathIdx = i
			break
		}
	}

	vg := c.variogramPlan()
	nEns := 0
	for _, e := range p.ens {
		if e != nil {
			nEns++
		}
	}
	vgUnits := 0
	for _, pl := range vg {
		if len(pl.axes) > 0 {
			vgUnits += p.nReal
		}
	}
	c.tr.total = nEns*p.nReal + vgUnits + p.nReal

	if err := c.ensembleStats(ctx); err != nil {
		return err
	}
	if err := c.variograms(ctx, vg); err != nil {
		return err
	}
	if err := c.swaths(ctx); err != nil {
		return err
	}
	c.summary()
	c.definitions()
	return nil
}

func (c *computation) warn(format string, args ...any) {
	c.r.Warnings = append(c.r.Warnings, fmt.Sprintf(format, args...))
}

func (c *computation) describeGrid() {
	g := c.p.g
	vol := float64(c.p.nCells) * g.CellSize[0] * g.CellSize[1] * g.CellSize[2]
	c.r.Grid = GridSummary{
		Origin: g.Origin, Size: g.Size, CellSize: g.CellSize,
		Rotation:       [3]float64{g.Rotation.DipAzimuth, g.Rotation.Dip, g.Rotation.Pitch},
		Cells:          c.p.nCells,
		Discretisation: [3]int{c.p.disc.NX, c.p.disc.NY, c.p.disc.NZ},
		Volume:         Number(vol),
	}
}

func (c *computation) summariseData() {
	d := c.in.Data
	ref := c.in.Reference
	c.refMean, c.refVar = ReferenceMoments(ref)
	rm := Moments{Count: ref.Len(), Mean: Number(c.refMean), Variance: Number(c.refVar),
		Min: Number(ref.Min()), Max: Number(ref.Max()), Quantiles: make(Series, len(probabilities))}
	for k, pr := range probabilities {
		rm.Quantiles[k] = ref.Quantile(pr)
	}
	c.r.Reference = rm

	plain := Summarise(d.Values, nil, probabilities)
	ds := DataSummary{Moments: plain, PlainMean: plain.Mean, PlainVariance: plain.Variance}
	if d.Weights != nil {
		ds.Moments = Summarise(d.Values, d.Weights, probabilities)
		ds.Declustered = true
	}
	c.r.Data = ds
}

// ergodic computes σ̄²(D, D) ≈ A/|D| + c0/N and C̄(V, V).
func (c *computation) ergodic() {
	v := c.in.Variogram
	c.sill = v.TotalSill()
	if math.Abs(c.sill-1) > 1e-6 {
		c.warn("The variogram's total sill is %.4g; normal scores have unit variance, so the model should be the normalised one.", c.sill)
	}
	e := Ergodic{
		Formula: "σ̄²(D,D) ≈ A/|D| + c0/N, A = Σ_s c_s·K_s·a_s·b_s·d_s (integral range), |D| = N·Δx·Δy·Δz, capped at the sill",
		Sill:    Number(c.sill),
		Volume:  c.r.Grid.Volume,
	}
	c.blockCov = NewBlockAverager(v, c.p.g, c.p.disc).BlockCovariance()
	e.BlockCovariance = Number(c.blockCov)
	a, ok := IntegralRange(v)
	if ok && !v.Intrinsic() {
		c.sigma2 = math.Min(a/float64(e.Volume)+v.Nugget/float64(c.p.nCells), c.sill)
		e.IntegralRange = Number(a)
		e.Sigma2 = Number(c.sigma2)
	} else {
		c.sigma2 = math.NaN()
		e.IntegralRange, e.Sigma2 = nan(), nan()
		c.warn("The variogram model has no finite integral range (a linear structure, or a spheroidal or generalised Cauchy structure with α = 3): the expected ergodic fluctuations are not available.")
	}
	c.r.Ergodic = e
}

// realResult are the numbers of one realisation of one ensemble.
type realResult struct {
	st   RealisationStats
	qq   Series // quantiles at qqProbabilities
	hist Series // histogram fractions (distribution ensembles only)
}

func (c *computation) ensembleStats(ctx context.Context) error {
	p := c.p
	type unit struct{ e, r int }
	var units []unit
	for e := range p.ens {
		if p.ens[e] != nil {
			for r := range p.nReal {
				units = append(units, unit{e, r})
			}
		}
	}

	// Histogram classes in data units and in Gaussian units.
	edges := [4]Series{}
	if c.distIdx >= 0 {
		edges[c.distIdx] = c.dataEdges()
	}
	if p.ens[iPointNS] != nil {
		edges[iPointNS] = linspace(-4, 4, 33)
	}
	cdfs := [4]func(float64) float64{}
	if c.distIdx >= 0 {
		cdfs[c.distIdx] = c.in.Reference.CDF
	}
	cdfs[iPointNS] = geostat.NormalCDF

	res := make([][]realResult, 4)
	for e := range res {
		if p.ens[e] != nil {
			res[e] = make([]realResult, p.nReal)
		}
	}
	err := parallelFor(ctx, len(units), c.tr, func(i int) {
		u := units[i]
		vals := p.ens[u.e][u.r*p.nCells : (u.r+1)*p.nCells]
		res[u.e][u.r] = realisationStats(vals, cdfs[u.e], edges[u.e])
	})
	if err != nil {
		return err
	}

	for e := range p.ens {
		if p.ens[e] == nil {
			continue
		}
		es := EnsembleStats{Name: ensembleNames[e], Support: "point", Space: "data"}
		if e == iBlock || e == iBlockNS {
			es.Support = "block"
		}
		gauss := e == iPointNS || e == iBlockNS
		if gauss {
			es.Space = "gaussian"
		}
		es.Derived = e == iPointNS && p.derivedNS
		avg := Average{Quantiles: make(Series, len(probabilities))}
		means, vars := make([]float64, len(res[e])), make([]float64, len(res[e]))
		for r, rr := range res[e] {
			means[r], vars[r] = float64(rr.st.Mean), float64(rr.st.Variance)
		}
		es.Spread = Spread{Mean: Number(sampleStd(means)), Variance: Number(sampleStd(vars))}
		for _, rr := range res[e] {
			st := rr.st
			if !gauss {
				ck := c.judge("mean", c.refMean, float64(st.Mean), float64(es.Spread.Mean))
				st.RelativeDifference, st.Z, st.Verdict = ck.RelativeDifference, ck.Z, ck.Verdict
			} else {
				st.RelativeDifference, st.Z = nan(), nan()
			}
			es.Realisations = append(es.Realisations, st)
			avg.Mean += st.Mean
			avg.Variance += st.Variance
			for k := range avg.Quantiles {
				avg.Quantiles[k] += st.Quantiles[k]
			}
		}
		rn := float64(p.nReal)
		avg.Mean /= Number(rn)
		avg.Variance /= Number(rn)
		for k := range avg.Quantiles {
			avg.Quantiles[k] /= rn
		}
		es.Average = avg
		es.Expected = c.expected(e)
		c.r.Ensembles = append(c.r.Ensembles, es)
	}

	if c.distIdx >= 0 {
		c.r.Distribution = c.distribution(c.distIdx, res[c.distIdx], edges[c.distIdx], false)
	}
	if p.ens[iPointNS] != nil {
		c.r.Gaussian = c.distribution(iPointNS, res[iPointNS], edges[iPointNS], true)
	}
	c.support()
	return nil
}

// realisationStats computes the statistics of one realisation: moments,
// quantiles, and when cdf is not nil the Kolmogorov distance and the
// histogram over edges.
func realisationStats(vals []float64, cdf func(float64) float64, edges Series) realResult {
	s := make([]float64, 0, len(vals))
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	st := RealisationStats{Moments: Moments{Count: len(s), Mean: nan(), Variance: nan(), Min: nan(), Max: nan(),
		Quantiles: nanSeries(len(probabilities))}, Kolmogorov: nan()}
	res := realResult{qq: nanSeries(len(qqProbabilities))}
	if len(s) > 0 {
		mean := 0.0
		for _, v := range s {
			mean += v
		}
		mean /= float64(len(s))
		ss := 0.0
		for _, v := range s {
			ss += (v - mean) * (v - mean)
		}
		st.Mean, st.Variance = Number(mean), Number(ss/float64(len(s)))
		st.Min, st.Max = Number(s[0]), Number(s[len(s)-1])
		for k, pr := range probabilities {
			st.Quantiles[k] = Quantile(s, pr)
		}
		for k, pr := range qqProbabilities {
			res.qq[k] = Quantile(s, pr)
		}
		if cdf != nil {
			st.Kolmogorov = Number(KolmogorovDistance(s, cdf))
		}
	}
	if edges != nil {
		res.hist = make(Series, len(edges)-1)
		for j := range res.hist {
			lo := sort.SearchFloat64s(s, edges[j]) // first ≥ lower edge
			var hi int
			if j == len(res.hist)-1 {
				hi = sort.Search(len(s), func(i int) bool { return s[i] > edges[j+1] })
			} else {
				hi = sort.SearchFloat64s(s, edges[j+1])
			}
			if len(s) > 0 {
				res.hist[j] = float64(hi-lo) / float64(len(s))
			}
		}
	}
	res.st = st
	return res
}

// dataEdges returns histogram classes in data units covering the reference
// and the data between their 0.5 % and 99 % quantiles (the long upper tail
// of grades would otherwise squeeze the classes).
func (c *computation) dataEdges() Series {
	ref := c.in.Reference
	lo, hi := ref.Quantile(0.005), ref.Quantile(0.99)
	d := Summarise(c.in.Data.Values, c.in.Data.Weights, []float64{0.005, 0.99})
	if d.Count > 0 {
		lo, hi = math.Min(lo, d.Quantiles[0]), math.Max(hi, d.Quantiles[1])
	}
	if !(hi > lo) {
		w := math.Max(math.Abs(lo), 1) * 0.01
		lo, hi = lo-w, hi+w
	}
	return linspace(lo, hi, histClasses+1)
}

func linspace(lo, hi float64, n int) Series {
	s := make(Series, n)
	for i := range s {
		s[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	s[n-1] = hi
	return s
}

// sampleStd is the standard deviation of x with divisor n − 1 (NaN for
// fewer than two values or any value not finite).
func sampleStd(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(x)-1))
}

// classify applies the relative rule: the relative difference of value to
// target (the absolute difference when the target is 0) against the
// thresholds.
func (c *computation) classify(target, value float64) (Number, Verdict) {
	d := math.Abs(value - target)
	if target != 0 {
		d /= math.Abs(target)
	}
	switch {
	case d <= c.p.th.Acceptable:
		return Number(d), Acceptable
	case d <= c.p.th.Marginal:
		return Number(d), Marginal
	}
	return Number(d), Failing // also NaN: no value at all
}

// judge checks value against target by the fluctuation rule with spread, the
// statistic's standard deviation over the realisations, and by the relative
// rule when there is no spread to judge by (one realisation, equal
// realisations or no finite spread).
func (c *computation) judge(stat string, target, value, spread float64) Check {
	ck := Check{Statistic: stat, Target: Number(target), Value: Number(value), Difference: Number(value - target),
		Spread: Number(spread), Z: nan()}
	var relative Verdict // the relative rule's verdict, the fallback
	ck.RelativeDifference, relative = c.classify(target, value)
	// A spread at the rounding level of the values is no spread.
	tiny := 1e-12 * (math.Abs(target) + math.Abs(value))
	switch {
	case c.p.nReal < 2:
		ck.Reason = "a single realisation has no spread to judge by"
	case math.IsNaN(spread) || math.IsInf(spread, 0):
		ck.Reason = "the spread of the realisations is not available"
	case spread <= tiny:
		ck.Reason = "the realisations' " + stat + "s are all equal: no spread to judge by"
	}
	if ck.Reason != "" {
		ck.Rule, ck.Verdict = RelativeRule, relative
		return ck
	}
	ck.Rule = FluctuationRule
	z := (value - target) / spread
	ck.Z = Number(z)
	switch {
	case math.Abs(z) <= AcceptableSigmas:
		ck.Verdict = Acceptable
	case math.Abs(z) <= MarginalSigmas:
		ck.Verdict = Marginal
	default:
		ck.Verdict = Failing // also NaN
	}
	return ck
}

// varianceTarget is what the average realisation variance of data-unit
// ensemble e should be: the expected variance when the ergodic fluctuation
// is known, else the reference variance (points) or its share C̄(V,V)/C(0)
// (blocks).
func (c *computation) varianceTarget(e int, es *EnsembleStats) float64 {
	if v := float64(es.Expected.Variance); !math.IsNaN(v) && !math.IsInf(v, 0) {
		return v
	}
	if e == iBlock {
		return c.refVar * c.blockCov / c.sill
	}
	return c.refVar
}

// expected returns the expected realisation statistics of ensemble e.
func (c *computation) expected(e int) Expected {
	s2 := c.sigma2
	rel := s2 / c.sill // σ̄² as a fraction of the sill
	sd := math.Sqrt(c.refVar)
	switch e {
	case iPointNS:
		return Expected{Mean: 0, Variance: Number(c.sill - s2), MeanStd: Number(math.Sqrt(s2))}
	case iBlockNS:
		return Expected{Mean: 0, Variance: Number(c.blockCov - s2), MeanStd: Number(math.Sqrt(s2))}
	case iPoint:
		return Expected{Mean: Number(c.refMean), Variance: Number(c.refVar * (1 - rel)), MeanStd: Number(sd * math.Sqrt(rel))}
	default: // iBlock
		return Expected{Mean: Number(c.refMean), Variance: Number(c.refVar * (c.blockCov - s2) / c.sill), MeanStd: Number(sd * math.Sqrt(rel))}
	}
}

// distribution assembles the CDF, QQ and histogram reproduction of ensemble e.
func (c *computation) distribution(e int, res []realResult, edges Series, gauss bool) *DistributionReproduction {
	ref := c.in.Reference
	d := &DistributionReproduction{Ensemble: ensembleNames[e], Space: "data",
		Probabilities: slices.Clone(Series(qqProbabilities))}
	data := c.in.Data.Values
	refQ := ref.Quantile
	refCDF := ref.CDF
	if gauss {
		d.Space = "gaussian"
		ns := make([]float64, len(data))
		ref.NormalScores(ns, data)
		data = ns
		refQ, refCDF = geostat.NormalQuantile, geostat.NormalCDF
	}
	d.ReferenceQuantiles = make(Series, len(qqProbabilities))
	for k, pr := range qqProbabilities {
		d.ReferenceQuantiles[k] = refQ(pr)
	}
	d.DataQuantiles = Summarise(data, c.in.Data.Weights, qqProbabilities).Quantiles
	d.MeanQuantiles = make(Series, len(qqProbabilities))
	d.Kolmogorov = make(Series, len(res))
	kmax, ksum := 0.0, 0.0
	for r, rr := range res {
		d.Realisations = append(d.Realisations, rr.qq)
		for k := range rr.qq {
			d.MeanQuantiles[k] += rr.qq[k] / float64(len(res))
		}
		k := float64(rr.st.Kolmogorov)
		d.Kolmogorov[r] = k
		kmax = math.Max(kmax, k)
		ksum += k
	}
	d.KolmogorovMean, d.KolmogorovMax = Number(ksum/float64(len(res))), Number(kmax)

	h := Histogram{Edges: edges, Reference: make(Series, len(edges)-1), Data: make(Series, len(edges)-1)}
	for j := range h.Reference {
		h.Reference[j] = refCDF(edges[j+1]) - refCDF(edges[j])
	}
	sw := 0.0
	for i, z := range data {
		if math.IsNaN(z) || math.IsInf(z, 0) {
			continue
		}
		w := 1.0
		if c.in.Data.Weights != nil {
			w = c.in.Data.Weights[i]
		}
		sw += w
		if j := class(edges, z); j >= 0 {
			h.Data[j] += w
		}
	}
	for j := range h.Data {
		if sw > 0 {
			h.Data[j] /= sw
		} else {
			h.Data[j] = math.NaN()
		}
	}
	for _, rr := range res {
		h.Realisations = append(h.Realisations, rr.hist)
	}
	d.Histogram = h
	return d
}

// class returns the histogram class of z (the last class includes its upper
// edge), or -1 outside the edges.
func class(edges Series, z float64) int {
	n := len(edges) - 1
	if z < edges[0] || z > edges[n] {
		return -1
	}
	j := sort.SearchFloat64s(edges, z) // first edge ≥ z
	if j < len(edges) && edges[j] == z {
		return min(j, n-1)
	}
	return j - 1
}

func (c *computation) support() {
	avgVar := func(name string) Number {
		for _, es := range c.r.Ensembles {
			if es.Name == name {
				return es.Average.Variance
			}
		}
		return nan()
	}
	s := Support{
		PointVariance: avgVar(PointSimulations), BlockVariance: avgVar(BlockSimulations),
		GaussianPointVariance: avgVar(PointSimulationsNormalScore), GaussianBlockVariance: avgVar(BlockSimulationsNormalScore),
		ExpectedGaussianRatio: Number(c.blockCov / c.sill),
	}
	s.Ratio = s.BlockVariance / s.PointVariance
	s.GaussianRatio = s.GaussianBlockVariance / s.GaussianPointVariance
	c.r.Support = s
}

func (c *computation) summary() {
	r := c.r
	s := Summary{ReferenceMean: Number(c.refMean), Mean: nan(), Difference: nan(), RelativeDifference: nan(),
		Thresholds: c.p.th, Realisations: c.p.nReal, Cells: c.p.nCells,
		RealisationVerdicts: map[string]int{string(Acceptable): 0, string(Marginal): 0, string(Failing): 0},
		KolmogorovMean:      nan(), KolmogorovMax: nan(), ExpectedMeanStd: nan()}
	for _, name := range []string{BlockSimulations, PointSimulations} {
		es := r.ensemble(name)
		if es == nil || s.MeanEnsemble != "" {
			continue
		}
		s.MeanEnsemble = name
		s.Mean = es.Average.Mean
		s.MeanCheck = c.judge("mean", c.refMean, float64(s.Mean), float64(es.Spread.Mean))
		s.MeanCheck.Ensemble = name
		s.Difference, s.RelativeDifference, s.Verdict = s.MeanCheck.Difference, s.MeanCheck.RelativeDifference, s.MeanCheck.Verdict
		s.ExpectedMeanStd = es.Expected.MeanStd
		for _, st := range es.Realisations {
			s.RealisationVerdicts[string(st.Verdict)]++
		}
	}
	if c.distIdx >= 0 {
		name := ensembleNames[c.distIdx]
		es := r.ensemble(name)
		s.VarianceCheck = c.judge("variance", c.varianceTarget(c.distIdx, es), float64(es.Average.Variance), float64(es.Spread.Variance))
		s.VarianceCheck.Ensemble = name
	}
	if c.distIdx == iPoint {
		s.QuantileCheck = c.quantileCheck(r.ensemble(PointSimulations))
	}
	if s.MeanEnsemble == "" {
		c.warn("No simulation in data units: the mean and variance cannot be judged.")
		s.Criterion = "none: no simulation in data units"
	} else {
		s.Criterion = criterion(s.MeanCheck, c.p.th)
		if s.MeanCheck.Rule == RelativeRule {
			c.warn("The simulated mean cannot be judged by the fluctuation between realisations (%s): it is judged by its relative difference instead.", s.MeanCheck.Reason)
		} else if c.p.nReal < 10 {
			c.warn("Only %d realisations: their spread, which the verdicts are judged by, is itself uncertain (relative standard error about %.0f %%).",
				c.p.nReal, 100/math.Sqrt(2*float64(c.p.nReal-1)))
		}
	}
	if r.Distribution != nil {
		s.KolmogorovMean, s.KolmogorovMax = r.Distribution.KolmogorovMean, r.Distribution.KolmogorovMax
	}
	r.Summary = s
}

// severity orders verdicts from acceptable to failing.
func severity(v Verdict) int {
	switch v {
	case Acceptable:
		return 0
	case Marginal:
		return 1
	}
	return 2
}

// quantileCheck judges the average realisation quantile at each of
// probabilities against the reference quantile by the spread of the
// realisation quantiles, and returns the worst check: the worst verdict,
// then the largest |z| (or relative difference under the relative rule).
func (c *computation) quantileCheck(es *EnsembleStats) Check {
	var worst Check
	for k, pr := range probabilities {
		q := make([]float64, len(es.Realisations))
		for r, st := range es.Realisations {
			q[r] = st.Quantiles[k]
		}
		ck := c.judge("quantile", c.r.Reference.Quantiles[k], es.Average.Quantiles[k], sampleStd(q))
		ck.Ensemble, ck.Probability = es.Name, Number(pr)
		if worst.Rule == "" || worse(ck, worst) {
			worst = ck
		}
	}
	return worst
}

// worse reports whether check a is worse than b.
func worse(a, b Check) bool {
	if sa, sb := severity(a.Verdict), severity(b.Verdict); sa != sb {
		return sa > sb
	}
	if a.Rule != b.Rule {
		return a.Rule == FluctuationRule // a finite z says more than no spread
	}
	if a.Rule == FluctuationRule {
		return math.Abs(float64(a.Z)) > math.Abs(float64(b.Z))
	}
	return float64(a.RelativeDifference) > float64(b.RelativeDifference)
}

// criterion states the rule a check was judged by.
func criterion(ck Check, th Thresholds) string {
	if ck.Rule == FluctuationRule {
		return fmt.Sprintf("z = (m_sim − m_ref) / s_m, with s_m the standard deviation of the realisation means: "+
			"acceptable when |z| ≤ %g, marginal when |z| ≤ %g, failing otherwise", AcceptableSigmas, MarginalSigmas)
	}
	return fmt.Sprintf("%s, so the relative difference d = |m_sim − m_ref| / |m_ref| (|m_sim − m_ref| when m_ref = 0) decides: "+
		"acceptable when d ≤ %g, marginal when d ≤ %g, failing otherwise", ck.Reason, th.Acceptable, th.Marginal)
}
