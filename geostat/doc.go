// Package geostat is the vocabulary of the geostat engine: the rotation
// convention of the geoscience objects, anisotropy ellipsoids, variogram
// models with their covariances, the non-parametric distribution with its
// normal-score transform. It does not import Apache Arrow: the column
// adapters live in package geostat/arrowcol.
//
// It imports no other package of the project; every other package speaks in
// its terms.
//
// # Coordinates
//
// Points are flat []float64 slices (x0, y0, z0, x1, y1, z1, ...) in world
// coordinates: x East, y North, z Up.
//
// # Rotation and anisotropy
//
// A Rotation (dip azimuth, dip, pitch, degrees, all clockwise) gives the
// local-to-world matrix
//
//	R = Rz(dip_azimuth) · Rx(dip) · Rz(pitch),  world = R · local
//
// with local x the major axis, local y the semi-major axis and local z the
// minor axis (the "Leapfrog convention" of the objects). An Ellipsoid adds the
// three ranges; its Anisotropy is the matrix A = D⁻¹ Rᵀ with D = diag(major,
// semi_major, minor), and the anisotropic (reduced) distance of a lag h is
// |A h|. A point is inside a search ellipsoid iff its reduced distance is ≤ 1.
//
// # Variograms
//
// A Variogram is a nugget plus structures of seven types (spherical,
// exponential, gaussian, cubic, spheroidal, generalised Cauchy, linear), each
// with its own contribution and anisotropy:
//
//	γ(h) = c0·1[h ≠ 0] + Σ_s c_s (1 − ρ_s(|A_s h|))
//	C(h) = c0·1[h = 0] + Σ_s c_s ρ_s(|A_s h|)
//
// The unit-range correlations ρ follow the range conventions of the project's
// design note (docs/math.md section 1.3): spherical and cubic reach the sill
// at the range; exponential exp(−3r) and gaussian exp(−3r²) use the practical
// (95 %) range; the spheroidal family is Seequent's linearised inverse
// multiquadric scaled to 96.27 % at the range; the generalised Cauchy model is
// scaled to its 95 % practical range; linear is the intrinsic model γ = c·r.
//
// # Distributions
//
// A Distribution is a non-parametric CDF table (z_j, p_j) with GSLIB-style
// power-model tails. NormalScore maps data to Gaussian values y = G⁻¹(F(z))
// and BackTransform maps them back, z = F⁻¹(G(y)), both interpolating linearly
// in probability so that the round trip is exact up to rounding.
// NormalScoresAll and BackTransformsAll transform large arrays in parallel
// (NaN, a missing value, stays NaN). BuildDistribution builds the table from
// data values and optional declustering weights (sorted values, mid-step
// cumulative probabilities of the normalised weights, optional tails);
// LowerPowerTail and UpperPowerTail convert the continuous-distribution
// task's tails, whose powers lie in (0, 1], into the object's power model
// (the lower power stored as its reciprocal, ≥ 1 as the schema requires).
// Declustering weights come from the subpackage declus.
package geostat
