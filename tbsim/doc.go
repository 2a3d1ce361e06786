// Package tbsim simulates Gaussian random fields by turning bands and
// conditions them to data by kriging of residuals: the conditional
// turning-bands task of the geostat engine. The mathematics, the recipes and
// the test oracles are those of the project's design note docs/math.md
// (sections 2–4, 8 and 9).
//
// # Unconditional fields
//
// A Field sums, for every structure s of the variogram and every realisation,
// L = number_of_lines line processes along the directions of a spherical
// Fibonacci lattice on the half-sphere (z_i = (i+½)/L, φ_i = i·π(3−√5)),
// turned by a Haar-random rotation (a unit quaternion of four normal values)
// drawn per (realisation, structure). Because every direction is then
// uniform, the covariance is exact in expectation for any L; the lattice only
// keeps each realisation's directional error small (about 0.0015 at L = 500).
// Anisotropy enters through the line vectors g = A_sᵀu, so a point x projects
// onto a line as g·(x − x_ref), with x_ref the centre of the simulated region
// (phases stay small with UTM coordinates).
//
// The line process depends on the structure type:
//
//   - spherical and cubic: partition (dilution) processes. The line is cut
//     into unit intervals (one range) with a random offset; interval k carries
//     a random sign ε_k hashed from (line, k) and the value is
//     2√(3c/L)·ε_k·p (spherical) or 2√(210c/L)·ε_k·p(¼ − p²) (cubic), p the
//     position in the interval. Exact for any L, no trigonometry, and ergodic
//     along each line, so a realisation's covariance error is only the
//     directional one. This is the quality upgrade recommended by
//     docs/math.md 2.6 and the choice made here.
//   - exponential, gaussian, generalised Cauchy, spheroidal: spectral lines
//     √(2c/L)·cos(ω_l·x + φ_l) with fixed amplitude, uniform phase and
//     frequency ω_l = ρ_l·A_sᵀu_l. The radius ρ is drawn exactly for the
//     first three (√6·χ₃; 3χ₃/|N₀|; κ√(2Γ)χ₃ with Γ ~ Gamma(α/2) by
//     Marsaglia–Tsang) and by inverse CDF from a table for the spheroidal,
//     built once per alpha from the split of S_α into an inverse multiquadric
//     (a Gaussian scale mixture) and a compactly supported remainder, with a
//     self-test that the spectral mass is 1 within 1e-6.
//   - linear (intrinsic γ = c·r): the stairs process, a random walk with
//     Gaussian steps on intervals of random offset whose semivariogram is
//     exactly linear; it is tabulated over the simulated region. It is
//     allowed only with ordinary kriging conditioning (simple kriging needs a
//     covariance, which the model lacks); Run rejects simple kriging with a
//     linear structure.
//   - nugget: an independent N(0, c0) value per point, including every block
//     sub-point and every datum, drawn from a stream keyed by (realisation,
//     point stream, point index).
//
// Fields are evaluated either at arbitrary points (Field.Points: every line
// evaluated directly) or on regular grids (Field.Grid and the simulation's
// fine grid of block sub-points): the line coordinate is affine along a grid
// row, so a spectral line's values along a row follow the three-term
// recurrence v_{i+1} = 2cos(a)·v_i − v_{i−1}, restarted every 128 nodes from
// exact cos/sin tables and the row's phasor (a per-plane phasor times a
// per-j table, no Sincos per row), six lines at a time; partition
// lines contribute one polynomial piece per interval crossed, accumulated in
// difference arrays and integrated once per row (O(intervals) per line and
// row instead of O(nodes)), all lines of a set sweeping one chunk of rows
// before the next so that the arrays stay in cache. Both paths agree to ~1e-9 at grid nodes (with
// UTM-sized coordinates the cell centres themselves are only known to ~1e-9
// m, and high frequencies turn that into differences up to ~1e-7).
//
// # Conditioning, transforms and outputs
//
// Run and Stream normal-score the data through the distribution, normalise
// the variogram to unit sill (Params.NormaliseVariogram, the default),
// evaluate the same field at the merged data (kriging.Kriger.Data) and at
// every sub-point of the target cells, and condition each sub-point x_k by
//
//	Y_cs(x_k) = Y_s(x_k) + Σ_i λ_ik (y_i − Y_s(x_i)),
//
// the weights λ being solved once per cell around its centre (one
// factorisation for all sub-points of a block) and applied to every
// realisation. Each worker's kriging.Solver keeps the factorisations of
// about a grid row and a quarter of cells (kriging.Params.FactorCache), so
// a cell whose neighbours equal those of a cell of the previous row reuses
// its factorisation (Stats.Kriging.Reused). Simple kriging uses mean 0; ordinary kriging filters the mean.
// A cell with fewer neighbours than the search's MinSamples (ordinary
// kriging: fewer than one) is left unconditioned, a draw from the prior
// (Stats.Unconditioned counts them). Each sub-point is back-transformed and
// the block value is the mean of the back-transformed sub-points; on request
// (Params.SaveGaussian) the block normal score (mean of the sub-points'
// Gaussian values) and the point value — the sub-point nearest the cell
// centre, grid.BlockDiscretisation.Nearest — in data and Gaussian units are
// produced as well. These definitions of the Gaussian outputs are ours
// (docs/math.md section 4).
//
// Without a neighbourhood (Params.Search nil) the search uses the ellipsoid of
// the variogram structure with the longest major range
// (geostat.Variogram.LongestStructure), at most 32 samples and at least 1.
//
// Outputs are column-major by realisation: realisation r of cell c at
// c + r·cells, cells being the grid's cells or a masked grid's active cells;
// cells excluded by the target filter are NaN. Run returns them in memory;
// Stream hands finished tiles (runs of grid rows) to a sink in cell order so
// that they can be written as they come, with memory near a few tiles ×
// sub-points × realisations.
//
// # Reproducibility and parallelism
//
// Every random quantity comes from its own stream, derived from the seed by
// SplitMix64 mixing of (purpose, realisation, structure, line or point) and
// fed to a math/rand/v2 PCG; nothing is drawn from a generator shared in
// scheduling order. Tiles of grid rows are computed in parallel over
// GOMAXPROCS, each node summing its lines in a fixed order and every table
// entry depending only on its own index, so the same request and seed give
// bit-identical output for any GOMAXPROCS and any tile size. Context
// cancellation is checked between tiles; progress is reported per tile.
//
// StreamPart computes a part of a simulation (a range of realisations of a
// run of whole coarse rows; RowStarts maps rows to output cells) with the
// same values as the whole run, so a simulation can be split into shards
// computed anywhere, any number of times (package worker/cluster/shard).
// Prepare does the work shared by the parts of one realisation range (the
// kriger and the data residuals) once; its Stream then simulates any run of
// rows of that range with StreamPart's values.
//
// VariogramReproduction computes experimental variograms of realisations
// along the axes of the model's main ellipsoid, for comparison with the
// model (points) or the regularised model (blocks).
package tbsim
