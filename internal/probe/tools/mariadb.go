package tools

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/deps"
	"github.com/perflab/perflab/internal/probe"
)

// mariadb is a private MariaDB (or MySQL) server for one run: a fresh data
// directory in the scratch directory, --no-defaults so that no my.cnf of
// the host is read, TCP on 127.0.0.1 at a free port, and a database and
// user for sysbench created by an --init-file, so no SQL client is needed.
type mariadb struct {
	srv      *server
	dir      string // data directory and logs
	sockDir  string // a short directory for the socket when dir is too long for one
	port     int
	flavor   string // "MariaDB" or "MySQL"
	version  string
	bin      string
	initArgv []string
}

const (
	oltpDB   = "sbtest"
	oltpUser = "sbtest"
)

// findMariaDB returns the server binary, its version and flavour.
func findMariaDB(ctx context.Context) (bin, version, flavor string, err error) {
	bin, err = need("mariadb", "mariadbd", "mysqld")
	if err != nil {
		return "", "", "", err
	}
	out, _ := runTool(ctx, invocation{tool: "mariadb", argv: []string{bin, "--version"}, timeout: 10 * time.Second})
	banner := string(out.stdout) + string(out.stderr)
	version, verr := deps.ParseVersion(banner)
	if verr != nil {
		return "", "", "", fmt.Errorf("mariadb: cannot tell the version of %s: %v", bin, verr)
	}
	flavor = "MySQL"
	if strings.Contains(banner, "MariaDB") {
		flavor = "MariaDB"
	}
	if flavor == "MySQL" && !versionAtLeast(version, "5.7") {
		return "", "", "", tooOld("mariadb", version, "MySQL 5.7 (or any MariaDB 10)", "older servers cannot initialise a data directory with mysqld --initialize-insecure")
	}
	if flavor == "MariaDB" && !versionAtLeast(version, "10.4") {
		return "", "", "", tooOld("mariadb", version, "MariaDB 10.4", "older mariadb-install-db lacks --auth-root-authentication-method")
	}
	return bin, version, flavor, nil
}

// currentUser is the account the server runs as: mariadbd refuses to run
// as root unless told --user=root, and as another user it can only be that
// user.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

// startMariaDB initialises a data directory under base and starts the
// server pinned to cpus; maxConn must cover the client threads.
func startMariaDB(ctx context.Context, env *probe.Env, base string, cpus []int, maxConn int) (*mariadb, error) {
	bin, version, flavor, err := findMariaDB(ctx)
	if err != nil {
		return nil, err
	}
	m := &mariadb{dir: filepath.Join(base, "mariadb"), flavor: flavor, version: version, bin: bin}
	data := filepath.Join(m.dir, "data")
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return nil, err
	}
	sock := filepath.Join(m.dir, "s.sock")
	// sun_path holds 108 bytes; a deep --dir must not break the server.
	if len(sock) > 100 {
		if m.sockDir, err = os.MkdirTemp("", "perflab-sock-"); err != nil {
			return nil, err
		}
		sock = filepath.Join(m.sockDir, "s.sock")
	}
	if m.port, err = freePort(false); err != nil {
		return m, err
	}
	u := currentUser()
	common := []string{"--no-defaults", "--datadir=" + data, "--user=" + u}
	// Small redo log: the data set is tiny, and a 96 MiB log only slows
	// the initialisation down.
	small := []string{"--innodb-log-file-size=8M"}
	if flavor == "MariaDB" {
		inst, ok := lookPath("mariadb-install-db", "mysql_install_db")
		if !ok {
			return m, missingError("mariadb", "mariadb-install-db", "mysql_install_db")
		}
		m.initArgv = append(append([]string{inst}, common...), "--auth-root-authentication-method=normal",
			"--skip-test-db", "--skip-name-resolve")
		m.initArgv = append(m.initArgv, small...)
	} else {
		m.initArgv = append(append([]string{bin}, common...), "--initialize-insecure")
	}
	addNote(&env.Notes, "database initialised with: "+shellJoin(m.initArgv))
	if _, err := runTool(ctx, invocation{tool: "mariadb", argv: m.initArgv, dir: m.dir, timeout: 3 * time.Minute}); err != nil {
		return m, err
	}
	init := filepath.Join(m.dir, "init.sql")
	sql := fmt.Sprintf("CREATE DATABASE IF NOT EXISTS %s;\nCREATE USER IF NOT EXISTS '%s'@'127.0.0.1';\nGRANT ALL ON %s.* TO '%s'@'127.0.0.1';\n",
		oltpDB, oltpUser, oltpDB, oltpUser)
	if err := os.WriteFile(init, []byte(sql), 0o600); err != nil {
		return m, err
	}
	argv := append([]string{bin}, common...)
	argv = append(argv, "--socket="+sock, "--port="+strconv.Itoa(m.port), "--bind-address=127.0.0.1",
		"--pid-file="+filepath.Join(m.dir, "mariadbd.pid"), "--log-error="+filepath.Join(m.dir, "error.log"),
		"--init-file="+init, "--skip-name-resolve", "--skip-log-bin",
		"--max-connections="+strconv.Itoa(maxConn), "--innodb-buffer-pool-size=128M")
	argv = append(argv, small...)
	if flavor == "MySQL" {
		// The X protocol listens on 33060 on every address by default.
		argv = append(argv, "--mysqlx=OFF")
	}
	addNote(&env.Notes, "server: "+shellJoin(argv))
	if m.srv, err = startServer("mariadb", argv, m.dir, cpus); err != nil {
		return m, err
	}
	if err := m.srv.waitReady(ctx, 2*time.Minute, tcpReady(m.port)); err != nil {
		if te, ok := err.(*ToolError); ok {
			b, _ := os.ReadFile(filepath.Join(m.dir, "error.log"))
			if t := tail(b, 3); t != "" {
				te.Tail = t
			}
		}
		return m, err
	}
	return m, nil
}

// stop shuts the server down (InnoDB needs a moment) and removes its data.
func (m *mariadb) stop() error {
	if m == nil {
		return nil
	}
	err := m.srv.stop(30 * time.Second)
	if rerr := os.RemoveAll(m.dir); rerr != nil && err == nil {
		err = rerr
	}
	if m.sockDir != "" {
		if rerr := os.RemoveAll(m.sockDir); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// sysbenchArgs are sysbench's connection options for this server.
func (m *mariadb) sysbenchArgs() []string {
	return []string{"--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(m.port),
		"--mysql-user=" + oltpUser, "--mysql-db=" + oltpDB}
}
