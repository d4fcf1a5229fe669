// Command gendocs writes the documentation that is generated from code, so
// the docs can never drift from what perflab does: docs/rules.md from the
// audit rule catalogue and the workload profiles, docs/snapshot.md from the
// snapshot types and their comments, docs/knobs.md from the knob catalogue.
//
//	go run ./internal/tools/gendocs          # rewrite the generated files
//	go run ./internal/tools/gendocs -check   # exit 1 if any is stale (CI)
//
// Each generated file is one entry in docs below; add an entry to generate
// another.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// doc is one generated file: its path relative to the repository root and
// the function that renders its content.
type doc struct {
	path   string
	render func() ([]byte, error)
}

var docs = []doc{
	{"docs/rules.md", renderRules},
	{"docs/snapshot.md", renderSnapshot},
	{"docs/knobs.md", renderKnobs},
}

func main() {
	check := flag.Bool("check", false, "do not write; exit 1 if a generated file differs from what the code generates")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	os.Exit(run(*root, *check))
}

func run(root string, check bool) int {
	stale := 0
	for _, d := range docs {
		want, err := d.render()
		if err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: %s: %v\n", d.path, err)
			return 3
		}
		p := filepath.Join(root, d.path)
		have, err := os.ReadFile(p)
		if err == nil && bytes.Equal(have, want) {
			continue
		}
		if check {
			fmt.Fprintf(os.Stderr, "gendocs: %s is stale (run 'go run ./internal/tools/gendocs' and commit it)\n", d.path)
			stale++
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
			return 3
		}
		if err := os.WriteFile(p, want, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
			return 3
		}
		fmt.Fprintf(os.Stderr, "gendocs: wrote %s\n", d.path)
	}
	if stale > 0 {
		return 1
	}
	return 0
}
