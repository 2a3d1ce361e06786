// Package blockmodel is the geometry of the block model area: the four
// kinds of block model (regular, fully-sub-blocked, flexible and
// variable-octree), their size options, origin and rotation, the indices,
// centroids and extents of their blocks and sub-blocks, the canonical row
// order, the mapping between a row's identity and its row index, the system
// columns, the rules of user columns, the units table and the records the
// routes marshal. It is pure computation over flat slices: no I/O.
//
// # Frame
//
// A model is a grid of nx·ny·nz parent blocks of size (bx, by, bz). Its
// origin is the minimum corner of the model in its own (IJK) frame. A
// point with local coordinates u (origin at the model corner, axes along
// the model) is at the world position
//
//	w = origin + R · u
//
// where R is the local-to-world matrix of the model's rotation. The
// rotation is given as a list of clockwise elementary rotations
// (block_rotation) and normalised to the intrinsic Z-X-Z angles
// [a, d, p] (normalized_rotation), which are the (dip_azimuth, dip, pitch)
// of the geoscience rotation component; R is geostat.Rotation{a, d, p}.Matrix(),
// the matrix the engine's grids use, so a regular model and a
// regular-3d-grid object of the same geometry have bit-identical centres.
//
// # Rows
//
// Rows are in canonical order: parents with i fastest, then j, then k
// (flat parent index p = i + nx·(j + ny·k)), and within a parent the
// sub-blocks by ascending sidx, the linear index (x fastest) of the
// sub-block's minimum-corner cell on the parent's sub-cell grid. A sub-block
// covers the sub-cells start (inclusive) to end (exclusive) per axis; its
// local centroid is parent corner + (start + end)/2 · parent size / n and
// its extent (end − start) · parent size / n.
//
// A regular model has one row per parent. The rows of a sub-blocked model
// are data (Blocks): a parent column and start/end corner columns, or the
// initial "every parent whole" state that needs no columns.
package blockmodel
