package bmwire

// Collector is a Sink that buffers every batch in memory: the model rows
// and the values of each column, in file order. Use its contents only
// when Read returned nil.
type Collector struct {
	Rows   []int64
	Values []Values
}

// NewCollector returns a Collector for the given value columns.
func NewCollector(cols []ValueColumn) *Collector {
	c := &Collector{Values: make([]Values, len(cols))}
	for i, col := range cols {
		c.Values[i].Type = col.Type
	}
	return c
}

// maxPrealloc bounds what a file's own row count may make Start allocate.
const maxPrealloc = 1 << 24

// Start sizes the buffers for the file's row count.
func (c *Collector) Start(rows int64) error {
	n := int(min(max(rows, 0), maxPrealloc))
	c.Rows = make([]int64, 0, n)
	for i := range c.Values {
		v := &c.Values[i]
		switch familyOf(v.Type) {
		case famFloat:
			v.Float = make([]float64, 0, n)
		case famInt:
			v.Int = make([]int64, 0, n)
		case famUint:
			v.Uint = make([]uint64, 0, n)
		case famBool:
			v.Bool = make([]bool, 0, n)
		}
	}
	return nil
}

// Batch appends a copy of b.
func (c *Collector) Batch(b *Batch) error {
	before := len(c.Rows)
	c.Rows = append(c.Rows, b.Rows...)
	for i := range c.Values {
		v, w := &c.Values[i], &b.Values[i]
		switch {
		case w.Valid != nil && v.Valid == nil:
			v.Valid = make([]bool, before, cap(c.Rows))
			for r := range v.Valid {
				v.Valid[r] = true
			}
			fallthrough
		case w.Valid != nil:
			v.Valid = append(v.Valid, w.Valid...)
		case v.Valid != nil:
			for range w.Len() {
				v.Valid = append(v.Valid, true)
			}
		}
		v.Float = append(v.Float, w.Float...)
		v.Int = append(v.Int, w.Int...)
		v.Uint = append(v.Uint, w.Uint...)
		v.Bool = append(v.Bool, w.Bool...)
		v.Str = append(v.Str, w.Str...)
	}
	return nil
}
