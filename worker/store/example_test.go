package store_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/worker/store"
)

func ExampleNormalisePath() {
	p, err := store.NormalisePath("/Folder/Points.json", false)
	fmt.Println(p, err)
	for _, bad := range []string{"a|b.json", "notes.txt", "dir /x.json"} {
		_, err := store.NormalisePath(bad, true)
		e := store.AsError(err)
		fmt.Println(e.Status, e.Type)
	}
	// Output:
	// Folder/Points.json <nil>
	// 400 https://errors.geostat-engine.dev/geoscienceobject/invalid-path
	// 400 https://errors.geostat-engine.dev/geoscienceobject/objects/invalid-object
	// 400 https://errors.geostat-engine.dev/geoscienceobject/invalid-path
}
