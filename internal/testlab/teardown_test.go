package testlab

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperLab is run as a child process by TestTeardownOnSignal: it
// builds a lab, prints its name and waits to be killed.
func TestHelperLab(t *testing.T) {
	if os.Getenv("TESTLAB_HELPER") == "" {
		t.Skip("child process of TestTeardownOnSignal")
	}
	l, err := New(context.Background(), Options{Prefix: "remote", Hosts: []HostSpec{{CPUQuota: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("LAB " + l.Name + "\n")
	time.Sleep(time.Minute)
}

func labLeft(name string) []string {
	var left []string
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), name+"-") {
			left = append(left, e.Name())
		}
	}
	for _, root := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup"} {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), name+"-") {
				left = append(left, root+"/"+e.Name())
			}
		}
	}
	return left
}

// A lab is removed when its process gets SIGTERM, and a lab whose process
// was SIGKILLed is removed by the next Sweep.
func TestTeardownOnSignal(t *testing.T) {
	Start(t, Options{Prefix: "remote", Hosts: []HostSpec{{}}}) // root and tools, or skip
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			c := exec.Command(os.Args[0], "-test.run=^TestHelperLab$", "-test.v")
			c.Env = append(os.Environ(), "TESTLAB_HELPER=1")
			out, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			name := ""
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "LAB "); ok {
					name = n
					break
				}
			}
			if name == "" {
				c.Process.Kill()
				c.Wait()
				t.Fatal("helper did not build a lab")
			}
			if len(labLeft(name)) == 0 {
				t.Fatal("helper's lab not visible")
			}
			c.Process.Signal(sig)
			go func() { _, _ = bufio.NewReader(out).WriteTo(discard{}) }()
			c.Wait()
			if sig == syscall.SIGKILL {
				if err := Sweep("remote"); err != nil {
					t.Fatal(err)
				}
			}
			if left := labLeft(name); len(left) > 0 {
				t.Errorf("after %v: left behind %v", sig, left)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
