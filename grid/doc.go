// Package grid describes regular 3D grids of the geoscience objects: cell
// centres in world coordinates, the x-fastest cell ordering, masked grids
// whose attributes cover the active cells only, and block discretisation
// (the sub-cell points a block estimate or simulation averages over).
//
// A grid is given by its origin (the world position of the corner of cell
// (0, 0, 0), not a cell centre), its size (nx, ny, nz), its cell size
// (dx, dy, dz) along its own axes, and a rotation (geostat.Rotation, identity
// when absent). The centre of cell (i, j, k) is
//
//	origin + R · ((i + ½)·dx, (j + ½)·dy, (k + ½)·dz)
//
// and its flat index is i + nx·(j + ny·k).
package grid
