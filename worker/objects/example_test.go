package objects_test

import (
	"bytes"
	"fmt"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
)

func ExampleParseAttributeRef() {
	for _, s := range []string{
		"/locations/attributes/@name=grade",
		"cell_attributes[?key=='7c1e']",
		"cell_attributes[0]",
		"grade",
	} {
		r, err := objects.ParseAttributeRef(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(r)
	}
	// Output:
	// locations.attributes[?name=='grade']
	// cell_attributes[?key=='7c1e']
	// cell_attributes[0]
	// grade
}

func ExampleEncodeFloat64() {
	// Two realisations of an ensemble over three cells: one column each.
	data, blob, err := objects.EncodeFloat64([][]float64{{1, 2, 3}, {4, 5, 6}}, objects.EnsembleColumnNames("sim", 2), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(blob.Rows, len(blob.Key))
	tab, err := objects.ReadTable(bytes.NewReader(data), int64(len(data)), objects.Float64Spec("cell_attributes[0].values", 2, 3))
	if err != nil {
		panic(err)
	}
	cols, _ := tab.Float64Columns("cell_attributes[0].values", false)
	fmt.Println(cols)
	_, err = objects.ReadTable(bytes.NewReader(data), int64(len(data)), objects.Float64Spec("cell_attributes[0].values", 2, 4))
	fmt.Println(err)
	// Output:
	// 3 64
	// [[1 2 3] [4 5 6]]
	// cell_attributes[0].values: parquet blob: has 3 rows, want length 4
}

func ExampleObject_WriteContinuous() {
	b := objecttest.NewBlobs()
	doc := b.Pointset("1.3.0", []float64{0, 0, 0, 1, 1, 1})
	o, err := objects.Decode(objecttest.JSON(doc))
	if err != nil {
		panic(err)
	}
	key := b.Float64([][]float64{{0.5, 1.5}}, []string{"knn_grade"})
	a, err := o.WriteContinuous(
		objects.AttributeTarget{Operation: objects.OperationCreate, Name: "knn_grade"},
		objects.ContinuousValues{Data: key, Length: 2, Width: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.List, a.Name, a.Type, len(a.Key))
	// A create with a name that exists replaces that attribute, keeping its key.
	again, _ := o.WriteContinuous(
		objects.AttributeTarget{Operation: objects.OperationCreate, Name: "knn_grade"},
		objects.ContinuousValues{Data: key, Length: 2, Width: 1})
	fmt.Println(again.Key == a.Key, len(o.Attributes(objects.ListLocationAttributes)))
	// Output:
	// locations.attributes knn_grade scalar 36
	// true 1
}
