// Package ensemble post-processes the realisations of a simulation: per-cell
// (location-wise) statistics and the classification of blocks into material
// categories by expected loss or profit.
//
// # Layout and streaming
//
// An ensemble is a table of cells × realisations. It is stored, like the
// ensemble attributes the simulation writes, realisation-major: one column
// per realisation, one row per cell (one Parquet column per realisation,
// row groups of consecutive cells). The package reads it as a sequence of
// Tiles, blocks of consecutive cells for every realisation, from a Source:
// a Parquet reader that returns a row group at a time, the tiles of a running
// simulation (TileFromFlat over a tbsim.Tile), or columns held in memory
// (NewColumnsSource). Process reads pieces of about 2¹⁸ values (a tile or a
// part of one) into up to 16 buffers, reading the next pieces on another
// goroutine while the current one is processed, so a 10,000,000-cell ×
// 100-realisation ensemble needs 16 such pieces (32 MiB) plus the outputs,
// never the whole table nor a whole row group.
//
// Within a tile, goroutines (geostat.Workers) take chunks of cells, transpose
// each chunk once to cell-major order in a cache-sized buffer and hand every
// cell's values to the Reducers: LocationWise (statistics) and Classifier
// (loss or profit classification). Several reducers share one pass. Every
// output of a cell is computed from that cell's values alone, in a fixed
// order, so results are bit-identical for any number of goroutines and any
// tiling.
//
// # Missing values
//
// NaN and ±Inf realisation values are missing: a cell's results are those of
// its n finite values (n may differ from cell to cell); a cell without
// finite values gets NaN statistics and NoCategory.
//
// # Conventions
//
// Variance divides by n (population variance, numpy's default). Quantiles
// interpolate linearly between order statistics at position q·(n − 1)
// (numpy's default "linear" method). P(X > c) and E[X | X > c] count values
// strictly greater than the cutoff. Output names follow the tasks: "min",
// "max", "mean", "variance", "Quantile: 0.1", "Prob>2.0", "Mean>2.0" (see
// FormatNumber). The loss and profit rules are derived in docs/ensemble.md.
package ensemble
