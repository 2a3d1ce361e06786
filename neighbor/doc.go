// Package neighbor finds the anisotropic neighbours of target points among
// source points, the moving neighbourhood of kriging and simulation, and
// computes the KNN estimate (the mean of the neighbours' values) and the
// inverse-distance (IDW) estimate over the same neighbours.
//
// # Search
//
// A search ellipsoid (geostat.Ellipsoid) defines the anisotropic distance
// r = |A (s − t)| between a source s and a target t, with A = D⁻¹ Rᵀ the
// transform into the ellipsoid's isotropic space. A source is a candidate
// when r ≤ 1 (boundary included, up to RadiusTolerance). The neighbours are
// the candidates taken in order of increasing distance, equal distances in
// order of source index, up to Params.MaxSamples, optionally at most
// Params.MaxPerOctant per octant of the ellipsoid's local frame and at most
// Params.MaxPerHole per drill hole (docs/math.md section 3.4). A target with
// fewer than Params.MinSamples neighbours gets none.
//
// NewIndex maps the sources once into isotropic space (relative to the centre
// of their bounding box, to keep coordinates small) and builds a static
// kd-tree over them: flat arrays, an implicit binary layout, leaf buckets of
// 8 to 16 points stored contiguously. An unconstrained query walks the tree
// depth first, nearer child first, with incremental box distances (no
// recursion), and keeps the k best candidates in a sorted list (k ≤ 32) or a
// bounded max-heap, so the work does not grow with the number of candidates
// inside a large ellipsoid. Searcher.SearchSet, for callers that order the
// neighbours themselves (kriging sorts them by index), appends candidates to
// an unordered buffer of 4k instead and cuts it to the k nearest by a
// branch-free quickselect when it fills and at the end. A Searcher seeds each
// query's pruning bound with the distances to the previous query's
// neighbours. With such a bound it keeps a local candidate list instead of
// walking the tree: every point within 1.3 times the bound of a centre put a
// little ahead of the target along its last step, rebuilt by one walk when a
// target's bound leaves it. Consecutive grid nodes then scan a short
// contiguous list, one list serving several targets. A Searcher counts the points a list's build and scans
// examine against what walks would have, and pauses lists (for 32 targets,
// doubling while they keep failing) where they do not pay: targets in
// random order, or steps long against the neighbourhood. A
// constrained query (octant or
// hole quotas) walks the tree best first instead, producing the candidates in
// (distance, index) order until the quotas are met.
//
// Distances computed by the index are bit-identical on every platform: images
// are A(p − o) with o = Index.Origin(), and squared distances are summed as
// dx² + dy² + dz² in that order, without fused multiply-adds.
//
// Sources whose value is NaN are not indexed. Results are exact: they equal
// a brute-force scan under the same rules.
//
// # Batches
//
// Index.SearchAll, Index.Mean and Index.IDW query many targets (flat xyz, for example
// grid.Grid.CellCentres or grid.Masked.ActiveCentres) on geostat.Workers(ctx)
// goroutines, writing results by target index, so the output does not depend
// on the number of goroutines. They stop early when the context is cancelled
// and report progress after every chunk of targets.
//
// # Inverse distance
//
// Index.IDW weighs the neighbours of a target by λ_i ∝ h_i^−power, h_i their
// anisotropic distance (the ellipsoid-normalised distance above), normalised
// to sum 1 (IDWWeights). A target at anisotropic distance 0 from some
// neighbours gets the mean of their values: exactly the sample's value when
// there is one.
package neighbor
