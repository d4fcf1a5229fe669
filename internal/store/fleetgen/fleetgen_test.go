package fleetgen

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"testing"
)

func newGen(t *testing.T, opt Options) *Generator {
	t.Helper()
	g, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// generate is g's whole fleet as JSON, its hosts built in the given order
// by workers goroutines (each host from its own generator, derived from
// the seed and the host's index, so neither may change a byte).
func generate(t *testing.T, g *Generator, order []int, workers int) []byte {
	t.Helper()
	hosts := make([]Host, len(order))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				hosts[i] = g.Host(i)
			}
		}()
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(g.Plan()); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if err := enc.Encode(h); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// The same seed gives the same store, byte for byte: generated twice in
// one process, its hosts in order or in reverse, on one worker or several,
// with GOMAXPROCS 1 and 2. A different seed gives a different one (so the
// comparison is not of empty fleets).
func TestSameSeedSameFleet(t *testing.T) {
	opt := Options{Hosts: 24, RunsPerHost: 6, Samples: 2, Seed: 7, Repo: "../../.."}
	fwd, rev := make([]int, opt.Hosts), make([]int, opt.Hosts)
	for i := range fwd {
		fwd[i], rev[i] = i, opt.Hosts-1-i
	}
	want := generate(t, newGen(t, opt), fwd, 1)
	g := newGen(t, opt) // a second generator of the same seed
	if n := bytes.Count(want, []byte(`"samples"`)); n < opt.Hosts*opt.RunsPerHost {
		t.Fatalf("%d runs with samples, want %d", n, opt.Hosts*opt.RunsPerHost)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct {
			name    string
			order   []int
			workers int
		}{{"in order", fwd, 1}, {"reversed", rev, 1}, {"4 workers", rev, 4}} {
			if got := generate(t, g, c.order, c.workers); !bytes.Equal(got, want) {
				t.Errorf("GOMAXPROCS %d, %s: %d bytes differ from the first generation's %d", procs, c.name, len(got), len(want))
			}
		}
	}
	other := opt
	other.Seed++
	if bytes.Equal(generate(t, newGen(t, other), fwd, 1), want) {
		t.Error("seed 8 gave seed 7's fleet")
	}
}
