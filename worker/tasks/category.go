package tasks

import (
	"context"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/objects"
)

// storeCategory stores the keys (one per element; ensemble.NoCategory, −1,
// for no category) and the lookup table (key k ↦ labels[k]) of a category
// attribute in the blobs, and returns its write.
func storeCategory(ctx context.Context, env *Env, org, ws string, target objects.AttributeTarget, keys []int32, labels []string) (attributeWrite, error) {
	k64 := make([]int64, len(keys))
	for i, k := range keys {
		k64[i] = int64(k)
	}
	data, err := storeColumns(ctx, env, org, ws, []objects.Column{{Type: objects.TypeInt32, Int64: k64}}, []string{valuesColumn})
	if err != nil {
		return attributeWrite{}, err
	}
	return categoryWrite(ctx, env, org, ws, target, data, len(keys), labels)
}

// categoryWrite stores the lookup table (key k ↦ labels[k]) of a category
// attribute whose keys, length of them, are the blob data (one int32
// column; ensemble.NoCategory for no category), and returns its write.
func categoryWrite(ctx context.Context, env *Env, org, ws string, target objects.AttributeTarget, data string, length int, labels []string) (attributeWrite, error) {
	tk := make([]int64, len(labels))
	for i := range tk {
		tk[i] = int64(i)
	}
	table, err := storeColumns(ctx, env, org, ws,
		[]objects.Column{{Type: objects.TypeInt32, Int64: tk}, {Type: objects.TypeString, String: labels}}, []string{"key", "value"})
	if err != nil {
		return attributeWrite{}, err
	}
	return attributeWrite{Target: target, Category: &objects.CategoryValues{Data: data, Length: int64(length),
		Table: table, TableLength: int64(len(labels)), Missing: []int64{int64(ensemble.NoCategory)}}}, nil
}
