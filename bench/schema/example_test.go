package schema_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/bench/schema"
)

func ExampleValidate() {
	err := schema.Validate([]byte(`{"schema_version": 1, "tool": "geostat-bench"}`))
	fmt.Println(err != nil)
	// Output:
	// true
}
