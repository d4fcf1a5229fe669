package tools

import (
	"os"
	"path/filepath"

	"github.com/perflab/perflab/internal/probe"
)

// makeDir creates an adapter's own directory, name, in the run's scratch
// directory. The path is returned even when creating it failed, so that
// Teardown removes whatever part of it exists.
func makeDir(env *probe.Env, name string) (string, error) {
	dir := filepath.Join(env.Dir, name)
	return dir, os.MkdirAll(dir, 0o700)
}

// removeDir removes *dir, if set, and forgets it, so that a second
// Teardown, or one after a Setup that failed before making it, does
// nothing.
func removeDir(dir *string) error {
	if *dir == "" {
		return nil
	}
	err := os.RemoveAll(*dir)
	*dir = ""
	return err
}
