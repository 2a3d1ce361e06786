package jobs

// Store persists job records: the record half of Shared. The Manager calls
// it from one goroutine at a time, never with its lock held.
type Store interface {
	// Load returns every stored record.
	Load() ([]Record, error)
	// Save creates or replaces a record.
	Save(r Record) error
	// Delete removes a record; a missing one is not an error.
	Delete(id string) error
}
