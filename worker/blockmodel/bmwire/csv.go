package bmwire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// csvSource reads a CSV update file: the dialect of InputOptions, a header
// row, an empty unquoted field is null, each cell parsed per the declared
// type of its column.
type csvSource struct {
	r      *bufio.Reader
	in     InputOptions
	ident  []int // field index per identity column
	vals   []int // field index per value column
	rec    []string
	quoted []bool
	row    int64
	// what names each value column in messages.
	what      []string
	identWhat []string
}

// MaxCSVRecord bounds the bytes of one record (row) of a CSV update file,
// line ends and quotes included: a longer one makes the file unusable,
// before more of it is held.
const MaxCSVRecord = 1 << 20

// errLongRecord is the error of a record longer than MaxCSVRecord.
var errLongRecord = fmt.Errorf("a row is longer than %d bytes", MaxCSVRecord)

// readRecord reads one record; io.EOF at the end.
func (s *csvSource) readRecord() error {
	s.rec, s.quoted = s.rec[:0], s.quoted[:0]
	var f strings.Builder
	inQuote, wasQuoted, started := false, false, false
	for n := 0; ; n++ {
		if n == MaxCSVRecord {
			return errLongRecord
		}
		c, err := s.r.ReadByte()
		if err == io.EOF {
			if !started && f.Len() == 0 && len(s.rec) == 0 {
				return io.EOF
			}
			if inQuote {
				return fmt.Errorf("a quoted field is not closed at the end of the file")
			}
			s.rec, s.quoted = append(s.rec, f.String()), append(s.quoted, wasQuoted)
			return nil
		}
		if err != nil {
			return err
		}
		started = true
		switch {
		case inQuote:
			if c == s.in.QuoteChar {
				if n, err := s.r.Peek(1); err == nil && n[0] == s.in.QuoteChar {
					s.r.ReadByte()
					f.WriteByte(c)
				} else {
					inQuote = false
				}
			} else {
				f.WriteByte(c)
			}
		case c == s.in.QuoteChar && f.Len() == 0 && !wasQuoted:
			inQuote, wasQuoted = true, true
		case c == s.in.Delimiter:
			s.rec, s.quoted = append(s.rec, f.String()), append(s.quoted, wasQuoted)
			f.Reset()
			wasQuoted = false
		case c == '\n':
			str := strings.TrimSuffix(f.String(), "\r")
			s.rec, s.quoted = append(s.rec, str), append(s.quoted, wasQuoted)
			return nil
		default:
			f.WriteByte(c)
		}
	}
}

// ReadCSV reads a CSV update file (see Read).
func ReadCSV(r io.Reader, spec FileSpec, loc blockmodel.Locator, sink Sink) (Summary, error) {
	c := &collector{}
	s := &csvSource{r: bufio.NewReaderSize(r, 1<<20), in: spec.Input}
	for range spec.Input.SkipRows {
		if err := s.skipLine(); err != nil {
			if errors.Is(err, errLongRecord) {
				c.add(0, nil, "a row skipped by skip_rows is longer than %d bytes", MaxCSVRecord)
				return Summary{}, c.err()
			}
			break
		}
	}
	if err := s.readRecord(); err != nil {
		if errors.Is(err, errLongRecord) {
			c.add(0, nil, "the header row is longer than %d bytes", MaxCSVRecord)
		} else {
			c.add(0, nil, "the file has no header row")
		}
		return Summary{}, c.err()
	}
	header := map[string]int{}
	for i, h := range s.rec {
		header[strings.TrimSpace(h)] = i
	}
	name, ident, index := fileColumns(spec, func(n string) bool { _, ok := header[n]; return ok }, c)
	field := func(title string) (int, bool) {
		n, ok := name(title)
		return header[n], ok
	}
	for _, n := range ident {
		i, _ := field(n)
		s.ident = append(s.ident, i)
		s.identWhat = append(s.identWhat, fmt.Sprintf("column %q", n))
	}
	for _, col := range spec.Columns {
		i, ok := field(col.Title)
		if !ok {
			c.add(0, nil, "missing column %q", col.Title)
		}
		s.vals = append(s.vals, i)
		s.what = append(s.what, fmt.Sprintf("column %q", col.Title))
	}
	if err := c.err(); err != nil {
		return Summary{}, err
	}
	for range spec.Input.SkipRowsAfterHeaders {
		if err := s.readRecord(); err != nil {
			break
		}
	}
	if err := sink.Start(-1); err != nil {
		return Summary{}, err
	}
	return run(s, spec, index, loc, sink, c, ident)
}

func (s *csvSource) fill(b *rawBatch, max int, c *collector) error {
	for b.n < max {
		err := s.readRecord()
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, errLongRecord) {
			c.add(s.row+1, nil, "%v: the rest of the file is not read", err)
			return errStop
		}
		if err != nil {
			c.add(s.row+1, nil, "%v", err)
			return nil
		}
		if len(s.rec) == 1 && s.rec[0] == "" && !s.quoted[0] {
			continue // blank line
		}
		s.row++
		bad := false
		cell := func(v *Values, i int, what string) {
			if i >= len(s.rec) {
				v.appendNull()
				return
			}
			if err := s.parse(v, s.rec[i], s.quoted[i]); err != nil {
				c.add(s.row, nil, "%s: %v", what, err)
				v.appendNull()
				bad = true
			}
		}
		for a, i := range s.ident {
			cell(&b.ident[a], i, s.identWhat[a])
		}
		for a, i := range s.vals {
			cell(&b.vals[a], i, s.what[a])
		}
		b.bad = append(b.bad, bad)
		b.n++
	}
	return nil
}

// skipLine reads up to the next line end, at most MaxCSVRecord bytes.
func (s *csvSource) skipLine() error {
	for n := 0; n < MaxCSVRecord; n++ {
		c, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		if c == '\n' {
			return nil
		}
	}
	return errLongRecord
}

// parse appends one cell parsed as v's type.
func (s *csvSource) parse(v *Values, text string, quoted bool) error {
	if text == "" && (!quoted || v.Type != blockmodel.Utf8) {
		v.appendNull()
		return nil
	}
	t := strings.TrimSpace(text)
	switch familyOf(v.Type) {
	case famStr:
		v.Str = append(v.Str, text)
	case famBool:
		b, err := strconv.ParseBool(strings.ToLower(t))
		if err != nil {
			return fmt.Errorf("%q is not a Boolean", text)
		}
		v.Bool = append(v.Bool, b)
	case famFloat:
		if s.in.DecimalChar != '.' {
			t = strings.ReplaceAll(t, string(s.in.DecimalChar), ".")
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", text)
		}
		if math.IsNaN(f) {
			v.appendNull()
			return nil
		}
		// Text is rounded to the nearest value of the declared type.
		switch v.Type {
		case blockmodel.Float32:
			f = float64(float32(f))
		case blockmodel.Float16:
			f = roundFloat16(f)
		}
		if math.IsInf(f, 0) {
			return fmt.Errorf("%q is out of range for %s", text, v.Type)
		}
		v.Float = append(v.Float, f)
	default:
		switch v.Type {
		case blockmodel.Date32:
			d, err := time.Parse("2006-01-02", t)
			if err != nil {
				return fmt.Errorf("%q is not a date (YYYY-MM-DD)", text)
			}
			v.Int = append(v.Int, d.Unix()/86400)
		case blockmodel.Timestamp:
			ts, err := time.Parse(time.RFC3339Nano, t)
			if err != nil {
				ts, err = time.Parse("2006-01-02 15:04:05.999999", t)
			}
			if err != nil {
				return fmt.Errorf("%q is not a timestamp (RFC 3339, or YYYY-MM-DD hh:mm:ss in UTC)", text)
			}
			v.Int = append(v.Int, ts.UnixMicro())
		case blockmodel.UInt64:
			u, err := strconv.ParseUint(t, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a UInt64", text)
			}
			v.Uint = append(v.Uint, u)
		default:
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not an integer", text)
			}
			if err := v.appendInt(n, false); err != nil {
				return err
			}
		}
	}
	v.markValid()
	return nil
}

// roundFloat16 rounds f to the nearest half-precision value (±Inf beyond
// its range).
func roundFloat16(f float64) float64 {
	a := math.Abs(f)
	if a == 0 || math.IsInf(f, 0) {
		return f
	}
	_, exp := math.Frexp(a)
	shift := 11 - exp
	if exp-1 < -14 {
		shift = 24
	}
	r := math.Ldexp(math.RoundToEven(math.Ldexp(a, shift)), -shift)
	if r > 65504 {
		r = math.Inf(1)
	}
	return math.Copysign(r, f)
}
