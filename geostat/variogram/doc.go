// Package variogram computes experimental semivariograms of scattered and
// gridded data and fits nested variogram models (geostat.Variogram) to them:
// the variogram-modelling step between the normal-score transform and the
// simulation.
//
// # Experimental variograms of scattered data
//
// Compute follows the conventions of GSLIB's gamv so that its results can be
// compared with it. A Direction is an azimuth (degrees clockwise from north)
// and a dip (degrees, positive downwards), with half-window tolerances on
// both, a horizontal bandwidth and a vertical band height; an
// omnidirectional direction accepts every pair. A pair of samples i, j with
// separation h = x_j − x_i, length |h|, horizontal length h_xy, is accepted by
// a direction with horizontal unit vector (u_x, u_y) = (sin az, cos az) when
//
//	|cos θ_az| = |h·u|/h_xy ≥ cos(azimuth tolerance)   (always true when h_xy = 0)
//	|u_x h_y − u_y h_x| ≤ bandwidth
//	|cos θ_dip| = |s·h_xy·cos dip − h_z·sin dip|/|h| ≥ cos(dip tolerance)
//	|cos dip·h_z + sin dip·s·h_xy| ≤ band height
//
// with s = ±1 the sign of h·u (the horizontal length is signed along the
// direction). Both h and −h are tested, so a direction and its opposite are
// the same. Lag k (k = 0, 1, …, NLags) collects the pairs with
//
//	k·d − t ≤ |h| ≤ k·d + t  and  0 < |h| ≤ (NLags + ½)·d
//
// for the lag distance d and lag tolerance t (default d/2): both ends of the
// window are closed, as in gamv, so with t = d/2 a pair exactly on a boundary
// counts in both lags, and with t > d/2 windows overlap. Each lag reports
//
//	γ̂ = Σ w_ij (z_j − z_i)² / (2 Σ w_ij),  centroid = Σ w_ij |h_ij| / Σ w_ij,
//
// the number of pairs and the sum of pair weights, with w_ij = w_i·w_j the
// product of the samples' declustering weights (1 without weights). The data
// variance is the weighted population variance Σ w_i (z_i − m)²/Σ w_i.
//
// Differences from gamv (all deliberate):
//
//   - dip is positive downwards (the rotation convention of the objects);
//     gamv's dip is negative downwards, so gamv's dip is −Dip;
//   - gamv's first lag (pairs with |h| = 0, including every sample paired
//     with itself) is not reported: lag k here is gamv's lag k + 2, and pairs
//     of coincident samples are left out;
//   - gamv counts every pair twice in a direction whose azimuth tolerance is
//     at least 90°; here every pair counts once, so gamv's pair counts there
//     are twice ours (γ̂ and centroids are the same);
//   - samples with a NaN value are left out; gamv has trimming limits instead;
//   - gamv has no declustering weights; computations are in float64 (gamv
//     uses float32 for coordinates and angles).
//
// A pair whose angle or band offset sits exactly on a tolerance is decided
// by rounding, in gamv as here (gamv accepts equality in float32, this
// package compares in float64).
//
// Pairs are not enumerated all against all. A direction whose accepted
// pairs lie in a thin cylinder around its line (bounded by the bandwidth,
// band height and tolerances) gets a pass of its own: the samples are sorted
// into square cells across the line and by their position along it, and
// each is paired with the samples of the 3 × 3 cells around its own within
// the largest lag distance along the line. The other directions (an
// omnidirectional one, wide bands) share a pass over a 3-D grid of cells a
// quarter of the largest lag distance wide, visiting only the cell pairs that
// can hold a pair within reach. Every candidate gets the exact test above.
// The passes run in parallel over fixed chunks of cells whose partial sums
// are added in a fixed order: the result is the same, bit for bit, for any
// number of goroutines.
//
// # Experimental variograms of gridded data
//
// Lattice computes γ̂ of a field on a regular grid for an integer lag
// vector, and AxisLags picks lattice lags along a direction.
//
// # Fitting
//
// Fit adjusts a nugget and up to three nested structures of any of the seven
// types of geostat to one or more directional experimental variograms by
// weighted least squares, with bounds, several starts and an optional
// total-sill constraint, and returns a geostat.Variogram.
package variogram
