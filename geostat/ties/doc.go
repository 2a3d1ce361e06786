// Package ties breaks ties in a data set (despiking) so that every datum gets
// a distinct value and therefore a distinct normal score.
//
// Many equal values (detection limits, rounded assays, zero grades) map to
// one normal score: a spike in the Gaussian histogram and a biased
// variogram. Break replaces each group of exactly equal values by strictly
// increasing values inside a small fraction of the gap to the neighbouring
// distinct values, ordering the members of a group by local-average
// despiking (Verly 1984; the GSLIB book): a datum surrounded by higher
// values ranks higher. The recipe is that of the project's design note,
// docs/math.md section 6:
//
//  1. A tie group is a maximal set of exactly equal float64 values (NaN is
//     never tied and stays NaN; ±Inf values are left unchanged).
//
//  2. For each member i of a group, the local mean m_i is the arithmetic
//     mean of the original values of the up-to-max_samples nearest other
//     data inside the search ellipsoid (the anisotropic search of package
//     neighbor, the datum itself excluded by index). With fewer than
//     max(1, min_samples) such neighbours, or without a neighbourhood, m_i
//     is the group value itself (neutral).
//
//  3. A random key u_i is a SplitMix64 hash of (seed, original index of i):
//     it depends on what the datum is, never on the order of processing.
//
//  4. The group is ordered by (m_i, u_i, original index), ascending.
//
//  5. With group value v, next lower distinct value v⁻ and next higher v⁺,
//     Δ = min(v − v⁻, v⁺ − v) over the finite ones (Δ = max(|v|, 1)·1e-6
//     when the group has no distinct neighbour), δ = τΔ/k with τ = ½ and
//     k the group size, the q-th member (q = 1..k) gets
//
//     z'_q = v + (q − (k+1)/2)·δ
//
//     so the group mean is preserved and the values stay strictly inside
//     (v − Δ/4, v + Δ/4): the order of distinct values never changes. At a
//     physical lower bound (Options.LowerBound) the group at the global
//     minimum uses the one-sided z'_q = v + (q − 1)·τ(v⁺ − v)/k instead,
//     which keeps every value ≥ v. When δ is too small to separate the
//     values in float64, consecutive representable numbers around v are used.
//
//  6. Untied values are copied bit for bit, so tie-free data come back
//     unchanged.
//
// Locations are flat world coordinates (x0, y0, z0, x1, ...), one point per
// value: point sets, the mid-points of downhole intervals, or the cell
// centres of regular and masked grids (grid.Grid.CellCentres,
// grid.Masked.ActiveCentres).
//
// The local means are computed in parallel over geostat.Workers(ctx)
// goroutines; every number depends only on the data, the original indices
// and the seed, so the output is bit-identical for any GOMAXPROCS and for
// any permutation of the input (see Options.OriginalIndex).
package ties
