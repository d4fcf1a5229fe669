package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/profile"
)

// optionErr words a *bench.OptionError as the usage error of the flags in
// names (Options field → flag); any other error is returned unchanged.
func optionErr(err error, names map[string]string) error {
	var oe *bench.OptionError
	if pe := (*profile.OptionError)(nil); errors.As(err, &pe) {
		if pe.Value == nil {
			word := fieldWords(names)
			return clierr.Usagef(word(pe.Hint), "%s %s", word(pe.Field), word(pe.Reason))
		}
		oe = &bench.OptionError{Field: pe.Field, Value: pe.Value, Reason: pe.Reason, Hint: pe.Hint}
	} else if !errors.As(err, &oe) {
		return err
	}
	word := fieldWords(names)
	return clierr.Usagef(word(oe.Hint), "%s %s %s", word(oe.Field), fmt.Sprint(oe.Value), word(oe.Reason))
}

// fieldWords replaces option field names by their flags.
func fieldWords(names map[string]string) func(string) string {
	pairs := make([]string, 0, 2*len(names))
	for field, flag := range names {
		pairs = append(pairs, field, flag)
	}
	return strings.NewReplacer(pairs...).Replace
}
