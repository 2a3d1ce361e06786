package report

import (
	"fmt"
	"strings"
)

// definitions states the formulas and conventions of the report.
func (c *computation) definitions() {
	r := c.r
	ensOf := func(name string) string {
		if name == "" {
			return "(none)"
		}
		return "the " + strings.ToLower(ensembleLabel(name)) + " (" + name + ")"
	}
	meanOf, varOf := ensOf(r.Summary.MeanEnsemble), ensOf(r.Summary.VarianceCheck.Ensemble)
	add := func(term, format string, args ...any) {
		r.Definitions = append(r.Definitions, Definition{Term: term, Text: fmt.Sprintf(format, args...)})
	}
	declustered := c.in.Data.Weights != nil
	add("Verdicts",
		"Each judged statistic is the average over the %d realisations of a realisation statistic: the spatial mean m_sim of %s against m_ref, the mean of the reference distribution (∫₀¹ F⁻¹(p) dp), "+
			"the spatial variance of %s against its expected value (see Ergodic fluctuation; the reference variance, times C̄(V,V)/C(0) for blocks, when that is not available), "+
			"and, for point simulations, each quantile P5 … P95 against the reference quantile (the card shows the worst: the worst verdict, then the largest |z|). "+
			"The reference is itself like one realisation of the domain, so a difference is judged against the spread of the statistic from realisation to realisation: "+
			"s, the standard deviation of the realisation means (or variances, or quantiles) with divisor n − 1, and z = (average − target)/s. "+
			"Acceptable (consistent with the fluctuation) when |z| ≤ %g, marginal when |z| ≤ %g, failing otherwise; about 95 %% and 99.7 %% of a normal statistic lie within 2 and 3 standard deviations. "+
			"Each realisation's mean is judged the same way against m_ref. With few realisations s is itself uncertain (relative standard error about 1/√(2(n − 1))). "+
			"When there is no spread to judge by (a single realisation, or realisations whose statistic is identical) the verdict cannot be judged by fluctuation and falls back to the relative difference "+
			"d = |average − target| / |target| (the absolute difference when the target is 0): acceptable when d ≤ %g, marginal when d ≤ %g, failing otherwise; the summary card says which rule applied. "+
			"The ergodic σ shown next to the mean is the theoretical standard deviation of an unconditional realisation's mean; conditioning data make the realisation means vary less.",
		c.p.nReal, meanOf, varOf, AcceptableSigmas, MarginalSigmas, c.p.th.Acceptable, c.p.th.Marginal)
	if declustered {
		add("Moments",
			"Means and variances are population moments over the simulated cells (cells without a value are skipped); "+
				"data moments are declustered, weighted by the declustering weights: m = Σwz/Σw, s² = Σw(z − m)²/Σw.")
	} else {
		add("Moments",
			"Means and variances are population moments over the simulated cells (cells without a value are skipped); "+
				"the data have no weights, so their moments give every datum the same weight.")
	}
	add("Quantiles",
		"Linear interpolation between the plotting positions p_i = (cw_{i−1} + cw_i)/2 of the sorted values (cw the normalised cumulative weights; (i − ½)/n for equal weights), clamped to the extremes.")
	add("Kolmogorov distance",
		"D = sup_z |F_n(z) − F(z)| between a realisation's empirical CDF F_n and the reference CDF F (the standard normal G for normal scores), evaluated at the jumps of F_n. "+
			"Block values are not compared: their variance is smaller by the support effect.")
	add("Ergodic fluctuation",
		"The spatial mean of one Gaussian realisation over the domain D varies with variance σ̄²(D,D) = (1/|D|²)∫∫C(x − y)dxdy ≈ A/|D| + c0/N, "+
			"A = ∫C(h)dh = Σ_s c_s·K_s·a_s·b_s·d_s (K = π/6 spherical, 8π/27 exponential, π^(3/2)/3^(3/2) gaussian, 7π/60 cubic; a, b, d the ranges), "+
			"|D| = N·Δx·Δy·Δz for N simulated cells; capped at the sill. The approximation assumes a domain much larger than the ranges. "+
			"Expected spatial variance of a realisation: C(0) − σ̄² (points) and C̄(V,V) − σ̄² (blocks) in Gaussian units; in data units the same fractions of the reference variance, "+
			"and the mean's standard deviation σ_ref·√(σ̄²/C(0)), approximations that take the data correlogram equal to the normal-score one.")
	add("Block variance",
		"C̄(V,V) = (1/n²)Σ_kΣ_l C(x_k − x_l) over the n = %d discretisation points of a cell (including c0/n from the nugget), the prior variance of a Gaussian block average.",
		c.p.disc.Count())
	add("Variogram reproduction",
		"γ̂(h) = 1/(2N(h)) Σ (Y(x + h) − Y(x))² over the N(h) pairs of simulated cells with lattice lag h, for the normal scores of each realisation, no mean subtracted. "+
			"Lags follow the major, semi-major and minor axes of the longest structure: the lattice vectors nearest to k steps along each axis, up to %g times its range, "+
			"and the model is evaluated at those actual vectors. Points are compared with γ(h), blocks with the regularised γ_V(h) = γ̄(V,V_h) − γ̄(V,V) over the same discretisation.",
		lagReach)
	dataMean := "the data mean of a slice gives every datum the same weight (no declustering weights were given)"
	if declustered {
		dataMean = "the data mean of a slice is declustered, weighted by the declustering weights"
	}
	add("Swath plots",
		"Slices of constant width along the world x, y and z axes of the grid's bounding box; %s, "+
			"the simulated mean of a slice averages the values of the cells whose centres fall in it (per realisation, and the average over realisations); "+
			"the counts of data per slice are drawn in a band of their own below the means.", dataMean)
	add("Histogram",
		"%d classes of equal width from the 0.5%% to the 99%% quantile of the reference and of the data; values outside the classes are not counted, so the fractions may sum to less than 1.",
		histClasses)
	if c.p.derivedNS {
		add("Derived normal scores",
			"No point normal scores were given: they are computed from the point values with the reference distribution, y = G⁻¹(F(z)).")
	}
}
