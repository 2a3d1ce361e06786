package objects_test

import (
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONSyntaxErrorsSayWhere checks the line and column (in characters)
// of syntax errors, truncated documents included.
func TestJSONSyntaxErrorsSayWhere(t *testing.T) {
	for doc, want := range map[string]string{
		"{\n  \"a\": 1,\n  \"b\": 2,}": "invalid JSON at line 3, column 10: invalid character '}' looking for beginning of object key string",
		"{\"é\": [1, 2,, 3]}":          "invalid JSON at line 1, column 13: invalid character ','",
		"{\n  \"a\": [1, 2":            "invalid JSON at line 2, column 13: unexpected end of input",
		"\n\n   tru":                   "invalid JSON at line 3, column 7: unexpected end of input",
		"{\"a\": 1} x":                 "invalid JSON at line 1, column 10: invalid character 'x' after top-level value",
	} {
		err := objects.CheckJSON([]byte(doc))
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want, doc)
		_, err = objects.DecodeJSON([]byte(doc))
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want[:len("invalid JSON at line 1, column 1")], doc)
	}
	require.NoError(t, objects.CheckJSON([]byte(` {"a": [1, 2]} `)))
}
