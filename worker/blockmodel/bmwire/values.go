package bmwire

// ValueColumn is a column an update file supplies: its title and declared
// data type.
type ValueColumn struct {
	Title string
	Type  DataType
}
