package tasks

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateObjectTaken checks that creating an object at a taken path is
// ErrExists and still carries the store's 409 problem document (the
// variogram-model task answers with it).
func TestCreateObjectTaken(t *testing.T) {
	s, err := store.OpenEmbedded(store.EmbeddedOptions{Dir: t.TempDir(), Schemas: objecttest.Schemas(t)})
	require.NoError(t, err)
	a := &StoreAdapter{Store: s, TempDir: t.TempDir()}
	const org, ws = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	user := store.User{ID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "Alice", Email: "alice@example.com"}
	doc := objecttest.JSON(objecttest.Variogram("1.2.0"))
	ctx := context.Background()
	id, vid, err := a.CreateObject(ctx, org, ws, "v/model.json", doc, user)
	require.NoError(t, err)
	assert.NotEmpty(t, id)
	assert.NotEmpty(t, vid)

	_, _, err = a.CreateObject(ctx, org, ws, "v/model.json", doc, user)
	require.ErrorIs(t, err, ErrExists)
	var c problem.Carrier
	require.True(t, errors.As(err, &c), "the store's problem is kept: %v", err)
	assert.Equal(t, http.StatusConflict, c.Problem().Status)
}
