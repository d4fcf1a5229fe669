package bench

import (
	"fmt"
	"io"
	"time"
)

// OptionError is an Options field with a value the harness cannot use. It
// names the field (Precision, MinRuns, …), not a command-line flag: the
// CLI words it as its flag. Reason and Hint may name other fields.
type OptionError struct {
	Field  string // the Options field, e.g. "MaxRuns"
	Value  any    // the value given
	Reason string // e.g. "is below MinRuns 8"
	Hint   string // how to fix it, "" when obvious
}

func (e *OptionError) Error() string { return fmt.Sprintf("%s %v %s", e.Field, e.Value, e.Reason) }

// Validate checks the harness limits as given (before defaults are
// filled in): MaxRuns 0 means the default, every other limit must be set.
func (o Options) Validate() error {
	switch {
	case o.Precision < 0 || o.Precision >= 1:
		return &OptionError{"Precision", o.Precision, "is not a fraction in [0, 1)", "e.g. 0.01 for ±1%"}
	case o.MinRuns < 1:
		return &OptionError{"MinRuns", o.MinRuns, "must be at least 1", fmt.Sprintf("e.g. %d (the fewest with a 95%% CI)", DefaultMinRuns)}
	case o.MaxRuns < 0:
		return &OptionError{"MaxRuns", o.MaxRuns, "must not be negative", ""}
	case o.MaxRuns > 0 && o.MaxRuns < o.MinRuns:
		return &OptionError{"MaxRuns", o.MaxRuns, fmt.Sprintf("is below MinRuns %d", o.MinRuns), "raise MaxRuns"}
	case o.Warmup < 0:
		return &OptionError{"Warmup", o.Warmup, "must not be negative", ""}
	case o.Repeat < 0 || o.Repeat > MaxRepeat:
		return &OptionError{"Repeat", o.Repeat, fmt.Sprintf("is not between 1 and %d", MaxRepeat), "e.g. 3"}
	case o.Budget <= 0:
		return &OptionError{"Budget", o.Budget, "must be positive", "e.g. " + (30 * time.Second).String()}
	}
	return nil
}

// DefaultOptions are the harness defaults every command starts from
// (precision, fewest runs, warm-up, budget; MaxRuns 0 is the harness
// default); a command overrides what its flags set.
func DefaultOptions() Options {
	return Options{Precision: DefaultPrecision, MinRuns: DefaultMinRuns, Warmup: DefaultWarmup, Budget: DefaultBudget, Log: io.Discard}
}
