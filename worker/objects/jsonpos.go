package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// CheckJSON reports whether data is one well-formed JSON value; when it is
// not, the error says where, as JSONSyntaxError does.
func CheckJSON(data []byte) error {
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return JSONSyntaxError(data, err)
	}
	return nil
}

// JSONSyntaxError describes a JSON syntax error met while decoding data
// with its line and column (1-based, the column counted in characters):
// "invalid JSON at line 3, column 14: invalid character '}' looking for
// beginning of object key string". A truncated document is placed at its
// end. Other errors are returned as "invalid JSON: <err>".
func JSONSyntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		off := int(se.Offset) - 1
		// At the end of the input the scanner reports the space it
		// appends there: the document is truncated.
		if se.Error() == "unexpected end of JSON input" ||
			(off == len(data)-1 && data[off] != ' ' && strings.HasPrefix(se.Error(), "invalid character ' '")) {
			line, col := position(data, len(data))
			return fmt.Errorf("invalid JSON at line %d, column %d: unexpected end of input", line, col)
		}
		line, col := position(data, off)
		return fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, col := position(data, len(data))
		return fmt.Errorf("invalid JSON at line %d, column %d: unexpected end of input", line, col)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// position returns the line and column of the byte at off in data.
func position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}
