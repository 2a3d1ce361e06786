// Package report validates a simulation ensemble against its data, its
// reference distribution and its variogram model, and renders the result as
// a JSON document and as one self-contained HTML page (docs/math.md
// section 7; the minimum acceptance criteria of Leuangthong, McLennan and
// Deutsch 2004).
//
// Compute takes an Input — the conditioning data (with optional
// declustering weights), the reference geostat.Distribution, the
// normal-score geostat.Variogram, the target grid (regular or masked) with
// its block discretisation, and up to four ensembles (point and block
// values, each in data units and in normal scores) — and returns a Report:
//
//   - a data summary (count, mean, variance, quantiles; declustered when
//     weights are given) and the reference's moments;
//   - per-realisation means, variances and quantiles of every ensemble, their
//     averages, and what to expect of them, including the ergodic
//     fluctuation σ̄²(D, D) ≈ A/|D| of a realisation's mean over the domain
//     (A the integral range of the model);
//   - the verdicts: the simulated mean against m_ref, the average
//     realisation variance against its expected value and the average
//     point quantiles against the reference's, each judged by its
//     own spread over the realisations (z = difference / standard deviation
//     of the realisation statistic: acceptable within 2, marginal within 3,
//     failing beyond; see Check), or by the relative thresholds when there
//     is no spread (a single realisation);
//   - CDF reproduction: the Kolmogorov distance of each point realisation to
//     the reference CDF (and of the normal scores to N(0, 1)), CDF curves,
//     a QQ plot and histograms;
//   - variogram reproduction along the major, semi-major and minor axes of
//     the model's longest structure on the grid's lattice (variogram.Lattice,
//     variogram.AxisLags): point normal scores against γ(h), block normal scores
//     against the regularised γ_V(h) = γ̄(V, V_h) − γ̄(V, V) (BlockAverager)
//     with the same discretisation;
//   - swath plots along x, y and z: data means (declustered when weights
//     are given) and simulated means per slice, with the data counts in a
//     band of their own;
//   - block against point variance (the support effect).
//
// Report.WriteJSON writes every number; Report.WriteHTML writes the page:
// summary cards with the verdict coloured, then inline SVG plots (axes with
// units, legends, realisations as thin translucent lines, the model or the
// reference as a bold line), statistics tables and the definitions of every
// formula used. The page has no script and loads nothing: its CSS is inline,
// its fonts are the reader's system fonts, and all user text is escaped.
//
// The work runs over GOMAXPROCS goroutines, one realisation per unit of
// work; the report does not depend on their number.
//
// go generate ./geostat/report writes an example report of a conditional
// simulation of synthetic drill holes into report-example/ at the
// repository root (the program internal/genexample).
package report

//go:generate go run ./internal/genexample -out ../../report-example
