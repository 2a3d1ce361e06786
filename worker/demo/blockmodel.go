package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/geostat/synthetic"
)

// The demo's block model: a regular model with the geometry of the demo
// grid, which the service's SeedDemo creates in the block model area, and
// the path of its block-model geoscience object (what tasks reference).
const (
	BlockModelName = "demo-block-model"
	BlockModelPath = "demo/" + BlockModelName + ".json"
)

// BlockModelBody returns the create body (POST …/block-models) of the
// demo's block model: the case grid's origin, counts, cell size and
// rotation (as the rotations z, x, z of its dip azimuth, dip and pitch).
func BlockModelBody(c *synthetic.Case) ([]byte, error) {
	g := c.Grid
	r := g.Rotation
	return json.Marshal(map[string]any{
		"name":         BlockModelName,
		"description":  "A regular block model over the deposit (the demo grid's geometry)",
		"comment":      "created by the demo",
		"object_path":  "demo",
		"size_unit_id": "m",
		"model_origin": map[string]float64{"x": g.Origin[0], "y": g.Origin[1], "z": g.Origin[2]},
		"block_rotation": []map[string]any{
			{"axis": "z", "angle": r.DipAzimuth}, {"axis": "x", "angle": r.Dip}, {"axis": "z", "angle": r.Pitch}},
		"size_options": map[string]any{"model_type": "regular",
			"n_blocks":   map[string]int{"nx": g.Size[0], "ny": g.Size[1], "nz": g.Size[2]},
			"block_size": map[string]float64{"x": g.CellSize[0], "y": g.CellSize[1], "z": g.CellSize[2]}},
	})
}

// BlockModelCommands returns the shell commands, for after Commands, that
// query the kriged column of the demo's block model (model bm) as CSV: a
// query job, polled until it is done, then its file through the signed
// download URL. It prints the first blocks of the model.
func BlockModelCommands(base, bm string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# Query the block model's kriged column (cu_ok) to CSV: a query job, then its file through a signed URL\n")
	fmt.Fprintf(&b, "BM=$GEOSTAT/blockmodel/orgs/%s/workspaces/%s/block-models/%s\n", Org, Workspace, bm)
	b.WriteString(bmQueryFunction)
	b.WriteString(`bmquery "$BM" '{"columns": ["cu_ok"], "geometry_columns": "coordinates", "output_options": {"file_format": "csv"},` +
		` "bbox": {"i_minmax": {"min": 0, "max": 2}, "j_minmax": {"min": 0, "max": 1}, "k_minmax": {"min": 0, "max": 0}}}'` + "\n")
	return b.String()
}

// bmQueryFunction is the shell helper of BlockModelCommands: it posts a
// query, polls its job (every 0.2 s, at most 5 minutes) and prints the
// file; non-zero with a message on stderr when the job fails.
const bmQueryFunction = `bmquery() {  # bmquery MODEL_URL BODY: query a block model, wait for the job, print the file
  local job answer url polls=0
  job=$(curl -sS --max-time 30 -X POST "$1/blocks" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$2" |
    sed -n 's/.*"job_url":"\([^"]*\)".*/\1/p')
  [ -n "$job" ] || { echo "bmquery: the query was refused" >&2; return 1; }
  while :; do
    answer=$(curl -sS --max-time 30 "$job" -H "Authorization: Bearer $TOKEN")
    case "$answer" in
      *'"COMPLETE"'*) break ;;
      *'"FAILED"'*) echo "bmquery: $answer" >&2; return 1 ;;
    esac
    polls=$((polls + 1))
    if [ "$polls" -ge 1500 ]; then echo "bmquery: the query job is not done after 5 minutes: $job" >&2; return 1; fi
    sleep 0.2
  done
  url=$(printf '%s' "$answer" | sed -n 's/.*"download_url":"\([^"]*\)".*/\1/p')
  curl -sS --max-time 60 "$url"
}
`
