package cli

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fixture"
)

// TestBadInputIsOneLine drives the bad input an operator actually types
// through every command: each must exit with the documented code and say
// what is wrong and how to fix it in one line on stderr — never a help
// screen with exit 0, never a panic, never a measurement thrown away.
func TestBadInputIsOneLine(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := file("garbage.bin", "\x93\x00\xffPK\x03\x04 not json, not text\x87\n")
	text := file("text.txt", "hello world\n")
	empty := file("empty.txt", "")
	newerSnap := file("newer.json", `{"schema": 99, "id": "x"}`)
	runExport := file("runs.json", `{"kind": "perflab-runs", "schema": 1, "runs": []}`)
	newerExport := file("newer-runs.json", `{"kind": "perflab-runs", "schema": 99, "runs": []}`)
	notSQLite := file("not.db", strings.Repeat("not sqlite ", 200))
	emptyDir := filepath.Join(dir, "emptydir")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "x.out")
	metal := fixture.Dir("metal")
	inv := file("hosts.ini", "[web]\nweb1 ansible_host=192.0.2.1\n")
	foreign := filepath.Join(dir, "foreign.db") // a SQLite database of another program
	if db, err := sql.Open("sqlite", foreign); err != nil {
		t.Fatal(err)
	} else if _, err := db.Exec("CREATE TABLE runs (id TEXT, x INTEGER); INSERT INTO runs VALUES ('abc', 1)"); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}

	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string // a piece of the one line that names the problem
	}{
		{"unknown flag", "", []string{"snapshot", "--bogus"}, clierr.Usage, "unknown flag: --bogus"},
		{"extra argument", "", []string{"snapshot", "extra"}, clierr.Usage, `unknown command "extra"`},
		{"unknown command", "", []string{"nosuch"}, clierr.Usage, `unknown command "nosuch"`},
		{"inventory without --on", "", []string{"audit", "--inventory", inv}, clierr.Usage, "--inventory needs --on PATTERN"},
		{"pattern matches nothing", "", []string{"audit", "--inventory", inv, "--on", "db"}, clierr.Usage, `"db" matches no host or group`},
		{"inventory missing", "", []string{"bench", "cpu", "--inventory", missing, "--on", "all"}, clierr.Usage, "x.out"},
		{"bad forks", "", []string{"snapshot", "--inventory", inv, "--on", "all", "--forks", "0"}, clierr.Usage, "--forks 0"},
		{"fleet run as md", "", []string{"audit", "--inventory", inv, "--on", "all", "--format", "md"}, clierr.Usage, "use --format text or json with --inventory"},
		{"bad format", "", []string{"audit", "--root", metal, "--format", "xml"}, clierr.Usage, "use one of text, json, md, prom"},
		{"unknown workload", "", []string{"audit", "--root", metal, "--workload", "nosuch"}, clierr.Usage, "perflab rules --workloads"},
		{"bad severity", "", []string{"audit", "--root", metal, "--fail-on", "bogus"}, clierr.Usage, `--fail-on: unknown severity "bogus" (use none`},
		{"snapshot garbage", "", []string{"audit", "--snapshot", garbage}, clierr.Usage, "not a perflab snapshot"},
		{"snapshot empty", "", []string{"audit", "--snapshot", empty}, clierr.Usage, "not a perflab snapshot"},
		{"snapshot newer", "", []string{"audit", "--snapshot", newerSnap}, clierr.Usage, "upgrade perflab"},
		{"snapshot is a run export", "", []string{"audit", "--snapshot", runExport}, clierr.Usage, "not a perflab snapshot"},
		{"root empty dir", "", []string{"audit", "--root", emptyDir}, clierr.Usage, "not a Linux root"},
		{"root is a file", "", []string{"snapshot", "--root", text}, clierr.Usage, "not a Linux root"},
		{"output is a directory", "", []string{"audit", "--root", metal, "-o", emptyDir}, clierr.Usage, "is a directory"},
		{"output dir missing", "", []string{"snapshot", "--root", metal, "-o", missing}, clierr.Runtime, "does not exist"},
		{"unknown rule", "", []string{"rules", "NOSUCH-RULE"}, clierr.Usage, "perflab rules"},
		{"unknown probe", "", []string{"bench", "nosuch"}, clierr.Usage, "perflab bench list"},
		{"cpu not available", "", []string{"bench", "syscall", "--cpus", "9999", "--no-store"}, clierr.Usage, "CPU 9999"},
		{"scratch dir missing", "", []string{"bench", "disk", "--dir", missing, "--no-store"}, clierr.Usage, "is not a directory"},
		{"scratch dir on /proc", "", []string{"bench", "probe:syscall", "--dir", "/proc", "--no-store"}, clierr.Usage, "does not accept new files"},
		{"bad param", "", []string{"bench", "syscall", "--param", "bad", "--no-store"}, clierr.Usage, `--param "bad" is not key=value`},
		{"empty bench name", "", []string{"bench", "", "--no-store"}, clierr.Usage, "empty suite or probe name"},
		{"upper-case qualifier", "", []string{"bench", "PROBE:cpu", "--no-store"}, clierr.Usage, "did you mean probe:cpu?"},
		{"unknown qualifier", "", []string{"bench", "tool:cpu", "--no-store"}, clierr.Usage, "only probe: and suite: qualify a name"},
		{"qualified twice", "", []string{"bench", "probe:probe:cpu", "--no-store"}, clierr.Usage, "qualify a name once"},
		{"nothing after the colon", "", []string{"bench", "suite:", "--no-store"}, clierr.Usage, "no suite name after the colon"},
		{"two names in one argument", "", []string{"bench", "cpu disk", "--no-store"}, clierr.Usage, "give each name as its own argument"},
		{"suite: names a probe", "", []string{"bench", "suite:syscall", "--no-store"}, clierr.Usage, "syscall is a probe: run it as probe:syscall"},
		{"disk tests empty entry", "", []string{"bench", "probe:disk", "--param", "tests=fsync,", "--no-store"}, clierr.Usage, `tests: "fsync," has an empty entry`},
		{"disk tests unknown step", "", []string{"bench", "probe:disk", "--param", "disk:tests=fsync,trim", "--no-store"}, clierr.Usage, `"trim" is not one of seq_write`},
		// Refused before measuring, not after the run at the final rename.
		{"bench output is a directory", "", []string{"bench", "syscall", "--no-store", "-o", emptyDir}, clierr.Usage, "is a directory"},
		{"db is a directory", "", []string{"runs", "list", "--db", emptyDir}, clierr.Usage, "is a directory"},
		{"db is not SQLite", "", []string{"runs", "list", "--db", notSQLite}, clierr.Usage, "not a SQLite database"},
		{"db of another program", "", []string{"runs", "list", "--db", foreign}, clierr.Usage, "another program created it"},
		{"compare on another program's db", "", []string{"compare", "a", "b", "--db", foreign}, clierr.Usage, "another program created it"},
		{"report on another program's db", "", []string{"report", "a", "--db", foreign}, clierr.Usage, "another program created it"},
		{"db directory missing", "", []string{"runs", "show", "abc", "--db", filepath.Join(dir, "nodir", "x.db")}, clierr.Usage, "nodir does not exist"},
		{"import garbage", "", []string{"runs", "import", garbage, "--db", filepath.Join(dir, "a.db")}, clierr.Usage, "not a perflab run export"},
		{"compare one side", "", []string{"compare", "a"}, clierr.Usage, "requires at least 2"},
		{"compare text files", "", []string{"compare", text, text}, clierr.Usage, "neither a perflab run export nor Go benchmark output"},
		{"compare newer export", "", []string{"compare", newerExport, newerExport}, clierr.Usage, "(upgrade perflab to read it)"},
		{"compare unknown label", "", []string{"compare", "nosuch1", "nosuch2", "--db", filepath.Join(dir, "b.db")}, clierr.Usage, "perflab runs list"},
		{"report unknown run", "", []string{"report", "nosuch", "--db", filepath.Join(dir, "c.db")}, clierr.Usage, "perflab runs list"},
		{"flame unknown subcommand", "", []string{"flame", "nosuch"}, clierr.Usage, `unknown command "nosuch" for "perflab flame"`},
		{"tune unknown subcommand", "", []string{"tune", "aply", "web"}, clierr.Usage, `unknown command "aply"`},
		{"completion unknown shell", "", []string{"completion", "tcsh"}, clierr.Usage, `unknown command "tcsh"`},
		{"fold garbage", "GET / HTTP/1.1\nHost: x\n", []string{"flame", "fold"}, clierr.Usage, "not perf script output"},
		{"fold empty", "", []string{"flame", "fold"}, clierr.Usage, "no samples"},
		// Cut short after a sample, fold writes what it read and warns (exit 0, flame_test.go); cut before any, nothing folds.
		{"fold truncated", "a 1 [000] 1.0: 1 cpu-clock:\n\t1 f (/x", []string{"flame", "fold", "-o", filepath.Join(dir, "t.folded")}, clierr.Usage, "not perf script output"},
		{"render not folded", "main;foo;bar\n", []string{"flame", "render"}, clierr.Usage, "not folded stacks"},
		{"tune unknown workload", "", []string{"tune", "plan", "nosuch", "--root", metal}, clierr.Usage, "unknown workload"},
		{"unknown container", "", []string{"audit", "--root", metal, "--container", "nosuch"}, clierr.Usage, `container "nosuch": no container has this name or id`},
		{"container and pid", "", []string{"snapshot", "--root", metal, "--container", "x", "--pid", "4242"}, clierr.Usage, "--container and --pid both name the target"},
		{"tune unknown container", "", []string{"tune", "plan", "web", "--root", metal, "--container", "pod/default/nope"}, clierr.Usage, "no pod default/nope on this host"},
		{"bench unknown container", "", []string{"bench", "probe:cpu", "--container", "perflab-no-such-container", "--no-store"}, clierr.Usage, "no container has this name or id"},
		{"irq pin bad cpus", "", []string{"irq", "pin", "eth0", "--root", metal, "--cpus", "x"}, clierr.Usage, "bad --cpus"},
		{"exporter bad listen", "", []string{"exporter", "--root", metal, "--listen", "127.0.0.1:99999"}, clierr.Usage, "not a TCP port"},
		{"exporter listen no port", "", []string{"exporter", "--root", metal, "--listen", "localhost"}, clierr.Usage, "missing port"},
		// An explicit --db the exporter cannot read fails at start instead
		// of serving forever without bench series.
		{"exporter bad db", "", []string{"exporter", "--root", metal, "--listen", "127.0.0.1:0", "--db", notSQLite}, clierr.Usage, "not a SQLite database"},
		{"deps unknown suite", "", []string{"deps", "nosuch"}, clierr.Usage, "unknown suite"},
		{"check output is a directory", "", []string{"check", "--no-bench", "-o", emptyDir}, clierr.Usage, "is a directory"},
		{"profile no such pid", "", []string{"profile", "-p", "999999999", "-d", "1"}, clierr.Usage, "999999999"},
		{"profile two eBPF views", "", []string{"profile", "-p", "1", "--off-cpu", "--locks"}, clierr.Usage, "--off-cpu, --mixed, --locks cannot be combined"},
		{"profile negative min-block", "", []string{"profile", "-p", "1", "--locks", "--min-block", "-1ms"}, clierr.Usage, "--min-block -1ms is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A command that wrongly started serving or measuring is cut
			// off here rather than hanging the suite.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			code, _, stderr := runCLIWith(t, ctx, strings.NewReader(c.stdin), nil, c.args...)
			if code != c.code {
				t.Errorf("perflab %s: exit %d, want %d; stderr %q", strings.Join(c.args, " "), code, c.code, stderr)
			}
			if !strings.HasPrefix(stderr, "perflab: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("perflab %s: stderr is not one 'perflab: …' line: %q", strings.Join(c.args, " "), stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("perflab %s: stderr %q does not say %q", strings.Join(c.args, " "), stderr, c.want)
			}
			if strings.Contains(stderr, "internal error") || strings.Contains(stderr, "goroutine") {
				t.Errorf("perflab %s: a panic: %q", strings.Join(c.args, " "), stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a failed -o created the missing directory")
	}
}

// A tool probe named on its own whose tool is missing is refused before
// anything runs or is stored — not measured after the other probes and
// recorded as a failed run — and the line names the builtin probe to use.
func TestBenchRefusesMissingTool(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("PATH", t.TempDir()) // sysbench is on no PATH
	db := filepath.Join(t.TempDir(), "runs.db")
	code, out, stderr := runCLI(t, "bench", "probe:syscall", "probe:sysbench.cpu", "--db", db)
	want := "perflab: probe sysbench.cpu cannot run here: sysbench not installed"
	if code != clierr.Runtime || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "or run the builtin probe cpu instead") {
		t.Errorf("exit %d, stderr %q; want one line %q… naming the builtin probe", code, stderr, want)
	}
	if out != "" {
		t.Errorf("measured anyway:\n%s", out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the database was created or written: %v", err)
	}
}
