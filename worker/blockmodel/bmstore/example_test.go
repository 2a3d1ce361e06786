package bmstore_test

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
)

// Example creates a 4-row model, adds a column in a second version and reads
// it back.
func Example() {
	dir, _ := os.MkdirTemp("", "bmstore-example")
	defer os.RemoveAll(dir)
	s, _ := bmstore.Open(dir)

	tx, _ := s.Create(bmstore.Model{ID: "bm1"}, 4)
	v1, _ := tx.Commit(bmstore.Meta{CreatedBy: "alice"})

	tx, _ = s.Begin("bm1")
	w, _ := tx.AddColumn(bmstore.ColumnMeta{Title: "Au", DataType: blockmodel.Float64})
	_ = w.Write(bmstore.Column{Type: blockmodel.Float64, Floats: []float64{1.5, 2}})
	_ = w.Write(bmstore.Column{Type: blockmodel.Float64, Floats: []float64{3, 4}, Null: []bool{true, false}})
	_ = w.Close()
	v2, err := tx.Commit(bmstore.Meta{Comment: "add Au"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v1.VersionID, v2.VersionID, v2.Changes.New)

	sc, _ := s.Scan("bm1", 2, []string{"Au", bmstore.VersionIDColumn}, 0, 4, 0)
	defer sc.Close()
	for {
		cols, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		for r := range cols[0].Len() {
			if cols[0].IsNull(r) {
				fmt.Println("null", cols[1].Ints[r])
			} else {
				fmt.Println(cols[0].Floats[r], cols[1].Ints[r])
			}
		}
	}
	// Output:
	// 1 2 [Au]
	// 1.5 2
	// 2 2
	// null 2
	// 4 2
}
