package bmwire

import (
	"encoding/json"
	"strconv"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// Update types (A.7.1).
const (
	Merge   = "merge"
	Replace = "replace"
)

// File formats of update files and query outputs.
const (
	FormatParquet  = "parquet"
	FormatCSV      = "csv"
	FormatDatamine = "datamine"
)

// NewColumn is an item of columns.new (the client's ColumnLite).
type NewColumn struct {
	Title    string              `json:"title"`
	DataType blockmodel.DataType `json:"data_type"`
	UnitID   *string             `json:"unit_id"`
	Tags     json.RawMessage     `json:"tags,omitempty"`
}

// Rename is an item of columns.rename.
type Rename struct {
	Title    string `json:"title"`
	NewTitle string `json:"new_title"`
}

// MetadataChange is an item of columns.update_metadata: Title names the
// column; nil members are unchanged. UnitSet with UnitID nil clears the
// unit (the client sends unit_id null to clear it); Tags non-nil replaces
// the tags ({} clears them).
type MetadataChange struct {
	Title    string
	NewTitle *string
	UnitSet  bool
	UnitID   *string
	Tags     json.RawMessage
}

// Columns are the column operations of an update.
type Columns struct {
	New            []NewColumn
	Update         []string
	Delete         []string
	Rename         []Rename
	UpdateMetadata []MetadataChange
}

// Mapping maps a file column to a column title (column_name_mapping, in
// either of its two shapes).
type Mapping struct {
	FileColumn string `json:"file_column_name"`
	Title      string `json:"column_title"`
}

// InputOptions describe the update file (input_options): its format, the
// CSV dialect and the column name mapping.
type InputOptions struct {
	Format               string
	Delimiter            byte
	DecimalChar          byte
	QuoteChar            byte
	SkipRows             int
	SkipRowsAfterHeaders int
	Mapping              []Mapping
}

// DefaultInput is the input options of an update that sends none: Parquet.
func DefaultInput() InputOptions {
	return InputOptions{Format: FormatParquet, Delimiter: ',', DecimalChar: '.', QuoteChar: '"'}
}

// Update is the body of PATCH …/blocks (A.7.1, the client's
// UpdateDataLite), checked against the model.
type Update struct {
	Columns        Columns
	UpdateType     string
	GeometryChange *bool
	FillSubblocks  *bool
	Input          InputOptions
	Comment        string
	Lineage        json.RawMessage
}

// NeedsFile reports whether the update reads a file (new or update
// columns): only then is an upload URL handed out.
func (u *Update) NeedsFile() bool { return len(u.Columns.New)+len(u.Columns.Update) > 0 }

// ValueColumns are the columns the file supplies, in request order (new,
// then update), with their data types (an updated column keeps its type).
func (u *Update) ValueColumns(m ModelInfo) []ValueColumn {
	out := make([]ValueColumn, 0, len(u.Columns.New)+len(u.Columns.Update))
	for _, c := range u.Columns.New {
		out = append(out, ValueColumn{Title: c.Title, Type: c.DataType})
	}
	for _, t := range u.Columns.Update {
		c, _ := m.byTitle(t)
		out = append(out, ValueColumn{Title: t, Type: c.DataType})
	}
	return out
}

// DecodeUpdate reads a data update body and checks it against the model
// (A.7.1): unknown titles in update, delete, rename and update_metadata;
// new titles that exist; system columns targeted; invalid types, units and
// titles; duplicates within a list; a title in two lists (update_metadata
// may repeat an update title); rename only alone; update_metadata without
// renames; geometry_change only for sub-blocked kinds (null is accepted
// everywhere) and, when true, only new, update and delete, with
// update_metadata limited to updated columns; fill_subblocks true only for
// a fully sub-blocked model with merge and geometry_change; groups refused
// (not supported); Datamine input refused; comment ≤ 250. All failures are
// listed in one *ValidationError.
func DecodeUpdate(body []byte, model ModelInfo) (*Update, error) {
	return decodeBody(body, func(o object, e *blockmodel.ValidationError) *Update {
		u := &Update{Input: DefaultInput()}
		u.UpdateType = o.enum("update_type", Merge, Merge, Replace)
		u.GeometryChange = o.boolean("geometry_change")
		u.FillSubblocks = o.boolean("fill_subblocks")
		if c := o.str("comment"); c != nil {
			o.maxLen("comment", c, maxComment)
			u.Comment = *c
		}
		u.Lineage = o.raw("lineage")
		if g := o.raw("groups"); g != nil && !emptyGroups(g) {
			e.Add("groups", "column groups are not supported")
		}
		if g := o.raw("group_missing_column_override"); g != nil && string(g) != "{}" {
			e.Add("group_missing_column_override", "column groups are not supported")
		}
		if o.required("columns") {
			if co, ok := parseObject(o.raw("columns"), "columns", e); ok {
				u.Columns = decodeColumns(co, model)
			}
		}
		if io, ok := parseObject(o.raw("input_options"), "input_options", e); ok {
			u.Input = decodeInput(io)
		}
		u.check(e, model)
		return u
	})
}

// emptyGroups reports a groups member with no operation in it.
func emptyGroups(raw json.RawMessage) bool {
	var m map[string][]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for _, l := range m {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

func decodeColumns(o object, model ModelInfo) Columns {
	var c Columns
	for _, p := range o.objects("new", "a column {title, data_type}") {
		var n NewColumn
		if s := p.requiredStr("title"); s != nil {
			n.Title = *s
			if err := blockmodel.ValidateTitle(*s); err != nil {
				p.e.Add(p.name("title"), "%v", err)
			} else if model.titleTaken(*s) {
				p.e.Add(p.name("title"), "a column titled %q exists", *s)
			}
		}
		if s := p.requiredStr("data_type"); s != nil {
			n.DataType = blockmodel.DataType(*s)
			if !n.DataType.Valid() {
				p.e.Add(p.name("data_type"), "unknown data type %q", *s)
			}
		}
		n.UnitID, _, n.Tags = columnMembers(p)
		c.New = append(c.New, n)
	}
	existing := func(name, t string) {
		if blockmodel.IsSystemColumn(t) {
			o.e.Add(name, "%q is a system column", t)
		} else if _, ok := model.byTitle(t); !ok {
			o.e.Add(name, "no column titled %q", t)
		}
	}
	for _, member := range []string{"update", "delete"} {
		l := o.strings(member)
		for i, t := range l {
			existing(o.name(member)+"["+strconv.Itoa(i)+"]", t)
		}
		if member == "update" {
			c.Update = l
		} else {
			c.Delete = l
		}
	}
	for _, p := range o.objects("rename", "{title, new_title}") {
		var r Rename
		if s := p.requiredStr("title"); s != nil {
			r.Title = *s
			existing(p.name("title"), *s)
		}
		if s := p.requiredStr("new_title"); s != nil {
			r.NewTitle = *s
			checkNewTitle(p, "new_title", *s)
		}
		c.Rename = append(c.Rename, r)
	}
	for _, p := range o.objects("update_metadata", "{title, values}") {
		var m MetadataChange
		if s := p.requiredStr("title"); s != nil {
			m.Title = *s
			existing(p.name("title"), *s)
		}
		if p.required("values") {
			if v, ok := parseObject(p.raw("values"), p.name("values"), p.e); ok {
				m.NewTitle = v.str("title")
				if m.NewTitle != nil && *m.NewTitle != m.Title {
					checkNewTitle(v, "title", *m.NewTitle)
				}
				m.UnitID, m.UnitSet, m.Tags = columnMembers(v)
			}
		}
		c.UpdateMetadata = append(c.UpdateMetadata, m)
	}
	return c
}

// checkNewTitle checks a title a column is renamed to.
func checkNewTitle(p object, member, t string) {
	if err := blockmodel.ValidateTitle(t); err != nil {
		p.e.Add(p.name(member), "%v", err)
	}
}

// columnMembers reads the members a new column and a metadata change
// share: unit_id (a unit of the table; set reports the member was sent,
// null included), tags, and group (refused unless empty).
func columnMembers(p object) (unit *string, set bool, tags json.RawMessage) {
	_, set = p.m["unit_id"]
	if unit = p.str("unit_id"); unit != nil {
		if err := blockmodel.CheckColumnUnit(*unit); err != nil {
			p.e.Add(p.name("unit_id"), "%v", err)
		}
	}
	tags = p.tags("tags")
	if g := p.str("group"); g != nil && *g != "" {
		p.e.Add(p.name("group"), "column groups are not supported")
	}
	return unit, set, tags
}

func decodeInput(o object) InputOptions {
	in := DefaultInput()
	in.Format = o.enum("file_format", FormatParquet, FormatParquet, FormatCSV, FormatDatamine)
	if in.Format == FormatDatamine {
		o.e.Add(o.name("file_format"), "unsupported file format datamine (use parquet or csv)")
	}
	char := func(member string, def byte) byte {
		s := o.str(member)
		if s == nil {
			return def
		}
		if len(*s) != 1 || (*s)[0] == '\n' || (*s)[0] == '\r' {
			o.e.Add(o.name(member), "must be one ASCII character other than a line break")
			return def
		}
		return (*s)[0]
	}
	count := func(member string) int {
		n := o.integer(member)
		if n == nil {
			return 0
		}
		if *n < 0 || *n > 1<<31-1 {
			o.e.Add(o.name(member), "must be an integer ≥ 0")
			return 0
		}
		return int(*n)
	}
	if in.Format == FormatCSV {
		in.Delimiter = char("delimiter", ',')
		in.DecimalChar = char("decimal_char", '.')
		in.QuoteChar = char("quote_char", '"')
		in.SkipRows = count("skip_rows")
		in.SkipRowsAfterHeaders = count("skip_rows_after_headers")
		if in.Delimiter == in.QuoteChar {
			o.e.Add(o.name("quote_char"), "must differ from the delimiter")
		}
		if in.Delimiter == in.DecimalChar {
			o.e.Add(o.name("decimal_char"), "must differ from the delimiter")
		}
	}
	for _, p := range o.objects("column_name_mapping", "{file_column_name, column_title}") {
		var m Mapping
		// Two shapes (A.15b item 7): the generic one and the older CSV one.
		if p.has("csv_name") || p.has("new_title") {
			if p.required("csv_name") && p.required("new_title") {
				m.FileColumn, m.Title = deref(p.str("csv_name")), deref(p.str("new_title"))
			}
		} else if p.required("file_column_name") && p.required("column_title") {
			m.FileColumn, m.Title = deref(p.str("file_column_name")), deref(p.str("column_title"))
		}
		in.Mapping = append(in.Mapping, m)
	}
	return in
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// check applies the combination rules of A.7.1.
func (u *Update) check(e *blockmodel.ValidationError, model ModelInfo) {
	c := &u.Columns
	type use struct{ list, name string }
	seen := map[string]use{}
	mark := func(list string, i int, t string) {
		name := "columns." + list + "[" + strconv.Itoa(i) + "]"
		if list == "new" || list == "rename" || list == "update_metadata" {
			name += ".title"
		}
		k := blockmodel.TitleKey(t)
		if prev, ok := seen[k]; ok {
			switch {
			case prev.list == list:
				e.Add(name, "%q is listed twice", t)
			case prev.list == "update" && list == "update_metadata":
				// allowed: the metadata of an updated column
			default:
				e.Add(name, "%q is also in columns.%s (a column may be in one operation only)", t, prev.list)
			}
			return
		}
		seen[k] = use{list, name}
	}
	for i, n := range c.New {
		mark("new", i, n.Title)
	}
	for i, t := range c.Update {
		mark("update", i, t)
	}
	for i, t := range c.Delete {
		mark("delete", i, t)
	}
	for i, r := range c.Rename {
		mark("rename", i, r.Title)
	}
	for i, m := range c.UpdateMetadata {
		mark("update_metadata", i, m.Title)
	}
	// Titles after the operations must stay unique.
	final := map[string]string{}
	for _, col := range model.Columns {
		final[blockmodel.TitleKey(col.Title)] = col.Title
	}
	for _, t := range c.Delete {
		delete(final, blockmodel.TitleKey(t))
	}
	retitle := func(name, from, to string) {
		delete(final, blockmodel.TitleKey(from))
		if _, clash := final[blockmodel.TitleKey(to)]; clash {
			e.Add(name, "a column titled %q exists", to)
		}
		final[blockmodel.TitleKey(to)] = to
	}
	for _, r := range c.Rename {
		delete(final, blockmodel.TitleKey(r.Title))
	}
	for i, r := range c.Rename {
		retitle("columns.rename["+strconv.Itoa(i)+"].new_title", r.Title, r.NewTitle)
	}
	for i, m := range c.UpdateMetadata {
		if m.NewTitle != nil && blockmodel.TitleKey(*m.NewTitle) != blockmodel.TitleKey(m.Title) {
			retitle("columns.update_metadata["+strconv.Itoa(i)+"].values.title", m.Title, *m.NewTitle)
		}
	}
	others := len(c.New) + len(c.Update) + len(c.Delete) + len(c.UpdateMetadata)
	if len(c.Rename) > 0 && others > 0 {
		e.Add("columns.rename", "rename must be the only column operation of an update")
	}
	if len(c.Rename)+others == 0 && len(e.Params) == 0 {
		e.Add("columns", "no column operation: give new, update, delete, rename or update_metadata")
	}
	if u.GeometryChange != nil && !model.Kind.SubBlocked() {
		e.Add("geometry_change", "applies to sub-blocked models only (send null or leave it out)")
	}
	if u.GeometryChange != nil && *u.GeometryChange {
		updated := map[string]bool{}
		for _, t := range c.Update {
			updated[t] = true
		}
		for i, m := range c.UpdateMetadata {
			if !updated[m.Title] {
				e.Add("columns.update_metadata["+strconv.Itoa(i)+"].title",
					"with geometry_change, update_metadata may only target columns in columns.update")
			}
		}
	}
	if u.FillSubblocks != nil && *u.FillSubblocks &&
		(model.Kind != blockmodel.FullySubBlocked || u.UpdateType != Merge || u.GeometryChange == nil || !*u.GeometryChange) {
		e.Add("fill_subblocks", "applies only to a fully sub-blocked model with update_type merge and geometry_change true")
	}
	// Mapped titles must be columns the file supplies or identity columns.
	supplied := map[string]bool{}
	for _, n := range c.New {
		supplied[n.Title] = true
	}
	for _, t := range c.Update {
		supplied[t] = true
	}
	files, titles := map[string]bool{}, map[string]bool{}
	for i, m := range u.Input.Mapping {
		name := "input_options.column_name_mapping[" + strconv.Itoa(i) + "]"
		if m.FileColumn == "" || m.Title == "" {
			if m.FileColumn == "" && m.Title == "" {
				continue // reported while decoding
			}
			e.Add(name, "names must not be empty")
			continue
		}
		if !supplied[m.Title] && !systemName(m.Title) {
			e.Add(name, "%q is not a column of columns.new or columns.update", m.Title)
		}
		if files[m.FileColumn] {
			e.Add(name, "file column %q is mapped twice", m.FileColumn)
		}
		if titles[m.Title] {
			e.Add(name, "column %q is mapped twice", m.Title)
		}
		files[m.FileColumn], titles[m.Title] = true, true
	}
}

// Changes is the request echoed with its defaults filled, the changes
// member of the 202 UpdateWithUrl answer.
func (u *Update) Changes() map[string]any {
	c := u.Columns
	nz := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	news := make([]map[string]any, 0, len(c.New))
	for _, n := range c.New {
		m := map[string]any{"title": n.Title, "data_type": n.DataType, "unit_id": n.UnitID}
		if n.Tags != nil {
			m["tags"] = n.Tags
		}
		news = append(news, m)
	}
	renames := make([]Rename, 0, len(c.Rename))
	renames = append(renames, c.Rename...)
	cols := map[string]any{"new": news, "update": nz(c.Update), "delete": nz(c.Delete), "rename": renames}
	if len(c.UpdateMetadata) > 0 {
		ums := make([]map[string]any, 0, len(c.UpdateMetadata))
		for _, m := range c.UpdateMetadata {
			v := map[string]any{}
			if m.NewTitle != nil {
				v["title"] = *m.NewTitle
			}
			if m.UnitSet {
				v["unit_id"] = m.UnitID
			}
			if m.Tags != nil {
				v["tags"] = m.Tags
			}
			ums = append(ums, map[string]any{"title": m.Title, "values": v})
		}
		cols["update_metadata"] = ums
	}
	return map[string]any{"columns": cols, "update_type": u.UpdateType, "geometry_change": u.GeometryChange,
		"fill_subblocks": u.FillSubblocks, "comment": u.Comment}
}
