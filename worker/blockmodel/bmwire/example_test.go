package bmwire_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// line is a regular model of 4 blocks along i.
type line struct{}

func (line) NumRows() int64 { return 4 }
func (line) Locate(i, j, k uint32, _ blockmodel.SubID) (int64, bool) {
	return int64(i), i < 4 && j == 0 && k == 0
}
func (line) LocateXYZ(x, y, z, _, _, _ float64) (int64, [3]uint32, bool) {
	return 0, [3]uint32{}, false
}

// An update start body is checked against the model, then its CSV file is
// read: the second file has a row outside the model and the same block
// twice, so it fails with an error file.
func Example() {
	model := bmwire.ModelInfo{Kind: blockmodel.Regular, N: [3]int{4, 1, 1}}
	u, err := bmwire.DecodeUpdate([]byte(`{"columns": {"new": [{"title": "cu", "data_type": "Float64", "unit_id": null}],
	  "update": [], "delete": [], "rename": []}, "update_type": "replace", "geometry_change": null,
	  "input_options": {"file_format": "csv", "column_name_mapping": [{"csv_name": "CU", "new_title": "cu"}]}}`), model)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := bmwire.FileSpec{Kind: model.Kind, Input: u.Input, Columns: u.ValueColumns(model)}

	c := bmwire.NewCollector(spec.Columns)
	sum, err := bmwire.ReadCSV(strings.NewReader("i,j,k,CU\n2,0,0,1.5\n0,0,0,\n"), spec, line{}, c)
	fmt.Println(sum.Rows, err, c.Rows, c.Values[0].Float, c.Values[0].Valid)

	_, err = bmwire.ReadCSV(strings.NewReader("i,j,k,CU\n7,0,0,1\n1,0,0,2\n1,0,0,3\n"), spec, line{}, bmwire.NewCollector(spec.Columns))
	var fe *bmwire.FileError
	if errors.As(err, &fe) {
		fe.WriteCSV(os.Stdout)
	}
	// Output:
	// 2 <nil> [2 0] [1.5 0] [true false]
	// row,i,j,k,message
	// 1,7,0,0,matches no block of the model
	// 3,1,0,0,matches a block another row of the file matched (duplicate)
}
