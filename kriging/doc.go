// Package kriging estimates points and blocks by simple and ordinary kriging
// in a moving anisotropic neighbourhood, and exposes the kriging weights so
// that one factorisation serves many value vectors (the realisations of a
// turning-bands simulation, docs/math.md section 3).
//
// # Use
//
// New merges exact duplicate data, builds the neighbourhood index
// (package neighbor) and prepares the covariance model. Kriger.Estimate
// kriges many targets in parallel into an Output (estimate, variance and
// diagnostics). For the weights themselves, each goroutine takes a Solver
// and calls Solve per target: the Solution holds the neighbours (indices into
// Kriger.Data), the weights of the block and of each of its sub-points, the
// kriging variance and the Lagrange multiplier.
//
// # Systems
//
// With C the covariance of the variogram (geostat.Variogram), x_i the n
// neighbours and x the target:
//
//	K_ij = Σ_s c_s ρ_s(|A_s(x_i − x_j)|) + c0·1[i = j]     (nugget on the diagonal only)
//	k_i  = Σ_s c_s ρ_s(|A_s(x_i − x)|)                     (no nugget, even at x = x_i)
//
//	simple:    K λ = k,               z* = m + Σ λ_i (z_i − m),  σ² = C(0) − λᵀk
//	ordinary:  K λ + μ 1 = k, 1ᵀλ = 1, z* = Σ λ_i z_i,           σ² = C(0) − λᵀk − μ
//
// with C(0) = c0 + Σ c_s. Ordinary kriging reuses the Cholesky factor of K:
// a = K⁻¹k, b = K⁻¹1, μ = (1ᵀa − 1)/(1ᵀb), λ = a − μ b. In this sign
// convention one datum at distance 5 of a spherical model of range 10 gives
// λ = 1, μ = C(5) − C(0) = −0.6875 and σ² = 1.375 (docs/math.md 8.1).
//
// Because the nugget is filtered from k, a target on a datum reproduces it
// exactly only when c0 = 0 (the convention of TBSIM, where the simulated
// nugget is independent at the target).
//
// Blocks are discretised into grid.BlockDiscretisation sub-points x_p (the
// offsets of grid.BlockDiscretisation.LocalOffsets for Params.CellSize,
// rotated by Params.Rotation) around the block centre; all sub-points use
// the neighbours found around the centre and one factorisation of K. The
// sub-point weights λ_p solve the point systems of x_p; the block weights
// are their mean λ̄ and solve the system of the mean right-hand side
// k̄ = (1/N) Σ_p k_p; the block variance is
//
//	σ²_V = C̄(V,V) − λ̄ᵀk̄ − μ̄,   C̄(V,V) = (1/N²) Σ_p Σ_q Σ_s c_s ρ_s(|A_s(x_p − x_q)|) + c0/N
//
// (μ̄ = 0 for simple kriging), the nugget counting on the N coincident pairs
// only (docs/math.md section 4).
//
// # Intrinsic models
//
// A linear structure has no covariance; with ordinary kriging its
// generalised covariance −c·r (what geostat.Correlation returns) is used in
// K and k, and C(0) counts it as 0. Such a K is only conditionally positive
// definite, so the solver factorises K + s·11ᵀ instead: adding a constant to
// every covariance leaves the ordinary kriging weights, multiplier and
// variance unchanged (the unbiasedness condition absorbs it), and for s
// large enough the matrix is positive definite. s starts at
// 2·max|K_ij| + Σ c_linear and grows ×8 up to three times. Simple kriging
// with a linear structure is an error naming the structure.
//
// # Numerical safeguards
//
// No jitter is added to the diagonal. Exact duplicate coordinates are merged
// up front (values averaged, Stats.Duplicates). A Cholesky pivot below 1e-10
// times its diagonal entry marks the system as numerically singular
// (near-duplicate data, dense data under a Gaussian model without nugget);
// the solver then adds a ridge δ·I, δ = 1e-9·K_ii growing ×10 until the
// factorisation succeeds, and counts the system in Stats.Regularised.
// Results never contain NaN for a solved target. Kriging variances are
// clamped at 0: values down to −1e-9 times the prior variance are rounding
// (for example at a datum); more negative values, which would indicate a
// numerical failure, are also clamped and counted in
// Stats.NegativeVariances.
//
// # Diagnostics
//
// Output holds, per target and on request, the kriging variance, the number
// of samples, their mean anisotropic distance in the search ellipsoid
// (neighbor distances, ≤ 1), and:
//
//	slope of regression  b  = Cov(Z_V, Z*)/Var(Z*) = λᵀk̄ / λᵀKλ = λᵀk̄ / (λᵀk̄ − μ)
//	                        = (BV − KV − μ)/(BV − KV − 2μ)
//	kriging efficiency   KE = (BV − KV)/BV
//
// with BV = C̄(V,V) the prior variance of the target's support (C(0) for a
// point), KV = σ²_V and λᵀKλ = λᵀk̄ − μ from the ordinary kriging system.
// With μ ≤ 0, the usual case in this convention, b is the familiar
// (BV − KV + |μ|)/(BV − KV + 2|μ|); for simple kriging μ = 0 and b = 1.
// For intrinsic models BV is not finite and both are NaN.
//
// A target with fewer than Params.Search.MinSamples neighbours (ordinary
// kriging: fewer than max(1, MinSamples)) gets NaN estimate, variance and
// diagnostics and 0 samples. Simple kriging with MinSamples = 0 and no
// neighbour returns the mean and the prior variance.
//
// # Speed and determinism
//
// The data and the sub-point offsets are mapped once into every structure's
// isotropic space (relative to the centre of the data's bounding box), so a
// covariance is a Euclidean distance and one correlation evaluation. When the
// merged data are at most Params.TableLimit (DefaultTableLimit = 4000), the
// data-to-data covariances are kept in a table (a packed lower triangle),
// each computed the first time a system needs it, and K is a gather: only
// the pairs that share a neighbourhood are ever computed, a small part of
// all pairs when the neighbourhood is small against the data's extent, so
// New does not pay for the table. The merged data are numbered in a spatial
// order (recursive median splits; input order when the data already run
// along drill holes), so that the entries of one neighbourhood lie in few
// cache lines of the table: Kriger.Data and Kriger.MergedIndex give that
// numbering. Systems and factors are stored as packed lower triangles (row
// i at i(i+1)/2).
//
// Two engines solve the systems, each with its own kind of factorisation.
//
// A Solver (Kriger.NewSolver, Solver.Solve) solves any sequence of targets.
// It puts the neighbours in increasing index order and keeps the Cholesky
// factorisations of its Params.FactorCache (default DefaultFactorCache =
// 256) most recently used neighbour sets, found by a hash of the set; a
// target with the same neighbours as an earlier one reuses its
// factorisation (Stats.Reused): the previous target's set, and on a grid
// often the set of a cell of the previous row. A factorisation depends on
// the set alone, so the weights depend only on the neighbour set and the
// target, never on what the Solver solved before. Solving does not
// allocate in steady state (cache entries are allocated as the cache first
// fills).
//
// Kriger.Estimate runs another engine, unexported, that exploits the order
// of its targets: consecutive targets mostly differ by one to three
// neighbours, so it updates the previous target's factorisation
// (K = L D Lᵀ), deleting the neighbours that left and appending those that
// arrived, instead of factorising anew (Stats.Updated); a target then costs
// one forward substitution. The rows of a fresh factorisation are ordered by
// distance to a target a few steps ahead, so the neighbours about to leave
// are in the last rows, where deleting them is cheap. An updated
// factorisation equals a fresh one to rounding (the tests hold Estimate to
// 1e-9 of a dense solve along grid rows) but depends on the targets before
// it; it is refactorised once the deletions since its fresh factorisation
// have cost as much as one (its rows no longer put the leaving data last)
// and after 32 updates at most, and Estimate starts every chunk of
// 4096 targets afresh, so its output is a function of the request alone and
// bit-identical for any GOMAXPROCS, and even the Stats do not depend on the
// scheduling. Estimate's results equal those of Solve's weights to
// rounding, not bit for bit.
package kriging
