package bmjob_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// A regular 2×2×1 model gets a column from a CSV update file, then a query
// returns the blocks of the first row of parents with their coordinates.
func Example() {
	dir, _ := os.MkdirTemp("", "bmjob")
	defer os.RemoveAll(dir)
	s, _ := bmstore.Open(dir)
	g, _ := blockmodel.NewGeometry(blockmodel.XYZ{X: 100, Y: 200, Z: 0}, nil,
		blockmodel.RegularSize(blockmodel.Size3D{NX: 2, NY: 2, NZ: 1}, blockmodel.XYZ{X: 10, Y: 10, Z: 5}))
	tx, _ := s.Create(bmstore.Model{ID: "m"}, g.NumParents()) // version 1: system columns only
	v1, _ := tx.Commit(bmstore.Meta{CreatedBy: "u"})

	body := `{"columns": {"new": [{"title": "cu", "data_type": "Float64"}]}, "input_options": {"file_format": "csv"}}`
	u, err := bmwire.DecodeUpdate([]byte(body), bmjob.ModelInfo(g, v1))
	if err != nil {
		fmt.Println(err)
		return
	}
	file := "i,j,k,cu\n0,0,0,1.5\n1,0,0,2.5\n1,1,0,\n"
	v2, err := bmjob.ApplyUpdate(context.Background(), s, bmjob.UpdateInput{ModelID: "m", Geometry: g, Update: u,
		File: strings.NewReader(file), FileSize: int64(len(file)), CreatedBy: "u"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", v2.VersionID, "new", v2.Changes.New, "blocks", *v2.Changes.BlocksUploaded)

	q, _ := bmwire.DecodeQuery([]byte(`{"columns": ["cu", "version_id"], "geometry_columns": "coordinates",
		"bbox": {"i_minmax": {"min": 0, "max": 1}, "j_minmax": {"min": 0, "max": 0}, "k_minmax": {"min": 0, "max": 0}},
		"output_options": {"file_format": "csv", "exclude_null_rows": false}}`), bmjob.ModelInfo(g, v2))
	var out strings.Builder
	res, err := bmjob.Query(context.Background(), s, "m", g, v2, q, &out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	fmt.Println(res.Rows, "rows")
	// Output:
	// version 2 new [cu] blocks 3
	// x,y,z,cu,version_id
	// 105,205,2.5,1.5,2
	// 115,205,2.5,2.5,2
	// 2 rows
}
