package bmwire

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/problem"
)

// Limits of a failed update's report (A.6.1).
const (
	// MaxFileErrors is the number of errors kept (the error file's rows).
	MaxFileErrors = 10000
	// DetailErrors is the number of errors the detail quotes.
	DetailErrors = 20
)

// RowError is one problem of an update file: the data row (1-based, the
// header and skipped lines not counted; 0 for a problem of the whole file,
// such as a missing column), the row's parent indices when known, and what
// is wrong.
type RowError struct {
	Row     int64
	IJK     *[3]uint32
	Message string
}

// String renders the error as the detail quotes it.
func (r RowError) String() string {
	var b strings.Builder
	if r.Row > 0 {
		fmt.Fprintf(&b, "row %d", r.Row)
		if r.IJK != nil {
			fmt.Fprintf(&b, " (i %d, j %d, k %d)", r.IJK[0], r.IJK[1], r.IJK[2])
		}
		b.WriteString(": ")
	}
	b.WriteString(r.Message)
	return b.String()
}

// FileError is an update file that cannot be applied: the first
// MaxFileErrors problems in file order (file-level ones first) and their
// total; Stopped is set when reading stopped at the limit, Total then
// counting only what was read.
type FileError struct {
	Errors  []RowError
	Total   int64
	Stopped bool
}

// Error is the detail.
func (e *FileError) Error() string { return e.Detail() }

// Detail says how many problems the file has and quotes the first
// DetailErrors of them.
func (e *FileError) Detail() string {
	var b strings.Builder
	more := ""
	if e.Stopped {
		more = " (reading stopped there)"
	}
	fmt.Fprintf(&b, "the update file has %d error(s)%s", e.Total, more)
	for i, r := range e.Errors {
		if i == DetailErrors {
			fmt.Fprintf(&b, "; … %d more in the error file", e.Total-DetailErrors)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// WriteCSV writes the error file: a header row, then one line row, i, j, k,
// message per kept error (row and indices empty when not known).
func (e *FileError) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"row", "i", "j", "k", "message"}); err != nil {
		return err
	}
	for _, r := range e.Errors {
		rec := []string{"", "", "", "", r.Message}
		if r.Row > 0 {
			rec[0] = strconv.FormatInt(r.Row, 10)
		}
		if r.IJK != nil {
			for a := range 3 {
				rec[1+a] = strconv.FormatUint(uint64(r.IJK[a]), 10)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Problem is the FAILED job's payload without its download_url (the caller
// adds the error file's URL): job/update-error, 422, the detail.
func (e *FileError) Problem() problem.Problem {
	return problem.Problem{Type: TypeJobUpdateError, Title: "Invalid Update File.", Status: http.StatusUnprocessableEntity,
		Detail: e.Detail()}
}

// collector gathers the errors of one file.
type collector struct {
	e FileError
}

func (c *collector) add(row int64, ijk *[3]uint32, format string, args ...any) {
	c.e.Total++
	if len(c.e.Errors) < MaxFileErrors {
		c.e.Errors = append(c.e.Errors, RowError{Row: row, IJK: ijk, Message: fmt.Sprintf(format, args...)})
	}
}

// full reports that the kept errors reached the limit.
func (c *collector) full() bool { return len(c.e.Errors) >= MaxFileErrors }

func (c *collector) err() error {
	if c.e.Total == 0 {
		return nil
	}
	e := c.e
	return &e
}
