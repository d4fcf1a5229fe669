package own

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// testNginx is a private nginx on a loopback port: its files in a temp
// dir, its process group killed at the end of the test.
type testNginx struct {
	dir, conf, url, bin string
	port                int
}

func startNginx(t *testing.T, extra string) *testNginx {
	t.Helper()
	testenv.Short(t)
	bin := testenv.RequireTool(t, "nginx")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := &testNginx{dir: t.TempDir(), bin: bin, port: port}
	n.conf = filepath.Join(n.dir, "nginx.conf")
	n.url = fmt.Sprintf("http://127.0.0.1:%d/index.html", port)
	os.MkdirAll(filepath.Join(n.dir, "html"), 0o755)
	os.WriteFile(filepath.Join(n.dir, "html", "index.html"), []byte(strings.Repeat("x", 612)), 0o644)
	if err := os.WriteFile(n.conf, []byte(n.render("", extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", n.dir, "-c", n.conf, "-e", filepath.Join(n.dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
	})
	for i := 0; ; i++ {
		resp, err := http.Get(n.url)
		if err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			b, _ := os.ReadFile(filepath.Join(n.dir, "error.log"))
			t.Fatalf("nginx did not start: %v %s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// render is the configuration with main-context and http-block extras
// ("worker_processes 2;", "keepalive_requests 1;").
func (n *testNginx) render(mainExtra, httpExtra string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers must read the 0700 temp dir
	}
	if mainExtra == "" {
		mainExtra = "worker_processes 1;"
	}
	d := n.dir
	return fmt.Sprintf(`daemon off; master_process on; %s %s
pid %s/nginx.pid; error_log %s/error.log warn;
events { worker_connections 4096; }
http { access_log off; %s
  client_body_temp_path %s/cb; proxy_temp_path %s/p; fastcgi_temp_path %s/f; uwsgi_temp_path %s/u; scgi_temp_path %s/s;
  server { listen 127.0.0.1:%d backlog=4096; root %s/html; location / { } } }
`, mainExtra, user, d, d, httpExtra, d, d, d, d, d, n.port, d)
}
