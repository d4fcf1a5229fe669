// A Go workload for fold fixtures: methods on pointer receivers, closures
// and goroutines give the "pkg.(*T).M" and "func1" names the folder must
// keep intact.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
)

type hasher struct{ buf []byte }

func (h *hasher) sum(i int) [32]byte {
	h.buf = strconv.AppendInt(h.buf[:0], int64(i), 10)
	return sha256.Sum256(h.buf)
}

type table map[string]int

func (t table) insert(k string) { t[k]++ }

func main() {
	n := 300000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var wg sync.WaitGroup
	out := make([]int, 2)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			h := &hasher{}
			t := table{}
			keys := []string{}
			for i := 0; i < n; i++ {
				s := h.sum(i + g)
				k := fmt.Sprintf("%x", s[:4])
				t.insert(k)
				if i%1000 == 0 {
					keys = keys[:0]
					for k := range t {
						keys = append(keys, k)
					}
					sort.Strings(keys)
				}
			}
			out[g] = len(t)
		}(g)
	}
	wg.Wait()
	fmt.Println(out)
}
