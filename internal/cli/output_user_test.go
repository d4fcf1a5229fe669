package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

// A user who may not write /dev can still write /dev/null: -o on a device
// is written in place, so its directory's permissions do not matter. Root
// passes every access check, so this runs the binary as nobody.
func TestOutputDeviceAsUnprivilegedUser(t *testing.T) {
	testenv.RequireRoot(t)
	setpriv := testenv.RequireTool(t, "setpriv")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "perflab")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/perflab/perflab/cmd/perflab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "audit", "--root", metalRoot, "-o", os.DevNull)
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody, -o /dev/null: %v\n%s", err, out)
	}
	// And a file in a directory nobody may not write is still refused up front.
	cmd = exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "audit", "--root", metalRoot, "-o", "/root/perflab-denied.txt")
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("as nobody, -o /root/…: succeeded\n%s", out)
	}
}
