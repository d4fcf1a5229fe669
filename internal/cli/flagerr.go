package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
)

// optionErr words a *bench.OptionError as the usage error of the flags in
// names (Options field → flag); any other error is returned unchanged.
func optionErr(err error, names map[string]string) error {
	var oe *bench.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	pairs := make([]string, 0, 2*len(names))
	for field, flag := range names {
		pairs = append(pairs, field, flag)
	}
	word := strings.NewReplacer(pairs...).Replace
	return clierr.Usagef(word(oe.Hint), "%s %s %s", word(oe.Field), fmt.Sprint(oe.Value), word(oe.Reason))
}
