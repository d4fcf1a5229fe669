package compare

import "time"

func ptr[T any](v T) *T { return &v }

func snapTime(id string) time.Time {
	return time.Date(2026, 1, 1, 0, len(id), 0, 0, time.UTC)
}
