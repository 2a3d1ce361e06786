package bmwire

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opaque hides a *blockmodel.Blocks behind the Locator interface, so the
// matcher takes its generic per-row path.
type opaque struct{ blockmodel.Locator }

// wholeModels are the models whose rows processWhole matches: a regular
// one and a fully sub-blocked one with every parent whole (version 1), of
// n parents.
func wholeModels(t *testing.T, n blockmodel.Size3D) map[string]*blockmodel.Blocks {
	t.Helper()
	size := blockmodel.XYZ{X: 10, Y: 10, Z: 10}
	reg, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(n, size))
	require.NoError(t, err)
	fsb, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil,
		blockmodel.SubBlockedSize(blockmodel.FullySubBlocked, n, blockmodel.Size3D{NX: 2, NY: 2, NZ: 2}, size))
	require.NoError(t, err)
	return map[string]*blockmodel.Blocks{"regular": reg.WholeBlocks(), "fully-sub-blocked": fsb.WholeBlocks()}
}

var small = blockmodel.Size3D{NX: 4, NY: 3, NZ: 2}

func TestMatcherTakesWholePath(t *testing.T) {
	for name, b := range wholeModels(t, small) {
		n := len(blockmodel.IndexColumns(b.Geometry().Type()))
		assert.True(t, newMatcher(cuSpec, true, b, &collector{}, n).whole, name)
		assert.False(t, newMatcher(cuSpec, true, opaque{b}, &collector{}, n).whole, name)
		assert.False(t, newMatcher(cuSpec, false, b, &collector{}, 3).whole, "%s: coordinates", name)
	}
}

// idRow is a row of a crafted update file: i signed and optional (so a
// file can hold an empty or a negative i), j and k UINT32, sidx for the
// sub-blocked model.
type idRow struct {
	I    *int64   `parquet:"i,optional"`
	J    uint32   `parquet:"j"`
	K    uint32   `parquet:"k"`
	Sidx uint32   `parquet:"sidx"`
	Cu   *float64 `parquet:"cu,optional"`
}

func ip(i int64) *int64 { return &i }

// u32Row is idRow with i a required UINT32 (every identity column read
// as it is, Values.u32).
type u32Row struct {
	I    uint32   `parquet:"i"`
	J    uint32   `parquet:"j"`
	K    uint32   `parquet:"k"`
	Sidx uint32   `parquet:"sidx"`
	Cu   *float64 `parquet:"cu,optional"`
}

// asU32 is rows as u32Rows, false when an i is empty or negative.
func asU32(rows []idRow) ([]u32Row, bool) {
	var out []u32Row
	for _, r := range rows {
		if r.I == nil || *r.I < 0 {
			return nil, false
		}
		out = append(out, u32Row{uint32(*r.I), r.J, r.K, r.Sidx, r.Cu})
	}
	return out, true
}

// allRows is one row for every parent of a model of n parents, in
// order, cu the row number (every 5th null).
func allRows(n blockmodel.Size3D) []idRow {
	var rows []idRow
	nx, ny := int64(n.NX), int64(n.NY)
	for r := range nx * ny * int64(n.NZ) {
		row := idRow{I: ip(r % nx), J: uint32(r / nx % ny), K: uint32(r / (nx * ny))}
		if r%5 != 3 {
			row.Cu = fp(float64(r))
		}
		rows = append(rows, row)
	}
	return rows
}

// batchRecord is what a Sink received of one batch.
type batchRecord struct {
	Rows           []int64
	Values         []Values
	IJKMin, IJKMax [3]uint32
}

// batchSink is a Sink keeping a copy of every batch.
type batchSink struct{ batches []batchRecord }

func (r *batchSink) Start(int64) error { return nil }

func (r *batchSink) Batch(b *Batch) error {
	c := NewCollector([]ValueColumn{{"cu", blockmodel.Float64}})
	if err := c.Batch(b); err != nil {
		return err
	}
	r.batches = append(r.batches, batchRecord{c.Rows, c.Values, b.IJKMin, b.IJKMax})
	return nil
}

// The matcher's whole-parent path (processWhole) and its generic path give
// the same batches (rows, values, bounds), summaries and file errors on
// the same files: good files in and out of order, with gaps, and files
// with a row out of the model, a duplicate (in the batch, across batches,
// at a word of the duplicate bitset's edge), an empty or negative i, a
// non-zero sidx, at the start, middle and end of batches of several
// sizes, so the whole path's undo of what it marked is exercised.
func TestWholePathMatchesGeneric(t *testing.T) {
	for _, dims := range []blockmodel.Size3D{small, {NX: 20, NY: 7, NZ: 3}} {
		all := func() []idRow { return allRows(dims) }
		n := len(all())
		type file struct {
			name string
			rows []idRow
		}
		var files []file
		files = append(files, file{"in order", all()})
		rev := all()
		for a, b := 0, len(rev)-1; a < b; a, b = a+1, b-1 {
			rev[a], rev[b] = rev[b], rev[a]
		}
		files = append(files, file{"reversed", rev})
		files = append(files, file{"part", all()[5 : n*2/3]})
		files = append(files, file{"gap", append(all()[:n/2], all()[n/2+1:]...)})
		files = append(files, file{"gaps", append(append(all()[:n/3], all()[n/3+3:n/2]...), all()[min(n/2+64, n-2):]...)})
		if n > 200 {
			// In batches of 100, row 150 comes again in a run of rows
			// (99 to 198) over three words of the bitset, in the middle one.
			files = append(files, file{"150 first", append([]idRow{all()[150]}, all()...)})
		}
		for _, at := range []int{0, 2, 4, 6, 9, 23, 63, 64, 65, 127, n - 1} {
			if at >= n {
				continue
			}
			f := all()
			f[at].I = ip(int64(dims.NX))
			files = append(files, file{fmt.Sprintf("i out of range at %d", at), f})
			f = all()
			f[at].K = uint32(dims.NZ)
			files = append(files, file{fmt.Sprintf("k out of range at %d", at), f})
			f = all()
			f[at].J = 7
			files = append(files, file{fmt.Sprintf("j out of range at %d", at), f})
			f = all()
			f[at].I = nil
			files = append(files, file{fmt.Sprintf("empty i at %d", at), f})
			f = all()
			f[at].I = ip(-1)
			files = append(files, file{fmt.Sprintf("negative i at %d", at), f})
			f = all()
			f[at].Sidx = 1
			files = append(files, file{fmt.Sprintf("sidx at %d", at), f})
			f = all()
			f[at] = f[(at+1)%n]
			files = append(files, file{fmt.Sprintf("duplicate of the next at %d", at), f})
			f = all()
			f[at] = f[(at+n-1)%n]
			files = append(files, file{fmt.Sprintf("duplicate of the previous at %d", at), f})
			f = all()
			f[at] = f[(at+13)%n]
			files = append(files, file{fmt.Sprintf("duplicate far at %d", at), f})
			f = append(all()[:n/2], all()[at])
			files = append(files, file{fmt.Sprintf("half and %d again", at), f})
		}
		var datas []*bytes.Reader
		var names []string
		for _, f := range files {
			datas, names = append(datas, writeParquet(t, f.rows)), append(names, f.name)
			if u, ok := asU32(f.rows); ok {
				datas, names = append(datas, writeParquet(t, u)), append(names, f.name+" (uint32 i)")
			}
		}
		for name, b := range wholeModels(t, dims) {
			kind := b.Geometry().Type()
			for _, batch := range []int{1, 3, 5, 64, 100, 1000} {
				spec := FileSpec{Kind: kind, Input: DefaultInput(), Columns: []ValueColumn{{"cu", blockmodel.Float64}}, BatchRows: batch}
				for x, data := range datas {
					fast := &batchSink{}
					sFast, errFast := Read(data, data.Size(), spec, b, fast)
					slow := &batchSink{}
					sSlow, errSlow := Read(data, data.Size(), spec, opaque{b}, slow)
					what := fmt.Sprintf("%v %s, %s, batch %d", dims, name, names[x], batch)
					assert.Equal(t, errSlow, errFast, what)
					assert.Equal(t, sSlow, sFast, what)
					assert.Equal(t, slow.batches, fast.batches, what)
				}
			}
		}
	}
}

// A file of one regular model's blocks in order goes batch after batch
// to the sink with its rows, values and bounds as written.
func TestWholePathReadsEveryBatch(t *testing.T) {
	b := wholeModels(t, small)["regular"]
	type ijk struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	var rows []ijk
	for r := range int64(24) {
		rows = append(rows, ijk{uint32(r % 4), uint32(r / 4 % 3), uint32(r / 12), float64(r)})
	}
	data := writeParquet(t, rows, parquet.PageBufferSize(32))
	spec := FileSpec{Kind: blockmodel.Regular, Input: DefaultInput(), Columns: []ValueColumn{{"cu", blockmodel.Float64}}, BatchRows: 5}
	s := &wholeProbe{t: t}
	sum, err := Read(data, data.Size(), spec, b, s)
	require.NoError(t, err)
	assert.Equal(t, int64(24), sum.Rows)
	assert.Equal(t, 5, s.batches)
	want := make([]int64, 24)
	for r := range want {
		want[r] = int64(r)
	}
	assert.Equal(t, want, s.rows)
}

// wholeProbe is a Sink that checks each batch: rows in order, values the
// row numbers, the batch's ijk bounds.
type wholeProbe struct {
	t       *testing.T
	batches int
	rows    []int64
}

func (p *wholeProbe) Start(int64) error { return nil }

func (p *wholeProbe) Batch(b *Batch) error {
	p.batches++
	p.rows = append(p.rows, b.Rows...)
	for r, row := range b.Rows {
		assert.Equal(p.t, float64(row), b.Values[0].Float[r])
	}
	lo, hi := [3]uint32{9, 9, 9}, [3]uint32{}
	for _, row := range b.Rows {
		ijk := [3]uint32{uint32(row % 4), uint32(row / 4 % 3), uint32(row / 12)}
		for a := range 3 {
			lo[a], hi[a] = min(lo[a], ijk[a]), max(hi[a], ijk[a])
		}
	}
	assert.Equal(p.t, lo, b.IJKMin, "batch from row %d", b.Rows[0])
	assert.Equal(p.t, hi, b.IJKMax, "batch from row %d", b.Rows[0])
	return nil
}

// processWhole takes a good batch and gives up, leaving the duplicate
// bitset as it found it, on a batch with a problem.
func TestProcessWhole(t *testing.T) {
	b := wholeModels(t, small)["regular"]
	m := newMatcher(cuSpec, true, b, &collector{}, 3)
	raw := func(ijk ...[3]int64) *rawBatch {
		rb := &rawBatch{ident: make([]Values, 3), n: len(ijk), bad: make([]bool, len(ijk))}
		for _, x := range ijk {
			for a := range 3 {
				rb.ident[a].Int = append(rb.ident[a].Int, x[a])
			}
		}
		return rb
	}
	bounds := func() (lo, hi [3]int64) { return [3]int64{99, 99, 99}, [3]int64{-1, -1, -1} }
	lo, hi := bounds()
	require.True(t, m.processWhole(raw([3]int64{1, 2, 1}, [3]int64{0, 0, 0}), &lo, &hi))
	assert.Equal(t, []int64{21, 0}, m.out.Rows)
	assert.Equal(t, [3]int64{0, 0, 0}, lo)
	assert.Equal(t, [3]int64{1, 2, 1}, hi)
	seen := append([]uint64(nil), m.seen...)
	for _, bad := range [][][3]int64{
		{{2, 0, 0}, {3, 0, 0}, {0, 0, 0}}, // a duplicate of the first batch
		{{2, 0, 0}, {3, 0, 0}, {2, 0, 0}}, // a duplicate in the batch
		{{2, 0, 0}, {4, 0, 0}},            // out of the model
		{{2, 0, 0}, {-1, 0, 0}},
	} {
		lo, hi := bounds()
		assert.False(t, m.processWhole(raw(bad...), &lo, &hi), "%v", bad)
		assert.Equal(t, seen, m.seen, "%v", bad)
		assert.Equal(t, [3]int64{99, 99, 99}, lo)
	}
	rb := raw([3]int64{2, 0, 0})
	rb.ident[0].Valid = []bool{false}
	assert.False(t, m.processWhole(rb, &lo, &hi), "empty identity")
	rb = raw([3]int64{2, 0, 0})
	rb.bad[0] = true
	assert.False(t, m.processWhole(rb, &lo, &hi), "bad row")
	assert.Equal(t, seen, m.seen)
}

// Identity columns OPTIONAL without nulls (pyarrow's default) are read from
// their pages' values (denseInts) and give what the same file with
// REQUIRED columns gives: rows, values and errors (a negative i, an i past
// the model), UINT32 and INT64, pages of a few rows read across batches,
// and pages with a null among pages without.
func TestOptionalIdentityColumns(t *testing.T) {
	type reqU32 struct {
		I  uint32   `parquet:"i"`
		J  uint32   `parquet:"j"`
		K  uint32   `parquet:"k"`
		Cu *float64 `parquet:"cu,optional"`
	}
	type optU32 struct {
		I  *uint32  `parquet:"i,optional"`
		J  *uint32  `parquet:"j,optional"`
		K  *uint32  `parquet:"k,optional"`
		Cu *float64 `parquet:"cu,optional"`
	}
	type reqI64 struct {
		I  int64    `parquet:"i"`
		J  int64    `parquet:"j"`
		K  int64    `parquet:"k"`
		Cu *float64 `parquet:"cu,optional"`
	}
	type optI64 struct {
		I  *int64   `parquet:"i,optional"`
		J  *int64   `parquet:"j,optional"`
		K  *int64   `parquet:"k,optional"`
		Cu *float64 `parquet:"cu,optional"`
	}
	u32 := func(x int64) *uint32 { y := uint32(x); return &y }
	write := func(rows any) *bytes.Reader {
		page := parquet.PageBufferSize(40)
		switch r := rows.(type) {
		case []reqU32:
			return writeParquet(t, r, page)
		case []optU32:
			return writeParquet(t, r, page)
		case []reqI64:
			return writeParquet(t, r, page)
		default:
			return writeParquet(t, r.([]optI64), page)
		}
	}
	dims := blockmodel.Size3D{NX: 20, NY: 7, NZ: 3}
	b := wholeModels(t, dims)["regular"]
	for _, flaw := range []string{"none", "negative", "past", "null"} {
		var ru []reqU32
		var ou []optU32
		var ri []reqI64
		var oi []optI64
		for n, r := range allRows(dims) {
			i := *r.I
			switch {
			case flaw == "negative" && n == 77:
				i = -1
			case flaw == "past" && n == 150:
				i = 20
			}
			ru = append(ru, reqU32{uint32(i), r.J, r.K, r.Cu})
			ou = append(ou, optU32{u32(i), u32(int64(r.J)), u32(int64(r.K)), r.Cu})
			ri = append(ri, reqI64{i, int64(r.J), int64(r.K), r.Cu})
			oi = append(oi, optI64{ip(i), ip(int64(r.J)), ip(int64(r.K)), r.Cu})
			if flaw == "null" && n == 200 {
				ou[n].J, oi[n].J = nil, nil
			}
		}
		for _, batch := range []int{7, 64, 1000} {
			spec := cuSpec
			spec.BatchRows = batch
			read := func(f *bytes.Reader) (*batchSink, Summary, error) {
				s := &batchSink{}
				sum, err := Read(f, f.Size(), spec, b, s)
				return s, sum, err
			}
			for _, pair := range [][2]*bytes.Reader{{write(ru), write(ou)}, {write(ri), write(oi)}} {
				what := fmt.Sprintf("%s, batch %d", flaw, batch)
				want, wantSum, wantErr := read(pair[0])
				got, gotSum, gotErr := read(pair[1])
				if flaw == "null" {
					// The required file has j = 0 there; the optional one an
					// empty j: a row error.
					fe := fileErr(t, gotErr)
					assert.Equal(t, []string{"row 201: j is empty"}, messages(fe), what)
					continue
				}
				assert.Equal(t, wantErr, gotErr, what)
				assert.Equal(t, wantSum, gotSum, what)
				assert.Equal(t, want.batches, got.batches, what)
				if flaw == "none" {
					require.NoError(t, gotErr, what)
					assert.Equal(t, int64(len(ru)), gotSum.Rows, what)
				}
			}
		}
	}
}

// An OPTIONAL DOUBLE column without nulls in some pages (pyarrow's
// default) reads as the REQUIRED one does: the same values, a NaN a null.
func TestOptionalDoublesWithoutNulls(t *testing.T) {
	type req struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	type opt struct {
		I  uint32   `parquet:"i"`
		J  uint32   `parquet:"j"`
		K  uint32   `parquet:"k"`
		Cu *float64 `parquet:"cu,optional"`
	}
	dims := blockmodel.Size3D{NX: 20, NY: 7, NZ: 3}
	b := wholeModels(t, dims)["regular"]
	var rs []req
	var os []opt
	for n, r := range allRows(dims) {
		cu := float64(n) / 3
		if n == 100 {
			cu = math.NaN()
		}
		rs = append(rs, req{uint32(*r.I), r.J, r.K, cu})
		os = append(os, opt{uint32(*r.I), r.J, r.K, fp(cu)})
	}
	rb := parquetBytes(t, rs, parquet.PageBufferSize(64))
	ob := parquetBytes(t, os, parquet.PageBufferSize(64))
	for _, batch := range []int{7, 64, 1000} {
		spec := cuSpec
		spec.BatchRows = batch
		want, got := &batchSink{}, &batchSink{}
		_, err := Read(bytes.NewReader(rb), int64(len(rb)), spec, b, want)
		require.NoError(t, err)
		_, err = Read(bytes.NewReader(ob), int64(len(ob)), spec, b, got)
		require.NoError(t, err)
		assert.Equal(t, want.batches, got.batches, "batch %d", batch)
		var nulls int
		for _, x := range got.batches {
			for _, ok := range x.Values[0].Valid {
				if !ok {
					nulls++
				}
			}
		}
		assert.Equal(t, 1, nulls, "the NaN, batch %d", batch)
	}
}

// Dictionary-encoded columns (what pyarrow writes by default) read from
// their pages' values looked up in the dictionary give what the plain file
// gives: UINT32 and INT64 identity, REQUIRED and OPTIONAL, a grade with
// and without nulls (and a NaN), clean or with an i past the model.
func TestDictionaryColumns(t *testing.T) {
	type plain struct {
		I  uint32   `parquet:"i"`
		J  int64    `parquet:"j"`
		K  *uint32  `parquet:"k,optional"`
		Cu *float64 `parquet:"cu,optional"`
	}
	type dict struct {
		I  uint32   `parquet:"i,dict"`
		J  int64    `parquet:"j,dict"`
		K  *uint32  `parquet:"k,optional,dict"`
		Cu *float64 `parquet:"cu,optional,dict"`
	}
	dims := blockmodel.Size3D{NX: 20, NY: 7, NZ: 3}
	b := wholeModels(t, dims)["regular"]
	for _, flaw := range []string{"none", "nulls", "past"} {
		var ps []plain
		var ds []dict
		for n, r := range allRows(dims) {
			i := uint32(*r.I)
			if flaw == "past" && n == 150 {
				i = 20
			}
			k := r.K
			cu := fp(float64(n%17) / 4)
			switch {
			case n == 99:
				cu = fp(math.NaN())
			case flaw == "nulls" && n%5 == 3:
				cu = nil
			}
			ps = append(ps, plain{i, int64(r.J), &k, cu})
			ds = append(ds, dict{i, int64(r.J), &k, cu})
		}
		pb := parquetBytes(t, ps, parquet.PageBufferSize(64))
		db := parquetBytes(t, ds, parquet.PageBufferSize(64))
		for _, batch := range []int{7, 64, 1000} {
			spec := cuSpec
			spec.BatchRows = batch
			want, got := &batchSink{}, &batchSink{}
			wantSum, wantErr := Read(bytes.NewReader(pb), int64(len(pb)), spec, b, want)
			gotSum, gotErr := Read(bytes.NewReader(db), int64(len(db)), spec, b, got)
			what := fmt.Sprintf("%s, batch %d", flaw, batch)
			assert.Equal(t, wantErr, gotErr, what)
			assert.Equal(t, wantSum, gotSum, what)
			assert.Equal(t, want.batches, got.batches, what)
			if flaw != "past" {
				require.NoError(t, gotErr, what)
			}
		}
	}
}

// Dictionary-encoded files with damaged bytes (every byte but the magic
// numbers, one at a time, set to two values) are refused or read, never
// a crash: an index out of its dictionary included.
func TestDamagedDictionaryParquetNeverCrashes(t *testing.T) {
	type dict struct {
		I  uint32   `parquet:"i,dict"`
		J  uint32   `parquet:"j,dict"`
		K  uint32   `parquet:"k,dict"`
		Cu *float64 `parquet:"cu,optional,dict"`
	}
	var rows []dict
	for r := range int64(24) {
		rows = append(rows, dict{uint32(r % 4), uint32(r / 4 % 3), uint32(r / 12), fp(float64(r%5) * 0.37)})
	}
	good := parquetBytes(t, rows, parquet.MaxRowsPerRowGroup(7), parquet.PageBufferSize(32))
	b := wholeModels(t, small)["regular"]
	refused := 0
	for at := int64(4); at < int64(len(good))-8; at++ {
		for _, v := range []byte{0xff, good[at] ^ 0x5a} {
			bad := bytes.Clone(good)
			bad[at] = v
			r := bytes.NewReader(bad)
			if _, err := ReadParquet(r, r.Size(), cuSpec, b, NewCollector(cuSpec.Columns)); err != nil {
				refused++
			}
		}
	}
	assert.Positive(t, refused, "damaged files must be refused")
}
