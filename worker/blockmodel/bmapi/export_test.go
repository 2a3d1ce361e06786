package bmapi

import "time"

// SetClock makes the area read the time from now (tests).
func SetClock(a *Area, now func() time.Time) { a.clock.Store(now) }
