package ensemble

import "fmt"

// FieldError is a validation error about one member of a request, named as
// the location-wise, loss-calculation and profit-calculation tasks name it
// ("quantiles[1]", "probability_above_cutoff.cutoffs[0]",
// "material_categories[2].cutoff_grade", "processing_cost", …), so that a
// service can report it as an invalid parameter. Name is empty for an error
// about the request as a whole (no operation requested). A caller whose
// members are named differently (consim's plain lists
// "location_wise_quantiles", "probability_above_cutoff") renames the prefix.
type FieldError struct {
	// Name is the member's path.
	Name string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns "name: reason" (the reason alone without a name).
func (e *FieldError) Error() string {
	if e.Name == "" {
		return e.Reason
	}
	return e.Name + ": " + e.Reason
}

func fieldError(name, format string, args ...any) *FieldError {
	return &FieldError{Name: name, Reason: fmt.Sprintf(format, args...)}
}
