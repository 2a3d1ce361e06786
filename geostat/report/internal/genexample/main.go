// Command genexample writes an example simulation report, to look at the
// page and its plots: a conditional turning-bands simulation (package
// tbsim) of synthetic drill-hole grades, validated by package report into
// report.html and report.json, with a screenshot report.png when Chromium
// is installed. From the repository root:
//
//	go generate ./geostat/report
//
// writes them into report-example/ (which git ignores); -out names another
// directory. Nothing it writes belongs in the repository.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/report"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/tbsim"
)

func main() {
	out := flag.String("out", "report-example", "directory to write report.html, report.json and report.png into")
	seed := flag.Uint64("seed", 7, "seed of the synthetic data and of the simulation")
	flag.Parse()
	if err := run(*out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "genexample:", err)
		os.Exit(1)
	}
}

// run simulates, computes the report and writes it into dir.
func run(dir string, seed uint64) error {
	ctx := context.Background()
	g, err := grid.New([3]float64{1000, 2000, 300}, [3]int{48, 40, 10}, [3]float64{10, 10, 5}, geostat.Rotation{})
	if err != nil {
		return err
	}
	ell := geostat.Ellipsoid{Major: 120, SemiMajor: 60, Minor: 15, Rotation: geostat.Rotation{DipAzimuth: 60}}
	v, err := geostat.NewVariogram(0.05, geostat.Structure{Type: geostat.Exponential, Contribution: 0.95, Ellipsoid: ell})
	if err != nil {
		return err
	}
	data, err := drillholes(ctx, g, v, seed)
	if err != nil {
		return err
	}
	z, p, err := geostat.ScoreTable(data.Values, data.Weights)
	if err != nil {
		return err
	}
	ref, err := geostat.NewDistribution(z, p, geostat.Tail{Bound: 0, Power: 1}, geostat.Tail{Bound: 1.5 * z[len(z)-1], Power: 1})
	if err != nil {
		return err
	}
	disc := grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}
	prm := tbsim.DefaultParams()
	prm.Realisations = 24
	prm.Lines = 200
	prm.Seed = int64(seed)
	prm.Method = kriging.Simple
	prm.Discretisation = disc
	prm.SaveGaussian = true
	sim, err := tbsim.Run(ctx, tbsim.Input{Grid: g, Coords: data.Coords, Values: data.Values, Variogram: v, Distribution: ref}, prm)
	if err != nil {
		return fmt.Errorf("simulation: %w", err)
	}
	in := &report.Input{
		Context: report.Context{Title: "Synthetic deposit — Au", Details: []report.Detail{
			{Label: "Project", Value: "Synthetic example"}, {Label: "Domain", Value: "Oxide"},
			{Label: "Variable", Value: "Au"}, {Label: "Method", Value: fmt.Sprintf("Conditional turning bands, %d lines", prm.Lines)}}},
		Data:      data,
		Reference: ref, Variogram: v, Grid: g, Discretisation: disc,
		PointSimulations: sim.Point, PointSimulationsNormalScore: sim.PointGaussian,
		BlockSimulations: sim.Block, BlockSimulationsNormalScore: sim.BlockGaussian,
		Units: "g/t",
	}
	r, err := report.Compute(ctx, in, nil)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	page := filepath.Join(dir, "report.html")
	if err := writeFile(page, r.WriteHTML); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "report.json"), r.WriteJSON); err != nil {
		return err
	}
	fmt.Println("wrote", page)
	return screenshot(page, filepath.Join(dir, "report.png"))
}

// drillholes samples a Gaussian field of model v (one unconditional
// turning-bands realisation at the cell centres) along vertical holes, one
// sample per cell layer, as lognormal grades: a regular pattern of collars
// every 8 × 8 cells, jittered, and an infill pattern every 2 × 2 cells in
// the north-east corner, whose samples get the declustering weight 0.25.
func drillholes(ctx context.Context, g *grid.Grid, v *geostat.Variogram, seed uint64) (report.Data, error) {
	prm := tbsim.DefaultParams()
	prm.Realisations = 1
	prm.Seed = int64(seed) + 1
	truth, err := tbsim.Run(ctx, tbsim.Input{Grid: g, Variogram: v}, prm)
	if err != nil {
		return report.Data{}, fmt.Errorf("synthetic field: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	type collar struct {
		i, j   int
		weight float64
	}
	var collars []collar
	for j := 4; j < g.Size[1]; j += 8 {
		for i := 4; i < g.Size[0]; i += 8 {
			collars = append(collars, collar{i + rng.IntN(3) - 1, j + rng.IntN(3) - 1, 1})
		}
	}
	for j := g.Size[1] * 3 / 4; j < g.Size[1]; j += 2 {
		for i := g.Size[0] * 3 / 4; i < g.Size[0]; i += 2 {
			collars = append(collars, collar{i, j, 0.25})
		}
	}
	var d report.Data
	for _, c := range collars {
		for k := range g.Size[2] {
			p := g.CellCentre(c.i, c.j, k)
			d.Coords = append(d.Coords, p[:]...)
			d.Values = append(d.Values, math.Exp(0.4+0.9*truth.Block[g.Index(c.i, c.j, k)]))
			d.Weights = append(d.Weights, c.weight)
		}
	}
	return d, nil
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// screenshot renders page into png with a headless Chromium, when one is
// installed.
func screenshot(page, png string) error {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		fmt.Println("no chromium: no screenshot")
		return nil
	}
	profile, err := os.MkdirTemp("", "genexample-chromium")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	abs, err := filepath.Abs(page)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+profile, "--window-size=1400,4460", "--screenshot="+png, "file://"+abs)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium: %w: %s", err, out)
	}
	fmt.Println("wrote", png)
	return nil
}
