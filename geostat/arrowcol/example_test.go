package arrowcol_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/geostat/arrowcol"
)

// A []float64 viewed as an Arrow column and back, without copying.
func Example() {
	grades := []float64{0.8, 1.2, 0.4}
	col := arrowcol.Float64Array(grades)
	defer col.Release()
	fmt.Println(col.Len(), col.Value(1))
	back := arrowcol.Float64s(col)
	fmt.Println(&back[0] == &grades[0])
	// Output:
	// 3 1.2
	// true
}
