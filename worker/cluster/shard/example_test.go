package shard_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/objects"
)

// A job planned in tiles of at most 40 cells and shards of at most 320
// bytes (one realisation of 40 cells, two of the last tile's 20), computed
// in reverse order and assembled, gives the Parquet file of the
// single-process run byte for byte.
func Example() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{10, 10, 1}, [3]float64{10, 10, 10}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 50, SemiMajor: 50, Minor: 50}})
	in := tbsim.Input{Grid: g, Coords: []float64{5, 5, 5, 95, 95, 5}, Values: []float64{1.5, -0.5}, Variogram: v}
	p := tbsim.DefaultParams()
	p.Realisations = 3
	ctx := context.Background()
	newWriter := func() *objects.TableWriter {
		types := []objects.DataType{objects.TypeFloat64, objects.TypeFloat64, objects.TypeFloat64}
		w, _ := objects.NewTableWriter(&bytes.Buffer{}, types, objects.EnsembleColumnNames("v", 3), nil)
		return w
	}

	single := newWriter()
	_ = shard.WriteSingle(ctx, in, p, []*objects.TableWriter{single})
	want, _ := single.Close()

	starts, _ := tbsim.RowStarts(in)
	plan, _ := shard.NewPlan(starts, p.Realisations, shard.Outputs(p), shard.Sizes{TileBytes: 40 * 3 * 8, ShardBytes: 40 * 8})
	blobs := map[string][]byte{}
	for i := len(plan.Shards) - 1; i >= 0; i-- {
		s := plan.Shards[i]
		blobs[s.Key()], _ = shard.Compute(ctx, in, p, s)
	}
	assembled := newWriter()
	err := shard.Assemble(ctx, plan, []*objects.TableWriter{assembled}, func(_ context.Context, s shard.Shard) ([]byte, error) {
		return blobs[s.Key()], nil
	})
	got, _ := assembled.Close()
	fmt.Println(len(plan.Tiles), "tiles,", len(plan.Shards), "shards; first:", plan.Shards[0].Key())
	fmt.Println("same file:", got == want, err)
	// Output:
	// 3 tiles, 8 shards; first: r0-1.q0-4
	// same file: true <nil>
}
