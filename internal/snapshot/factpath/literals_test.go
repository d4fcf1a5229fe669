package factpath

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// pathUse is where a package's source names fact paths: calls whose
// argument at index arg is a path, struct literal keys whose value is one
// (or a list of them), and variables holding a list of them.
type pathUse struct {
	dir   string         // package directory under internal/
	calls map[string]int // function or method name → argument index (variadic: every argument from it on)
	keys  []string       // composite-literal keys: Path: "…", Paths: []string{…}
	vars  []string       // var NAME = []string{…}
	// unavailable: the paths are Snapshot.Unavailable keys (Sources allowed).
	unavailable bool
	// min is how many literal paths the scan must find, so a rename of
	// the function it looks for cannot make the test pass vacuously.
	min int
}

var uses = []pathUse{
	{dir: "audit", calls: map[string]int{"missingFact": 1, "Missing": 0}, unavailable: true, min: 25},
	{dir: "snapshot", calls: map[string]int{"miss": 0, "missErr": 0, "Missing": 0, "ElemPath": -1}, unavailable: true, min: 40},
	{dir: "knowledge", keys: []string{"Paths"}, min: 100},
	{dir: "compare", keys: []string{"Path"}, vars: []string{"volatilePaths"}, min: 25},
}

// TestPathLiterals checks every fact path written in the source of the
// knowledge base, the audit rules, the collectors and compare against the
// catalogue: a typo or a wrong shape (net.interfaces.eth0 for
// net.interfaces[eth0]) fails here instead of reading as a missing fact.
// A path built by concatenation is checked with "*" for each non-literal
// part when it starts with a literal.
func TestPathLiterals(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	internal := filepath.Join(filepath.Dir(self), "..", "..")
	literals := map[string][]string{} // package dir → path patterns found
	var recordable []string           // fact-like literals in the collectors
	for _, u := range uses {
		found := 0
		files, _ := filepath.Glob(filepath.Join(internal, u.dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			check := func(e ast.Expr) {
				p, ok := pathOf(e)
				if !ok {
					return
				}
				found++
				literals[u.dir] = append(literals[u.dir], p)
				var err error
				if u.unavailable {
					err = CheckUnavailable(p)
				} else {
					err = Check(p)
				}
				if err != nil {
					t.Errorf("%s: fact path %q: %v", fset.Position(e.Pos()), p, err)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					// Collectors also record facts from lists
					// (for _, f := range []string{"cpu.governors", …}):
					// any literal there that names a fact may be one.
					if u.dir == "snapshot" {
						if p, ok := pathOf(n); ok && strings.Contains(p, ".") && Check(p) == nil {
							recordable = append(recordable, p)
						}
					}
				case *ast.CallExpr:
					name := ""
					switch fn := n.Fun.(type) {
					case *ast.Ident:
						name = fn.Name
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					}
					i, ok := u.calls[name]
					if !ok {
						return true
					}
					if i == -1 { // ElemPath(list, key, field): list[*].field
						if len(n.Args) == 3 {
							l, ok1 := pathOf(n.Args[0])
							fld, ok2 := pathOf(n.Args[2])
							if ok1 && ok2 {
								found++
								if err := Check(l + "[*]." + fld); err != nil {
									t.Errorf("%s: ElemPath(%q, …, %q): %v", fset.Position(n.Pos()), l, fld, err)
								}
							}
						}
						return true
					}
					for j := i; j < len(n.Args); j++ {
						check(n.Args[j])
						if name != "missingFact" {
							break // only missingFact(s, facts ...string) is variadic
						}
					}
				case *ast.KeyValueExpr:
					k, ok := n.Key.(*ast.Ident)
					if !ok || !contains(u.keys, k.Name) {
						return true
					}
					if cl, ok := n.Value.(*ast.CompositeLit); ok {
						for _, e := range cl.Elts {
							check(e)
						}
					} else {
						check(n.Value)
					}
				case *ast.ValueSpec:
					for i, name := range n.Names {
						if contains(u.vars, name.Name) && i < len(n.Values) {
							if cl, ok := n.Values[i].(*ast.CompositeLit); ok {
								for _, e := range cl.Elts {
									check(e)
								}
							}
						}
					}
				}
				return true
			})
		}
		if found < u.min {
			t.Errorf("internal/%s: found %d fact path literals, want at least %d: did a function the scan looks for get renamed?", u.dir, found, u.min)
		}
	}
	// A fact the audit asks about must be one a collector can record as
	// missing (itself, a parent or a child of it): otherwise its absence
	// can never be seen and reads as a zero.
	recordable = append(recordable, literals["snapshot"]...)
	for _, k := range literals["audit"] {
		ok := false
		for _, c := range recordable {
			if Match(c, k) || Match(k, c) {
				ok = true
				break
			}
		}
		if !ok {
			t.Errorf("the audit checks whether %q is missing, but no collector ever records it (or a parent) as missing", k)
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// pathOf renders a string expression as a path pattern: literals as they
// are, any other operand of a concatenation as "*". ok is false unless the
// expression starts with a string literal (a root the scan can check).
func pathOf(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		l, ok := pathOf(e.X)
		if !ok {
			return "", false
		}
		r, ok := pathOf(e.Y)
		if !ok {
			r = "*"
		}
		return l + r, true
	case *ast.ParenExpr:
		return pathOf(e.X)
	}
	return "", false
}
