// Package declus computes declustering weights: one weight per sample,
// summing to 1, that give clustered samples less influence and isolated
// samples more, so that weighted statistics (the declustered mean, the
// distribution built for a normal-score transform) represent the volume
// rather than the drilling pattern.
//
// Two methods are provided.
//
// # Influence over evaluation locations
//
// KNN and IDW (the declustering task's methods) search the samples around
// every evaluation location g (grid cell centres, the active cells of a
// masked grid, or points) with a neighbor.Index. Location g finds the n_g
// samples of its neighbourhood (the index's Params: ellipsoid, max and min
// samples, octant and hole quotas) and shares one unit among them:
//
//	KNN  λ_gi = 1/n_g
//	IDW  λ_gi = h_gi^−p / Σ_k h_gk^−p      (neighbor.IDWWeights)
//
// with h the ellipsoid-normalised anisotropic distance. The influence of
// sample i is I_i = Σ_g λ_gi and its weight w_i = I_i / Σ_j I_j. A location
// with fewer than MinSamples neighbours gives nothing; a location at the
// position of some of its samples (h = 0) gives its whole unit to them in
// equal parts; a sample no location finds gets weight 0. When no location
// finds any sample the call fails.
//
// Influences are accumulated in 128-bit fixed point (each λ rounded down to
// a multiple of 2⁻⁶²), whose sums do not depend on their order, so the
// weights are bit-identical for any number of goroutines.
//
// # Cell declustering
//
// Cell is the classic method of GSLIB's declus program (Deutsch 1989;
// Deutsch and Journel 1998): cover the samples with a regular grid of cells,
// give each sample a weight inversely proportional to the number of samples
// in its cell, average over several shifted grid origins, and optionally
// choose, among several cell sizes, the one that minimises or maximises the
// declustered mean. It follows declus's conventions (origin, offsets,
// anisotropy factors, choice of size) so that its weights, normalised to
// sum 1, equal the program's.
package declus
