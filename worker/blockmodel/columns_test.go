package blockmodel

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func titles(cols []SystemColumn) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Title+":"+string(c.DataType))
	}
	return out
}

func TestSystemColumns(t *testing.T) {
	assert.Equal(t, []string{"i:UInt32", "j:UInt32", "k:UInt32", "x:Float64", "y:Float64", "z:Float64", "version_id:Int64"}, titles(SystemColumns(Regular)))
	sidx := []string{"i:UInt32", "j:UInt32", "k:UInt32", "sidx:UInt32", "x:Float64", "y:Float64", "z:Float64", "dx:Float64", "dy:Float64", "dz:Float64", "version_id:Int64"}
	assert.Equal(t, sidx, titles(SystemColumns(FullySubBlocked)))
	assert.Equal(t, sidx, titles(SystemColumns(VariableOctree)))
	assert.Equal(t, []string{"i:UInt32", "j:UInt32", "k:UInt32", "start_si:UInt8", "start_sj:UInt8", "start_sk:UInt8", "end_si:UInt8", "end_sj:UInt8", "end_sk:UInt8",
		"x:Float64", "y:Float64", "z:Float64", "dx:Float64", "dy:Float64", "dz:Float64", "version_id:Int64"}, titles(SystemColumns(Flexible)))
	for _, kind := range []ModelType{Regular, FullySubBlocked, Flexible, VariableOctree} {
		for _, c := range SystemColumnRecords(kind) {
			assert.Equal(t, c.Title, c.ColID)
			assert.True(t, IsSystemColumn(strings.ToUpper(c.Title)))
		}
	}
}

// FillSystem in batches equals the per-row accessors, for every kind.
func TestFillSystemBatches(t *testing.T) {
	rng := newRand()
	for _, kind := range []ModelType{Regular, FullySubBlocked, Flexible, VariableOctree} {
		var b *Blocks
		if kind == Regular {
			b = mustGeometry(t, XYZ{3, 4, 5}, rot("z", 10), RegularSize(Size3D{5, 4, 3}, XYZ{2, 3, 4})).WholeBlocks()
		} else {
			g := mustGeometry(t, XYZ{3, 4, 5}, rot("z", 10), SubBlockedSize(kind, Size3D{3, 2, 2}, Size3D{4, 2, 2}, XYZ{2, 3, 4}))
			b = randomBlocks(t, rng, g)
		}
		var batch SystemBatch
		const step = 7
		for from := int64(0); from < b.NumRows(); from += step {
			to := min(from+step, b.NumRows())
			require.NoError(t, b.FillSystem(from, to, &batch))
			n := int(to - from)
			require.Len(t, batch.X, n)
			for r := 0; r < n; r++ {
				row := from + int64(r)
				i, j, k, sub := b.Identity(row)
				assert.Equal(t, [3]uint32{i, j, k}, [3]uint32{batch.I[r], batch.J[r], batch.K[r]})
				assert.Equal(t, b.Centroid(row), [3]float64{batch.X[r], batch.Y[r], batch.Z[r]})
				switch kind {
				case Regular:
					assert.Empty(t, batch.DX)
					assert.Empty(t, batch.Sidx)
					assert.Empty(t, batch.StartSI)
					continue
				case Flexible:
					assert.Empty(t, batch.Sidx)
					assert.Equal(t, sub.Start, [3]uint8{batch.StartSI[r], batch.StartSJ[r], batch.StartSK[r]})
					assert.Equal(t, sub.End, [3]uint8{batch.EndSI[r], batch.EndSJ[r], batch.EndSK[r]})
				default:
					assert.Empty(t, batch.StartSI)
					assert.Equal(t, sub.Sidx, batch.Sidx[r])
				}
				assert.Equal(t, b.Extent(row), [3]float64{batch.DX[r], batch.DY[r], batch.DZ[r]})
			}
		}
		assert.Error(t, b.FillSystem(0, b.NumRows()+1, &batch))
		assert.Error(t, b.FillSystem(2, 1, &batch))
	}
}

func TestValidateTitle(t *testing.T) {
	for _, ok := range []string{"cu_pct", "Au (ppm)", "a", strings.Repeat("é", 100), "domain 2", "x1", "cu.pct"} {
		assert.NoError(t, ValidateTitle(ok), ok)
	}
	for _, bad := range []string{"", strings.Repeat("a", 101), " cu", ".cu", "a/b", `a\b`, "a:b", "a>b", "a<b", "a|b", "a?b", `a"b`, "a*b",
		"X", "Sidx", "version_id", "start_si", "DZ", "sub_block_derivation", uuid.NewString(), strings.ToUpper(uuid.NewString()), "\xff"} {
		assert.Error(t, ValidateTitle(bad), bad)
	}
	assert.Equal(t, TitleKey("Cu_PCT"), TitleKey("cu_pct"))
	id := NewColID()
	u, err := uuid.Parse(id)
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(4), u.Version())
	assert.NotEqual(t, id, NewColID())
	for _, dt := range DataTypes() {
		assert.True(t, dt.Valid())
	}
	assert.Len(t, DataTypes(), 15)
	assert.False(t, DataType("float64").Valid())
	assert.True(t, Float16.Numeric())
	assert.True(t, UInt64.Numeric())
	assert.False(t, Utf8.Numeric())
	assert.False(t, Timestamp.Numeric())
}

func TestUnits(t *testing.T) {
	seen := map[string]bool{}
	for _, u := range Units() {
		assert.False(t, seen[u.UnitID], "duplicate %s", u.UnitID)
		seen[u.UnitID] = true
		assert.Positive(t, u.ConversionFactor)
		assert.NotEmpty(t, u.Symbol)
	}
	for _, id := range []string{"m", "ft", "cm", "t", "kg", "g", "g/t", "%[mass]", "ppm[mass]", "ppb[mass]", "t/m3", "kg/m3", "g/cm3", "m3", "$", "$/t"} {
		assert.True(t, seen[id], id)
		assert.NoError(t, CheckColumnUnit(id), id)
	}
	assert.NoError(t, CheckSizeUnit("m"))
	assert.NoError(t, CheckSizeUnit("ft"))
	assert.Error(t, CheckSizeUnit("kg"))
	assert.Error(t, CheckSizeUnit("furlong"))
	assert.Error(t, CheckColumnUnit("M"))
	u, ok := LookupUnit("g/cm3")
	require.True(t, ok)
	assert.Equal(t, MassPerVolume, u.UnitType)
	out, err := json.Marshal(u)
	require.NoError(t, err)
	assert.JSONEq(t, `{"unit_id":"g/cm3","symbol":"g/cm³","description":"grams per cubic centimetre","unit_type":"MASS_PER_VOLUME","conversion_factor":1000}`, string(out))
}

func TestRecordJSON(t *testing.T) {
	g := mustGeometry(t, XYZ{1000, 2000, 300}, rot("z", 45, "x", 30), SubBlockedSize(Flexible, Size3D{4, 3, 2}, Size3D{2, 2, 4}, XYZ{10, 20, 5}))
	name := "Ada Lovelace"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := Record{BMUUID: uuid.NewString(), Name: "Pit A", OrgUUID: uuid.NewString(), WorkspaceID: uuid.NewString(),
		CreatedAt: at, CreatedBy: FullUser{ID: uuid.NewString(), Name: &name, RoleName: []string{"owner"}}, LastUpdatedAt: at}
	rec.SetGeometry(g)
	out, err := json.Marshal(rec)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	for _, k := range []string{"bm_uuid", "name", "description", "org_uuid", "workspace_id", "model_origin", "block_rotation", "normalized_rotation",
		"size_options", "bbox", "coordinate_reference_system", "size_unit_id", "fill_subblocks", "geoscience_object_id", "created_at", "created_by",
		"last_updated_at", "last_updated_by"} {
		assert.Contains(t, m, k)
	}
	assert.NotContains(t, m, "job_url")
	assert.Equal(t, []any{45.0, 30.0, 0.0}, m["normalized_rotation"])
	assert.Equal(t, "flexible", m["size_options"].(map[string]any)["model_type"])
	assert.Equal(t, map[string]any{"id": rec.CreatedBy.ID, "name": name, "role_name": []any{"owner"}}, m["created_by"])

	var back Record
	require.NoError(t, json.Unmarshal(out, &back))
	bg, err := back.Geometry()
	require.NoError(t, err)
	assert.Equal(t, g.SizeOptions(), bg.SizeOptions())
	assert.Equal(t, g.BBox(), bg.BBox())
	assert.Equal(t, g.NormalizedRotation(), bg.NormalizedRotation())

	v := Version{VersionID: 1, VersionUUID: uuid.NewString(), BMUUID: rec.BMUUID, CreatedAt: at, CreatedBy: rec.CreatedBy,
		Mapping: Mapping{Columns: SystemColumnRecords(Regular), Groups: []json.RawMessage{}}}
	out, err = json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &m))
	assert.Nil(t, m["bbox"])
	assert.Nil(t, m["base_version_id"])
	assert.NotContains(t, m, "changes")
	assert.Equal(t, map[string]any{"col_id": "i", "title": "i", "data_type": "UInt32", "unit_id": nil, "group_uuid": nil},
		m["mapping"].(map[string]any)["columns"].([]any)[0])
}
