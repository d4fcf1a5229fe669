package audit

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// The rule case registry: every rule in the catalogue is exercised on
// fixture host trees (testdata/roots) in a passing, a failing and a
// not-applicable state, through the same snapshot.Collect the live audit
// uses. Rule files register their cases from an init in their own test
// file:
//
//	func init() {
//		addRuleCases(
//			ruleCase{Rule: "MEM-KSM", Name: "ksm running", Tree: "metal",
//				Edits: map[string]string{"/sys/kernel/mm/ksm/run": "1\n"}, Want: Fail},
//		)
//	}
//
// TestRuleCasesComplete fails for a rule that lacks any of the three states,
// so a new rule cannot land untested.

// ruleCase is one fixture host for one rule and the status the rule must
// give on it.
type ruleCase struct {
	Rule     string            // rule ID
	Name     string            // what is special about this host
	Tree     string            // base tree: "kvm", "metal" or "kunpeng"
	Edits    map[string]string // fixture.Tree edits: host path → content, or fixture.Delete
	Workload string            // built-in workload; "" means general
	Profile  string            // YAML profile text; overrides Workload when set
	Trusted  bool              // --trusted
	PID      int               // snapshot.Options.PID
	// Container makes the snapshot a container's view (what
	// container.Target.Snapshot records beside the collected facts).
	Container *snapshot.Container
	Want      Status
	// Check makes further assertions on the finding (optional): the
	// observed value, the change proposed, a severity override.
	Check func(t *testing.T, f Finding)
}

var ruleCases []ruleCase

func addRuleCases(cs ...ruleCase) { ruleCases = append(ruleCases, cs...) }

func (c ruleCase) label() string {
	w := c.Workload
	if w == "" {
		w = "general"
	}
	if c.Profile != "" {
		w = "profile"
	}
	if c.Trusted {
		w += ",trusted"
	}
	return c.Rule + "/" + string(c.Want) + "/" + c.Tree + "/" + w + "/" + c.Name
}

// evalCase builds the case's host on a shared copy of its base tree,
// snapshots it and evaluates its rule.
func evalCase(t *testing.T, trees *sharedTrees, c ruleCase) Finding {
	t.Helper()
	r, ok := Lookup(c.Rule)
	if !ok {
		t.Fatalf("no rule %s", c.Rule)
	}
	name := c.Workload
	if name == "" {
		name = "general"
	}
	w, err := LookupWorkload(name)
	if c.Profile != "" {
		w, err = ParseProfile(c.Rule+".yaml", []byte(c.Profile))
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Trusted = w.Trusted || c.Trusted
	var s *snapshot.Snapshot
	trees.with(t, c.Tree, c.Edits, func(fs hostfs.FS) {
		s, err = snapshot.Collect(fs, snapshot.Options{PID: c.PID})
	})
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	if c.Container != nil {
		s.Container = c.Container
	}
	return Evaluate(r, &Context{S: s, W: w})
}

func TestRuleCases(t *testing.T) {
	trees := newSharedTrees(t)
	for _, c := range ruleCases {
		trees.prepare(c.Tree)
	}
	for _, c := range ruleCases {
		t.Run(c.label(), func(t *testing.T) {
			f := evalCase(t, trees, c)
			if f.Status != c.Want {
				t.Fatalf("status %s, want %s\nobserved: %s\nexpected: %s\nreason: %s", f.Status, c.Want, f.Observed, f.Expected, f.Reason)
			}
			checkFindingShape(t, f)
			if c.Check != nil {
				c.Check(t, f)
			}
		})
	}
	// Every case put its tree back: a leaked edit would change the host the
	// next case sees.
	for name, dir := range trees.trees {
		if diff := treeDiff(fixture.Dir(name), dir); diff != "" {
			t.Errorf("shared %s tree not restored: %s", name, diff)
		}
	}
}

// treeDiff compares two trees (names, link targets, file contents) and
// describes the first difference.
func treeDiff(a, b string) string {
	list := func(root string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case d.Type()&os.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				out[rel] = "link:" + l
			case d.IsDir():
				out[rel] = "dir"
			default:
				c, _ := os.ReadFile(p)
				out[rel] = "file:" + string(c)
			}
			return nil
		})
		return out
	}
	la, lb := list(a), list(b)
	for k, v := range la {
		if w, ok := lb[k]; !ok {
			return k + " missing"
		} else if v != w {
			return k + " changed"
		}
	}
	for k := range lb {
		if _, ok := la[k]; !ok {
			return k + " added"
		}
	}
	return ""
}

// sharedTrees holds one private copy of each base tree for all cases.
// Copying a tree per case (fixture.Tree) costs seconds on a slow disk and
// there are hundreds of cases, so each case applies its edits to the shared
// copy, collects, and puts the original files back. Cases therefore run one
// at a time.
type sharedTrees struct {
	t     *testing.T // the parent test: copies live as long as it does
	trees map[string]string
	bak   map[string]string
	n     int
}

func newSharedTrees(t *testing.T) *sharedTrees {
	return &sharedTrees{t: t, trees: map[string]string{}, bak: map[string]string{}}
}

// prepare copies a base tree once; it runs in the parent test's goroutine.
func (st *sharedTrees) prepare(tree string) {
	if _, ok := st.trees[tree]; ok {
		return
	}
	dir := fixture.Tree(st.t, tree, nil).Root()
	// Backups sit beside the copy, on the same filesystem, so that moving a
	// file aside and back is a rename.
	bak := dir + ".bak"
	if err := os.Mkdir(bak, 0o755); err != nil {
		st.t.Fatal(err)
	}
	st.t.Cleanup(func() { os.RemoveAll(bak) })
	st.trees[tree], st.bak[tree] = dir, bak
}

// with applies edits (as fixture.Tree does) to the copy of tree, runs fn on
// it and restores the copy, even when fn fails the test.
func (st *sharedTrees) with(t *testing.T, tree string, edits map[string]string, fn func(hostfs.FS)) {
	t.Helper()
	dir, ok := st.trees[tree]
	if !ok {
		t.Fatalf("tree %s not prepared (call prepare from the parent test)", tree)
	}
	paths := make([]string, 0, len(edits))
	for p := range edits {
		paths = append(paths, p)
	}
	sort.Strings(paths) // a parent before its children
	var undo []func() error
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](); err != nil {
				t.Fatalf("restore fixture %s: %v", tree, err)
			}
		}
	}()
	for _, p := range paths {
		full := filepath.Join(dir, p)
		if _, err := os.Lstat(full); err == nil {
			st.n++
			bak := filepath.Join(st.bak[tree], strconv.Itoa(st.n))
			if err := os.Rename(full, bak); err != nil {
				t.Fatal(err)
			}
			undo = append(undo, func() error {
				if err := os.RemoveAll(full); err != nil {
					return err
				}
				return os.Rename(bak, full)
			})
		} else {
			top := full
			for {
				parent := filepath.Dir(top)
				if _, err := os.Lstat(parent); err == nil {
					break
				}
				top = parent
			}
			undo = append(undo, func() error { return os.RemoveAll(top) })
		}
		if edits[p] == fixture.Delete {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(edits[p]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := hostfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	fn(fs)
}

// checkFindingShape asserts what every finding of its status must carry,
// whatever the rule: a reason for na and error, observed and expected
// values for pass and fail, and for fail a fix, a revert and changes whose
// Current lets tune restore the host.
func checkFindingShape(t *testing.T, f Finding) {
	t.Helper()
	switch f.Status {
	case NA, Error:
		if f.Reason == "" {
			t.Errorf("%s without a reason", f.Status)
		}
	case Pass, Fail:
		if f.Observed == "" || f.Expected == "" {
			t.Errorf("%s without observed (%q) or expected (%q)", f.Status, f.Observed, f.Expected)
		}
	}
	if f.Status != Fail {
		if len(f.Changes) > 0 || f.Fix != "" {
			t.Errorf("%s finding carries a fix: %q", f.Status, f.Fix)
		}
		return
	}
	if f.Fix == "" || f.Revert == "" {
		t.Errorf("fail without fix (%q) or revert (%q)", f.Fix, f.Revert)
	}
	if len(f.Changes) == 0 {
		t.Errorf("fail without changes")
	}
	for _, ch := range f.Changes {
		if ch.Applicable() && ch.Current == "" {
			t.Errorf("change %s %s has no current value to revert to", ch.Kind, ch.Target)
		}
		if ch.Applicable() && ch.Current == ch.Value {
			t.Errorf("change %s %s writes the value it already has (%q)", ch.Kind, ch.Target, ch.Value)
		}
	}
}

func TestRuleCasesComplete(t *testing.T) {
	have := map[string]map[Status]bool{}
	for _, c := range ruleCases {
		if _, ok := Lookup(c.Rule); !ok {
			t.Errorf("case %q names unknown rule %s", c.label(), c.Rule)
			continue
		}
		if have[c.Rule] == nil {
			have[c.Rule] = map[Status]bool{}
		}
		have[c.Rule][c.Want] = true
	}
	var missing []string
	for _, r := range Rules() {
		var lack []string
		for _, st := range []Status{Pass, Fail, NA} {
			if !have[r.ID][st] {
				lack = append(lack, string(st))
			}
		}
		if len(lack) > 0 {
			missing = append(missing, r.ID+" ("+strings.Join(lack, ", ")+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d rules lack fixture cases: %s", len(missing), strings.Join(missing, "; "))
	}
}

// Helpers for building edits.

// edits merges edit maps; later maps win.
func edits(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// eachPolicy sets file in cpufreq policy0..n-1.
func eachPolicy(n int, file, value string) map[string]string {
	out := map[string]string{}
	for i := 0; i < n; i++ {
		out["/sys/devices/system/cpu/cpufreq/policy"+itoa(i)+"/"+file] = value
	}
	return out
}

// eachCPU sets a file under cpu0..n-1.
func eachCPU(n int, rest, value string) map[string]string {
	out := map[string]string{}
	for i := 0; i < n; i++ {
		out["/sys/devices/system/cpu/cpu"+itoa(i)+"/"+rest] = value
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// patched returns a base tree file with fn applied, for edits that change
// one line of a multi-line file (/proc/meminfo, /proc/stat, /proc/cmdline).
// Cases are built in init, so a missing base file panics.
func patched(tree, path string, fn func(string) string) string {
	b, err := os.ReadFile(filepath.Join(fixture.Dir(tree), path))
	if err != nil {
		panic("fixture " + tree + ": " + err.Error())
	}
	return fn(string(b))
}

// replaceLine replaces the line starting with prefix.
func replaceLine(prefix, with string) func(string) string {
	return func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				lines[i] = with
			}
		}
		return strings.Join(lines, "\n")
	}
}

// wantChange asserts that the finding proposes writing value to target.
func wantChange(target, value string) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		for _, c := range f.Changes {
			if c.Target == target && c.Value == value {
				return
			}
		}
		t.Errorf("no change %s = %q in %+v", target, value, f.Changes)
	}
}

// wantSeverity asserts the finding's (possibly overridden) severity.
func wantSeverity(s Severity) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		if f.Severity != s {
			t.Errorf("severity %s, want %s", f.Severity, s)
		}
	}
}

// all combines checks.
func all(checks ...func(*testing.T, Finding)) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		for _, c := range checks {
			c(t, f)
		}
	}
}

// observedContains asserts a substring of the observed value.
func observedContains(sub string) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		if !strings.Contains(f.Observed, sub) {
			t.Errorf("observed %q does not contain %q", f.Observed, sub)
		}
	}
}
