// Package synthetic builds deterministic synthetic data sets for the geostat
// benchmarks and the worker's demo: a drill-hole-like point set with downhole intervals, a skewed
// (lognormal-like) grade that is correlated in space, regular and masked
// grids over the same box, a two-structure anisotropic rotated variogram in
// Gaussian units and the distribution table of the grades.
//
// Everything is a function of a Spec and its seed: the same Spec gives
// bit-identical slices on any machine and any GOMAXPROCS (generation is
// sequential and uses counter-derived math/rand/v2 PCG streams, one per
// purpose). The grade does not come from the tbsim package, so the cases
// can benchmark and test it independently: the log-grade is a sum of random
// cosines whose wave vectors live in each variogram structure's isotropic
// space (a spectral approximation of a gaussian-shaped covariance with the
// structure's ranges and rotation) plus a nugget-like white noise.
//
// The specs of the benchmark sizes follow the algorithm issues:
//
//	           knn                        kriging                         simulation
//	small      5,000 uniform / 16,000     300 data / 4,000                300 data / 5,000
//	medium     50,000 uniform / 1,000,000 2,000 data / 200,000 (10 m)     2,000 data / 1,000,000
//	large      500,000 / 10,000,000       20,000 data / 2,000,000         20,000 data / 10,000,000
//
// (sources / grid cells). Medium cases live in a 1000 × 1000 × 200 m box;
// large ones in a 2500 × 4000 × 200 m box, so that data density and cell
// size stay those of the medium case.
package synthetic
