package objects_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary documents to the object decoder: it must never
// panic, and a decoded object must re-encode to a document that decodes to
// the same bytes.
func FuzzDecode(f *testing.F) {
	b := objecttest.NewBlobs()
	g := objecttest.GridSpec{Size: [3]int{2, 1, 1}, CellSize: [3]float64{1, 1, 1}}
	for _, doc := range []map[string]any{
		b.Pointset("1.3.0", samplePoints(), b.Scalar("grade", key1, []float64{1, 2, 3, 4})),
		b.Intervals("1.0.1", samplePoints()),
		b.Grid("1.2.0", g, b.Ensemble("e", key1, [][]float64{{1, 2}, {3, 4}})),
		b.MaskedGrid("1.1.0", g, []bool{true, false}),
		objecttest.Variogram("1.0.1"),
		b.Distribution("1.1.0", []float64{1, 2}, []float64{0.25, 0.75}),
	} {
		f.Add(objecttest.JSON(doc))
	}
	f.Add([]byte(`{"schema": "/objects/pointset/1.3.0/pointset.schema.json", "locations": {"coordinates": {"data": null, "length": 0, "width": 3, "data_type": "float64"}}}`))
	f.Add([]byte(`{"schema": "/objects/regular-3d-grid/1.3.0/regular-3d-grid.schema.json", "origin": [0,0,0], "size": [1e9,1e9,1e9], "cell_size": [1,1,1]}`))
	f.Add([]byte(`{"v": NaN}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := objects.Decode(data)
		if err != nil {
			return
		}
		out, err := o.JSON()
		require.NoError(t, err)
		o2, err := objects.Decode(out)
		require.NoError(t, err, "re-decoding %s", out)
		out2, err := o2.JSON()
		require.NoError(t, err)
		require.Equal(t, out, out2)
		for _, list := range o.AttributeLists() {
			for _, a := range o.Attributes(list) {
				r, err := o2.ResolveAttribute(a.Ref())
				if err == nil {
					require.Equal(t, a.List, r.List)
				}
			}
		}
	})
}

// FuzzParseAttributeRef checks that the attribute expression / element path
// parser never panics and that a parsed reference renders to an expression
// that parses back to it.
func FuzzParseAttributeRef(f *testing.F) {
	for _, s := range []string{
		"locations.attributes[?name=='grade']", "cell_attributes[?key=='k']", "cell_attributes[0]",
		"attributes[-1]", "grade", "/locations/attributes/@name=grade", "/cell_attributes/@key=x", "/cell_attributes/2",
		`attributes[?name=='it\'s']`, "cell_attributes[?name==`\"x\"`]", "attributes[?name=='Au'] | [0]", "[", "/@name=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := objects.ParseAttributeRef(s)
		if err != nil {
			return
		}
		again, err := objects.ParseAttributeRef(r.String())
		require.NoError(t, err, "%q rendered as %q", s, r.String())
		require.Equal(t, r, again)
	})
}

// FuzzReadTable feeds arbitrary bytes to the Parquet reader with a spec built
// from the fuzzer's integers: it must never panic, and a table it accepts has
// the promised shape.
func FuzzReadTable(f *testing.F) {
	types := []objects.DataType{objects.TypeFloat64, objects.TypeBool, objects.TypeInt32, objects.TypeInt64, objects.TypeUint64, objects.TypeString}
	add := func(cols []objects.Column, typeSel uint8) {
		data, _, err := objects.EncodeTable(cols, nil, nil)
		if err != nil {
			panic(err)
		}
		f.Add(data, uint8(len(cols)), typeSel, int64(cols[0].Len()))
	}
	add([]objects.Column{{Type: objects.TypeFloat64, Float64: []float64{1, 2, 3}}}, 0)
	add([]objects.Column{{Type: objects.TypeFloat64, Float64: []float64{1, 2}}, {Type: objects.TypeFloat64, Float64: []float64{3, 4}}, {Type: objects.TypeFloat64, Float64: []float64{5, 6}}}, 0)
	add([]objects.Column{{Type: objects.TypeBool, Bool: []bool{true, false}}}, 1)
	add([]objects.Column{{Type: objects.TypeInt32, Int64: []int64{1, 2}}}, 2)
	add([]objects.Column{{Type: objects.TypeString, String: []string{"a", "b"}}}, 5)
	f.Add([]byte("PAR1PAR1"), uint8(1), uint8(0), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, width uint8, typeSel uint8, rows int64) {
		w := int(width%8) + 1
		// Rows come from the JSON element, which the caller trusts; keep them
		// realistic so the fuzzer explores the decoder, not huge allocations.
		if rows < 0 || rows > 1<<16 {
			rows = rows & 0xffff
		}
		spec := objects.TableSpec{Element: "fuzz", Rows: rows}
		for i := 0; i < w; i++ {
			spec.Types = append(spec.Types, types[int(typeSel)%len(types)])
		}
		tab, err := objects.ReadTable(bytes.NewReader(data), int64(len(data)), spec)
		if err != nil {
			require.Contains(t, err.Error(), "fuzz")
			return
		}
		require.Len(t, tab.Columns, w)
		for i := range tab.Columns {
			require.Equal(t, rows, int64(tab.Columns[i].Len()))
		}
	})
}

// FuzzEnsembleReader feeds arbitrary bytes to the streaming ensemble reader:
// it must never panic, every error names the element, and a file it reads
// to the end yields exactly the promised rows, tile after tile, agreeing
// with ReadTable.
func FuzzEnsembleReader(f *testing.F) {
	add := func(cols [][]float64, tile uint8) {
		data, _, err := objects.EncodeFloat64(cols, objects.EnsembleColumnNames("g", len(cols)), nil)
		if err != nil {
			panic(err)
		}
		f.Add(data, uint8(len(cols)), int64(len(cols[0])), tile)
	}
	add([][]float64{{1, 2, 3}}, 0)
	add([][]float64{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}, 2)
	f.Add([]byte("PAR1PAR1"), uint8(1), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, width uint8, rows int64, tile uint8) {
		w := int(width%8) + 1
		if rows < 0 || rows > 1<<16 {
			rows = rows & 0xffff
		}
		spec := objects.Float64Spec("fuzz", w, rows)
		er, err := objects.NewEnsembleReader(bytes.NewReader(data), int64(len(data)), spec, nil, int(tile))
		if err != nil {
			require.Contains(t, err.Error(), "fuzz")
			return
		}
		buf := make([][]float64, w)
		for c := range buf {
			buf[c] = make([]float64, er.MaxTile())
		}
		got := 0
		for {
			tl, err := er.ReadTile(context.Background(), buf)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				require.Contains(t, err.Error(), "fuzz")
				return
			}
			require.Equal(t, got, tl.Lo)
			got += tl.Len()
		}
		require.Equal(t, int(rows), got)
		_, err = objects.ReadTable(bytes.NewReader(data), int64(len(data)), spec)
		require.NoError(t, err, "a file the stream reads whole is a valid table")
	})
}
