package bmstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// QueryRowGroup is the row group size of query output files (A.8).
const QueryRowGroup = 100_000

// QueryOptions configures a QueryWriter.
type QueryOptions struct {
	// Format is "parquet" (default) or "csv".
	Format string
	// Delimiter of CSV output (default ',').
	Delimiter rune
}

// QueryWriter streams a query result (user columns from a Scanner, system
// columns the caller generates per batch) to Parquet or CSV.
type QueryWriter struct {
	names []string
	types []DataType
	opts  QueryOptions
	tw    *tableWriter
	bw    *bufio.Writer
	rows  int64
}

// NewQueryWriter starts a query output with the given column names and types.
func NewQueryWriter(w io.Writer, names []string, types []DataType, opts QueryOptions) (*QueryWriter, error) {
	if len(names) != len(types) || len(names) == 0 {
		return nil, errors.New("bmstore: query writer: names and types differ in length or are empty")
	}
	q := &QueryWriter{names: names, types: types, opts: opts}
	switch opts.Format {
	case "", "parquet":
		// Data pages v1, as the client's query documentation says.
		tw, err := newTableWriter(w, names, types, QueryRowGroup)
		if err != nil {
			return nil, fmt.Errorf("bmstore: query writer: %w", err)
		}
		q.tw = tw
	case "csv":
		if opts.Delimiter == 0 {
			q.opts.Delimiter = ','
		}
		q.bw = bufio.NewWriterSize(w, 1<<20)
		for i, n := range names {
			if i > 0 {
				q.bw.WriteRune(q.opts.Delimiter)
			}
			q.bw.WriteString(csvField(n, q.opts.Delimiter))
		}
		q.bw.WriteByte('\n')
	default:
		return nil, fmt.Errorf("bmstore: query writer: unknown format %q", opts.Format)
	}
	return q, nil
}

// Rows is the number of rows written so far.
func (q *QueryWriter) Rows() int64 { return q.rows }

// Write appends a batch: one Column per output column, equal lengths.
func (q *QueryWriter) Write(cols []Column) error {
	if len(cols) != len(q.names) {
		return fmt.Errorf("bmstore: query writer: %d columns given, want %d", len(cols), len(q.names))
	}
	n := cols[0].Len()
	for i := range cols {
		if cols[i].Type != q.types[i] || cols[i].Len() != n {
			return fmt.Errorf("bmstore: query writer: column %q: type %s/%d rows, want %s/%d", q.names[i], cols[i].Type, cols[i].Len(), q.types[i], n)
		}
	}
	ptrs := make([]*Column, len(cols))
	for i := range cols {
		ptrs[i] = &cols[i]
	}
	if n == 0 {
		return nil
	}
	q.rows += int64(n)
	if q.tw != nil {
		return q.tw.write(ptrs)
	}
	var sb []byte
	for r := 0; r < n; r++ {
		sb = sb[:0]
		for i, c := range ptrs {
			if i > 0 {
				sb = append(sb, string(q.opts.Delimiter)...)
			}
			sb = appendCSV(sb, c, r, q.opts.Delimiter)
		}
		sb = append(sb, '\n')
		if _, err := q.bw.Write(sb); err != nil {
			return fmt.Errorf("bmstore: query writer: %w", err)
		}
	}
	return nil
}

// WriteGroup writes one row group of a Parquet output from the caller's
// columns (one per output column, at most QueryRowGroup rows) without
// copying them: they are lent to the writer, which encodes them in the
// background and calls release when it is through with them (release is
// always called, also on error). A CSV output writes the rows at once,
// then releases them.
func (q *QueryWriter) WriteGroup(cols []Column, release func()) error {
	if q.tw == nil {
		defer release()
		return q.Write(cols)
	}
	if len(cols) != len(q.names) {
		release()
		return fmt.Errorf("bmstore: query writer: %d columns given, want %d", len(cols), len(q.names))
	}
	n := cols[0].Len()
	if err := q.tw.writeGroup(cols, release); err != nil {
		return fmt.Errorf("bmstore: query writer: %w", err)
	}
	q.rows += int64(n)
	return nil
}

// Close finishes the output.
func (q *QueryWriter) Close() error {
	if q.tw != nil {
		return q.tw.close()
	}
	return q.bw.Flush()
}

func csvField(s string, d rune) string {
	if strings.ContainsAny(s, "\"\r\n") || strings.ContainsRune(s, d) {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func appendCSV(b []byte, c *Column, r int, d rune) []byte {
	if c.IsNull(r) {
		return b
	}
	switch c.Type {
	case blockmodel.Boolean:
		return strconv.AppendBool(b, c.Bools[r])
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Int64:
		return strconv.AppendInt(b, c.Ints[r], 10)
	case blockmodel.Date32:
		return time.Unix(c.Ints[r]*86400, 0).UTC().AppendFormat(b, "2006-01-02")
	case blockmodel.Timestamp:
		return time.UnixMicro(c.Ints[r]).UTC().AppendFormat(b, "2006-01-02T15:04:05.999999Z")
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32, blockmodel.UInt64:
		return strconv.AppendUint(b, c.uint(r), 10)
	case blockmodel.Float16, blockmodel.Float32:
		return strconv.AppendFloat(b, float64(float32(c.Floats[r])), 'g', -1, 32)
	case blockmodel.Float64:
		return strconv.AppendFloat(b, c.Floats[r], 'g', -1, 64)
	default:
		return append(b, csvField(c.Strings[r], d)...)
	}
}
