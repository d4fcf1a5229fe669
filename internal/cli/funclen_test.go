package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function in internal/cli may be, from its
// signature to its closing brace. The package maps flags to options and
// wires packages together (docs/ARCHITECTURE.md); a longer function is
// logic or rendering that belongs in a package of its own.
const maxFuncLines = 60

// TestNoLongFunctions guards that rule for every file of the package,
// function literals (RunE closures) included; tests are exempt.
func TestNoLongFunctions(t *testing.T) {
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, ent := range ents {
		name := ent.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			what := "function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, what = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			checked++
			start, end := fset.Position(n.Pos()), fset.Position(body.End())
			if lines := end.Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines; internal/cli allows %d: move logic or printing to its package", name, start.Line, what, lines, maxFuncLines)
			}
			return true
		})
	}
	if checked < 50 {
		t.Fatalf("checked only %d functions: is the test reading the package?", checked)
	}
}
