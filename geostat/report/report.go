package report

// Report is the validation report: every number the HTML page shows, as a
// JSON document. Numbers that are not available (for example a lag without
// pairs) are NaN in Go and null in JSON.
type Report struct {
	// Title and Details are the report context.
	Title   string   `json:"title"`
	Details []Detail `json:"details,omitempty"`
	// Units of the data values and of lengths.
	Units      string `json:"units,omitempty"`
	LengthUnit string `json:"length_unit"`

	// Summary holds the headline numbers and the verdict.
	Summary Summary `json:"summary"`
	// Grid describes the simulated domain.
	Grid GridSummary `json:"grid"`
	// Probabilities are those of every quantile list below except the
	// distribution curves (0.05 … 0.95, see Probabilities()).
	Probabilities Series `json:"probabilities"`
	// Data summarises the conditioning data.
	Data DataSummary `json:"data"`
	// Reference summarises the reference distribution.
	Reference Moments `json:"reference"`
	// Ergodic gives the expected fluctuation of realisation statistics.
	Ergodic Ergodic `json:"ergodic"`
	// Ensembles are the per-realisation statistics of each given ensemble.
	Ensembles []EnsembleStats `json:"ensembles"`
	// Support compares block and point variances.
	Support Support `json:"support"`
	// Distribution is the histogram, CDF and QQ reproduction in data units,
	// Gaussian the same for the normal scores against N(0, 1).
	Distribution *DistributionReproduction `json:"distribution,omitempty"`
	Gaussian     *DistributionReproduction `json:"gaussian,omitempty"`
	// Variograms are the experimental variograms along the three axes of the
	// longest structure, for the point and block normal scores.
	Variograms []VariogramReproduction `json:"variograms,omitempty"`
	// Swaths are the swath plots along x, y and z.
	Swaths []Swath `json:"swaths"`
	// Definitions state the formulas used.
	Definitions []Definition `json:"definitions"`
	// Warnings are findings a user should read.
	Warnings []string `json:"warnings,omitempty"`
}

// Verdict classifies a simulated statistic against its target.
type Verdict string

// The verdicts of a Check.
const (
	// Acceptable: consistent with the fluctuation between realisations.
	Acceptable Verdict = "acceptable"
	Marginal   Verdict = "marginal"
	Failing    Verdict = "failing"
)

// The rules of a Check.
const (
	// FluctuationRule judges a difference in units of the statistic's
	// standard deviation over the realisations: |z| ≤ AcceptableSigmas is
	// acceptable, |z| ≤ MarginalSigmas marginal, otherwise failing.
	FluctuationRule = "fluctuation"
	// RelativeRule judges the relative difference by the Thresholds; it is
	// the fallback when the statistic has no spread over the realisations.
	RelativeRule = "relative"
)

// The limits of the fluctuation rule, in standard deviations: about 95 % and
// 99.7 % of a normal statistic lie within them.
const (
	AcceptableSigmas = 2.0
	MarginalSigmas   = 3.0
)

// Check judges one statistic of the simulation (the average over the
// realisations of their spatial mean or variance) against its target, by
// the statistic's own fluctuation from realisation to realisation.
type Check struct {
	// Statistic is "mean", "variance" or "quantile", Ensemble the ensemble
	// judged; Probability is the quantile's.
	Statistic   string `json:"statistic"`
	Ensemble    string `json:"ensemble"`
	Probability Number `json:"probability,omitempty"`
	// Target is what a correct simulation gives on average (m_ref for the
	// mean), Value the average over realisations, Difference Value − Target
	// and RelativeDifference |Difference| / |Target| (|Difference| when the
	// target is 0).
	Target             Number `json:"target"`
	Value              Number `json:"value"`
	Difference         Number `json:"difference"`
	RelativeDifference Number `json:"relative_difference"`
	// Spread is the standard deviation of the statistic over the
	// realisations (divisor n − 1; NaN for one realisation) and Z the
	// difference in units of it.
	Spread Number `json:"spread"`
	Z      Number `json:"z"`
	// Rule is FluctuationRule or RelativeRule; Reason says why the
	// fluctuation rule could not be applied.
	Rule    string  `json:"rule"`
	Reason  string  `json:"reason,omitempty"`
	Verdict Verdict `json:"verdict"`
}

// Summary holds the headline numbers.
type Summary struct {
	// ReferenceMean is the mean of the reference distribution, m_ref.
	ReferenceMean Number `json:"reference_mean"`
	// Mean is the simulated mean m_sim: the average over realisations of the
	// spatial mean of MeanEnsemble.
	Mean         Number `json:"mean"`
	MeanEnsemble string `json:"mean_ensemble"`
	// Difference is m_sim − m_ref; RelativeDifference is |m_sim − m_ref| /
	// |m_ref| (|m_sim − m_ref| when m_ref = 0).
	Difference         Number `json:"difference"`
	RelativeDifference Number `json:"relative_difference"`
	// Criterion states the rule of Verdict in words.
	Criterion string `json:"criterion"`
	// Thresholds of the relative rule (the fallback); Verdict is the mean's
	// (MeanCheck.Verdict); RealisationVerdicts counts the verdicts of the
	// individual realisation means by the same rule.
	Thresholds          Thresholds     `json:"thresholds"`
	Verdict             Verdict        `json:"verdict"`
	RealisationVerdicts map[string]int `json:"realisation_verdicts"`
	// MeanCheck judges m_sim against m_ref, VarianceCheck the average
	// realisation variance against its expected value, each by its
	// spread over the realisations.
	MeanCheck     Check `json:"mean_check"`
	VarianceCheck Check `json:"variance_check"`
	// QuantileCheck is the worst of the checks of the average realisation
	// quantiles at Probabilities against the reference quantiles (point
	// simulations only: block quantiles differ by the support effect).
	QuantileCheck Check `json:"quantile_check"`
	// ExpectedMeanStd is the ergodic standard deviation of one
	// realisation's mean in data units (see Ergodic).
	ExpectedMeanStd Number `json:"expected_mean_std"`
	// Realisations and Cells are the ensemble's dimensions.
	Realisations int `json:"realisations"`
	Cells        int `json:"cells"`
	// KolmogorovMean and KolmogorovMax summarise the Kolmogorov distances
	// of the realisations to the reference distribution.
	KolmogorovMean Number `json:"kolmogorov_mean"`
	KolmogorovMax  Number `json:"kolmogorov_max"`
}

// GridSummary describes the simulated domain.
type GridSummary struct {
	Origin         [3]float64 `json:"origin"`
	Size           [3]int     `json:"size"`
	CellSize       [3]float64 `json:"cell_size"`
	Rotation       [3]float64 `json:"rotation"` // dip azimuth, dip, pitch
	Cells          int        `json:"cells"`    // simulated (active) cells
	Discretisation [3]int     `json:"block_discretization"`
	Volume         Number     `json:"volume"` // cells × cell volume
}

// DataSummary summarises the conditioning data: declustered (weighted) when
// weights were given, plain otherwise; the plain moments are kept apart.
type DataSummary struct {
	Moments
	Declustered   bool   `json:"declustered"`
	PlainMean     Number `json:"plain_mean"`
	PlainVariance Number `json:"plain_variance"`
}

// Ergodic is the expected fluctuation of the statistics of one realisation
// over the domain D (docs/math.md section 7.2).
type Ergodic struct {
	Formula string `json:"formula"`
	// IntegralRange is A = ∫ C(h) dh of the normal-score model.
	IntegralRange Number `json:"integral_range"`
	// Volume is |D|.
	Volume Number `json:"volume"`
	// Sigma2 is σ̄²(D, D), the variance of a realisation's spatial mean in
	// Gaussian units.
	Sigma2 Number `json:"sigma2"`
	// Sill is the normal-score model's sill, BlockCovariance C̄(V, V).
	Sill            Number `json:"sill"`
	BlockCovariance Number `json:"block_covariance"`
}

// EnsembleStats are the statistics of one ensemble.
type EnsembleStats struct {
	Name    string `json:"name"`
	Support string `json:"support"` // "point" or "block"
	Space   string `json:"space"`   // "data" or "gaussian"
	// Derived is true for point normal scores computed from the point values
	// through the reference distribution.
	Derived      bool               `json:"derived,omitempty"`
	Realisations []RealisationStats `json:"realisations"`
	// Average are the averages over realisations of the mean, the variance
	// and each quantile.
	Average Average `json:"average"`
	// Expected are the values a correct simulation gives on average.
	Expected Expected `json:"expected"`
	// Spread are the standard deviations over the realisations of their
	// mean and variance (divisor n − 1; NaN for one realisation).
	Spread Spread `json:"spread"`
}

// Spread are standard deviations of realisation statistics over the
// realisations.
type Spread struct {
	Mean     Number `json:"mean"`
	Variance Number `json:"variance"`
}

// RealisationStats are the statistics of one realisation.
type RealisationStats struct {
	Moments
	// Kolmogorov is the distance to the reference CDF (data units) or to
	// the standard normal (Gaussian units) for point ensembles; NaN for
	// blocks, whose distribution differs by the support effect.
	Kolmogorov Number `json:"kolmogorov"`
	// RelativeDifference, Z and Verdict judge this realisation's mean
	// against m_ref by the rule of the summary's MeanCheck, with this
	// ensemble's spread of realisation means (data units only).
	RelativeDifference Number  `json:"relative_difference"`
	Z                  Number  `json:"z"`
	Verdict            Verdict `json:"verdict,omitempty"`
}

// Average are averages over realisations.
type Average struct {
	Mean      Number `json:"mean"`
	Variance  Number `json:"variance"`
	Quantiles Series `json:"quantiles"`
}

// Expected are expected realisation statistics (see Definitions).
type Expected struct {
	Mean     Number `json:"mean"`
	Variance Number `json:"variance"`
	// MeanStd is the ergodic standard deviation of a realisation's mean.
	MeanStd Number `json:"mean_std"`
}

// Support compares the variances of blocks and points, averaged over
// realisations.
type Support struct {
	PointVariance         Number `json:"point_variance"`
	BlockVariance         Number `json:"block_variance"`
	Ratio                 Number `json:"ratio"`
	GaussianPointVariance Number `json:"gaussian_point_variance"`
	GaussianBlockVariance Number `json:"gaussian_block_variance"`
	GaussianRatio         Number `json:"gaussian_ratio"`
	// ExpectedGaussianRatio is C̄(V, V)/C(0), the model's block-to-point
	// variance ratio.
	ExpectedGaussianRatio Number `json:"expected_gaussian_ratio"`
}

// DistributionReproduction compares the distribution of each realisation of
// a point ensemble with its reference.
type DistributionReproduction struct {
	Ensemble string `json:"ensemble"`
	Space    string `json:"space"`
	// Probabilities of the curves (0.01 … 0.99).
	Probabilities Series `json:"probabilities"`
	// ReferenceQuantiles, DataQuantiles (declustered when weighted) and the quantiles of
	// each realisation and their average, at Probabilities: the CDF curves
	// and the QQ plot (realisation against reference quantiles).
	ReferenceQuantiles Series   `json:"reference_quantiles"`
	DataQuantiles      Series   `json:"data_quantiles"`
	Realisations       []Series `json:"realisation_quantiles"`
	MeanQuantiles      Series   `json:"mean_quantiles"`
	// Kolmogorov is the distance of each realisation to the reference CDF.
	Kolmogorov     Series `json:"kolmogorov"`
	KolmogorovMean Number `json:"kolmogorov_mean"`
	KolmogorovMax  Number `json:"kolmogorov_max"`
	// Histogram compares frequencies per class.
	Histogram Histogram `json:"histogram"`
}

// Histogram holds class frequencies (fractions of all values, so classes do
// not sum to 1 when values fall outside the edges).
type Histogram struct {
	Edges        Series   `json:"edges"`
	Reference    Series   `json:"reference"` // F(b) − F(a)
	Data         Series   `json:"data"`      // declustered when weighted
	Realisations []Series `json:"realisations"`
}

// VariogramReproduction is the experimental variogram of one ensemble along
// one axis against its model.
type VariogramReproduction struct {
	Ensemble string `json:"ensemble"`
	Support  string `json:"support"`
	// Axis is "major", "semi_major" or "minor" of the longest structure;
	// Direction its world unit vector; Range the structure's range along it.
	Axis      string     `json:"axis"`
	Direction [3]float64 `json:"direction"`
	Range     Number     `json:"range"`
	// Lags are the lattice vectors (cells) and Distance their lengths.
	Lags     [][3]int `json:"lags"`
	Distance Series   `json:"distance"`
	// Model is γ (points) or the regularised γ_V (blocks) at each lag; Sill
	// the model's sill (C(0), or C̄(V, V) for blocks).
	Model Series `json:"model"`
	Sill  Number `json:"sill"`
	// Pairs per lag (of the first realisation); Realisations the γ̂ of each
	// realisation and Mean their average.
	Pairs        []int    `json:"pairs"`
	Realisations []Series `json:"realisations"`
	Mean         Series   `json:"mean"`
}

// Swath is a swath plot along a world axis.
type Swath struct {
	Axis     string `json:"axis"` // "x", "y" or "z"
	Ensemble string `json:"ensemble"`
	// Width of the slices and their centres along the axis.
	Width   Number `json:"width"`
	Centres Series `json:"centres"`
	// DataMean is the data mean per slice (declustered when weighted),
	// DataCount the number of data.
	DataMean  Series `json:"data_mean"`
	DataCount []int  `json:"data_count"`
	// Mean is the ensemble mean per slice (the average of the realisations'
	// slice means), Realisations each realisation's, CellCount the cells.
	Mean         Series   `json:"mean"`
	Realisations []Series `json:"realisations"`
	CellCount    []int    `json:"cell_count"`
}

// Definition states a formula or convention used by the report.
type Definition struct {
	Term string `json:"term"`
	Text string `json:"text"`
}
