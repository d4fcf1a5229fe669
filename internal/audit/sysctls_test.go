package audit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot"
)

// `perflab audit` reads only audit.Sysctls(w) of /proc/sys. On every
// fixture tree, for every workload and trust setting, its findings must be
// those of a full snapshot: the subset may make the audit faster, never
// different. Fixed ID and time make the two snapshots comparable.
func TestSysctlSubsetSameFindings(t *testing.T) {
	opt := snapshot.Options{ID: "fixed", Root: "/", Now: time.Unix(1700000000, 0).UTC()}
	for _, name := range fixture.Names() {
		fs, full := collectFixture(t, name, opt)
		eachWorkloadPair(func(wname string, trusted bool, w1, w2 *Workload) {
			sub := opt
			sub.Sysctls = Sysctls(w2)
			part, err := snapshot.Collect(fs, sub)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range sub.Sysctls {
				if full.Sysctl[k] != part.Sysctl[k] {
					t.Errorf("%s: %s = %q in the full snapshot, %q in the subset", name, k, full.Sysctl[k], part.Sysctl[k])
				}
			}
			if !reflect.DeepEqual(full.Unavailable, part.Unavailable) {
				t.Errorf("%s: unavailable facts differ:\nfull:   %v\nsubset: %v", name, full.Unavailable, part.Unavailable)
			}
			sameFindings(t, fmt.Sprintf("%s/%s trusted=%v", name, wname, trusted), Run(full, w1), Run(part, w2), "full", "subset")
		})
	}
}

// A user workload's own sysctl targets join the subset.
func TestSysctlsTakeWorkloadTargets(t *testing.T) {
	w, _ := LookupWorkload("general")
	w.Targets = map[string]string{"net.ipv4.tcp_sack": "1", "thp.enabled": "never", "kernel": "x"}
	got := Sysctls(w)
	if !slices.Contains(got, "net.ipv4.tcp_sack") {
		t.Errorf("the workload's sysctl target is not read: %v", got)
	}
	for _, not := range []string{"thp.enabled", "kernel"} {
		if slices.Contains(got, not) {
			t.Errorf("%s is not a sysctl but is in the subset", not)
		}
	}
}

// Every string literal in the rules' source that names a sysctl present on
// a fixture tree or on this host must be in the subset: a rule that reads
// s.Sysctl["x"] for an x outside it would silently see "not present".
func TestSysctlsNamesEveryLiteral(t *testing.T) {
	subset := map[string]bool{}
	for _, wname := range Workloads() {
		w, _ := LookupWorkload(wname)
		for _, n := range Sysctls(w) {
			subset[n] = true
		}
	}
	roots := []string{"/"}
	for _, name := range fixture.Names() {
		roots = append(roots, fixture.Dir(name))
	}
	isSysctl := func(lit string) bool {
		for _, r := range roots {
			if st, err := os.Stat(filepath.Join(r, knob.SysctlPath(lit))); err == nil && st.Mode().IsRegular() {
				return true
			}
		}
		return false
	}
	files, _ := filepath.Glob("*.go")
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !sysctlLike(s) || strings.ContainsAny(s, " /*[") || !isSysctl(s) {
				return true
			}
			checked++
			if !subset[s] {
				t.Errorf("%s reads sysctl %s, which audit.Sysctls leaves out: add it to the knob catalogue", f, s)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("found only %d sysctl names in the rules' source: the scan is broken", checked)
	}
}

// `perflab audit` leaves out the tools collector (snapshot.Options.NoTools):
// no rule judges where sysbench or fio are. On every fixture tree, for every
// workload and trust setting, the findings must equal a full snapshot's, and
// the snapshots may differ only in the tools and the reason they are absent.
func TestNoToolsSameFindings(t *testing.T) {
	opt := snapshot.Options{ID: "fixed", Root: "/", Now: time.Unix(1700000000, 0).UTC()}
	sawTools := false
	for _, name := range fixture.Names() {
		fs, full := collectFixture(t, name, opt)
		noTools := opt
		noTools.NoTools = true
		part, err := snapshot.Collect(fs, noTools)
		if err != nil {
			t.Fatal(err)
		}
		if len(part.Tools) != 0 || part.Missing("tools.fio") == "" {
			t.Errorf("%s: NoTools still collected tools %v (or left no reason: %q)", name, part.Tools, part.Missing("tools.fio"))
		}
		sawTools = sawTools || len(full.Tools) > 0
		for k, v := range full.Unavailable {
			if !strings.HasPrefix(k, "tools.") && part.Unavailable[k] != v {
				t.Errorf("%s: unavailable %s: %q in the full snapshot, %q without tools", name, k, v, part.Unavailable[k])
			}
		}
		for k := range part.Unavailable {
			if _, ok := full.Unavailable[k]; !ok && k != "tools" {
				t.Errorf("%s: %s unavailable only without tools", name, k)
			}
		}
		eachWorkloadPair(func(wname string, trusted bool, w1, w2 *Workload) {
			sameFindings(t, fmt.Sprintf("%s/%s trusted=%v", name, wname, trusted), Run(full, w1), Run(part, w2), "full", "no tools")
		})
	}
	if !sawTools {
		t.Error("no fixture tree has a tool: the comparison proves nothing")
	}
}
