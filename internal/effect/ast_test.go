package effect

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// effectFields are the fields that hold an effect's size or its interval
// anywhere in perflab (compare.Delta, bench.Effect, bisect.Effect,
// changepoint.Point, compare.HostDrift, stats.RunLevel, …).
var effectFields = map[string]bool{
	"Ratio": true, "Lo": true, "Hi": true, "DeltaPct": true, "DeltaLoPct": true, "DeltaHiPct": true,
	"Shift": true, "ShiftLo": true, "ShiftHi": true, "Change": true, "ChangeLo": true, "ChangeHi": true,
	"SpeedPct": true, "SpeedLoPct": true, "SpeedHiPct": true, "Diff": true, "DiffLo": true, "DiffHi": true,
}

// TestOneVerdict holds the repository to one verdict rule: outside this
// package no code compares an effect's size or interval with 0 or 1 (a
// sign, i.e. a direction decided by hand), and nothing calls
// stats.RunLevel.Direction, the rule's raw ingredient. A second verdict
// function fails here; call Effect.Verdict (or Direction, Toward).
func TestOneVerdict(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "effect", "stats":
				return filepath.SkipDir // the rule itself, and its statistics
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				switch n.Op {
				case token.LSS, token.GTR, token.LEQ, token.GEQ:
				default:
					return true
				}
				if (effectField(n.X) && unitOrZero(n.Y)) || (effectField(n.Y) && unitOrZero(n.X)) {
					bad = append(bad, fset.Position(n.Pos()).String()+": compares an effect with 0/1")
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Direction" && len(n.Args) == 1 {
					bad = append(bad, fset.Position(n.Pos()).String()+": stats.RunLevel.Direction outside package effect")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

func effectField(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return effectFields[e.Sel.Name]
	case *ast.BinaryExpr: // e.Ratio - 1, 100*e.Lo …
		return effectField(e.X) || effectField(e.Y)
	case *ast.ParenExpr:
		return effectField(e.X)
	}
	return false
}

func unitOrZero(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	if !ok {
		return false
	}
	switch l.Value {
	case "0", "1", "0.0", "1.0":
		return true
	}
	return false
}
