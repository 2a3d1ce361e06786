package bmjob

import (
	"context"
	"errors"
	"io"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

var errTODO = errors.New("bmjob: not implemented yet")

// ApplyUpdate applies an update job to the model's latest version (A.7.3)
// and returns the new version. Input errors: *blockmodel.ValidationError
// (a title no longer valid at processing time, a geometry change that is
// not possible), *bmwire.FileError (the file's rows or values), ErrNoFile.
// On any error nothing is written and the latest version is unchanged.
func ApplyUpdate(ctx context.Context, s *bmstore.Store, in UpdateInput) (*bmstore.Version, error) {
	return nil, errTODO
}

// Query writes the result of query q on version v of a model to w (A.8),
// streamed in batches, and describes it.
func Query(ctx context.Context, s *bmstore.Store, modelID string, g *blockmodel.Geometry, v *bmstore.Version, q *bmwire.Query, w io.Writer) (QueryResult, error) {
	return QueryResult{}, errTODO
}

// ReadFloat64 reads column title of version v as float64 values, one per
// row in canonical order, NaN for nulls. The column must be Int*, UInt* or
// Float* (else ErrNotContinuous); ErrColumnNotFound when there is none.
func ReadFloat64(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, title string) ([]float64, error) {
	return nil, errTODO
}

// ReadCategories reads a Utf8 or Boolean column of version v as categories
// (else ErrNotCategorical); ErrColumnNotFound when there is none.
func ReadCategories(ctx context.Context, s *bmstore.Store, modelID string, v *bmstore.Version, title string) (*Categories, error) {
	return nil, errTODO
}

// WriteColumn writes one task result column as a new version of the
// model's latest version, through the code of an update job (A.14.5).
func WriteColumn(ctx context.Context, s *bmstore.Store, w ColumnWrite) (*bmstore.Version, error) {
	return nil, errTODO
}
