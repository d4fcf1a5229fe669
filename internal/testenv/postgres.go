package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// Postgres starts a private PostgreSQL server for the test (Debian's
// postgresql package: initdb and pg_ctl from /usr/lib/postgresql/N/bin) in
// a temporary directory, listening only on a unix socket there, and
// returns a postgres:// URL of a fresh database on it. The server is
// stopped and its directory removed when the test ends.
//
// PostgreSQL refuses to run as root, so as root the server runs as the
// postgres user the package creates; otherwise as the current user.
func Postgres(t testing.TB) string {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		Unavailable(t, "PostgreSQL server binaries not installed (Debian package postgresql; scripts/test installs it)")
	}
	sweepPostgres(bin)
	dir, run := postgresDir(t)
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	if out, err := run(filepath.Join(bin, "initdb"), "-D", data, "-U", "perflab", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// The port only names the socket file: with listen_addresses empty
	// the server opens no TCP port, so parallel servers cannot collide.
	opts := fmt.Sprintf("-k %s -c listen_addresses= -p 5432 -c fsync=off -c max_connections=60", dir)
	if out, err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", logf, "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logf)
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() {
		if out, err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			t.Errorf("pg_ctl stop: %v\n%s", err, out)
		}
		os.RemoveAll(dir)
	})
	base := fmt.Sprintf("postgres:///%%s?host=%s&port=5432&user=perflab&sslmode=disable", dir)
	name := fmt.Sprintf("t%d", pgSeq.Add(1))
	psql := filepath.Join(bin, "psql")
	if out, err := run(psql, "-X", "-q", "-d", fmt.Sprintf(base, "postgres"), "-c", "CREATE DATABASE "+name).CombinedOutput(); err != nil {
		t.Fatalf("createdb: %v\n%s", err, out)
	}
	return fmt.Sprintf(base, name)
}

var pgSeq atomic.Int64

// sweepPostgres stops and removes the servers of test processes that died
// before their cleanup ran (killed, or stopped by a closed pipe): each
// server's directory names the pid of the test process that made it.
func sweepPostgres(bin string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "perflab-pg-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner.pid"))
		if err != nil {
			continue // being set up, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // its owner still runs (or cannot be judged)
		}
		stop := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop")
		if os.Geteuid() == 0 {
			stop = exec.Command("runuser", "-u", "postgres", "--", stop.Path, "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop")
		}
		_ = stop.Run() // not running is fine too
		os.RemoveAll(dir)
	}
}

// postgresBin is the newest /usr/lib/postgresql/N/bin with initdb.
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	if len(dirs) == 0 {
		return ""
	}
	return filepath.Dir(dirs[0])
}

func pgMajor(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// postgresDir makes the server's directory and returns a command maker that
// runs as the user the server runs as. The directory is made outside the
// test's TempDir because the postgres user cannot enter that (mode 0700,
// root's).
func postgresDir(t testing.TB) (string, func(name string, args ...string) *exec.Cmd) {
	t.Helper()
	dir, err := os.MkdirTemp("", "perflab-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return dir, exec.Command
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		os.RemoveAll(dir)
		Unavailable(t, "no postgres user to run the server as (Debian package postgresql creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return dir, func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		return cmd
	}
}
