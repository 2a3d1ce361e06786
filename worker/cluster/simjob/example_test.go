package simjob_test

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
)

// A simulation's spec is self-contained (here 800 cells, shards of two
// realisations): a compute worker decodes it and computes any shard, with
// the values the api worker's inputs give.
func Example() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{20, 10, 4}, [3]float64{5, 5, 5}, geostat.Rotation{})
	v, _ := geostat.NewVariogram(0.1, geostat.Structure{Type: geostat.Spherical, Contribution: 0.9,
		Ellipsoid: geostat.Ellipsoid{Major: 40, SemiMajor: 30, Minor: 10}})
	in := tbsim.Input{Grid: g, Coords: []float64{12, 8, 3, 60, 30, 14}, Values: []float64{-0.5, 1.2}, Variogram: v}
	p := tbsim.DefaultParams()
	p.Realisations, p.Lines, p.Seed = 4, 50, 7

	spec, _ := simjob.Encode(in, p, shard.Sizes{ShardBytes: 2 * 800 * 8})
	job, _ := simjob.Decode(spec)
	fmt.Println("shards:", len(job.Plan.Shards))

	h := &simjob.Handler{}
	s := job.Plan.Shards[1]
	got, _ := h.Compute(context.Background(), "job-1", spec, s.Key())
	want, _ := shard.Compute(context.Background(), in, p, s)
	fmt.Println(s.Key(), "identical:", shard.Digest(got) == shard.Digest(want))
	// Output:
	// shards: 2
	// r2-4.q0-40 identical: true
}
