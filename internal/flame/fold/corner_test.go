package fold

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// cornerCases are hand-written perf script inputs for the format's odd
// corners, each checked against the reference (TestFoldMatchesInferno) and
// against its recorded output in testdata/corner/ (TestFoldCornerCases).
// Record with: PERFLAB_RECORD=1 go test -run TestRecordCorner ./internal/flame/fold
var cornerCases = map[string]string{
	// comm with spaces, PID/TID, cpu, period and a trailing-space header
	"comm-spaces": "V8 WorkerThread 24636/25607 [000] 94564.109216:     100000 cycles: \n" +
		"\t    7f5a1b2c3d4e v8::internal::Heap::Scavenge+0x1e (/usr/bin/node)\n" +
		"\t    7f5a1b2c0000 start_thread+0xd7 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n" +
		"Web Content 1234 [001] 94564.109300: cycles: \n" +
		"\t    7f5a1b2c3d4e js::RunScript (/usr/lib/firefox/libxul.so)\n\n",
	// no period (old perf), default TID only, and no trailing blank line
	"no-trailing-blank": "java 12688 [002] 6544038.708352: cpu-clock:\n" +
		"\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n" +
		"\t    7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n" +
		"\t    7f722d140000 Interpreter (/tmp/perf-19982.map)",
	// Java inlining "a->b->c" (perf-map-agent unfoldall), JIT and kernel
	"java-inline": "java 9/10 [000] 1.000000:     1 cpu-clock:\n" +
		"\t7f00 Lorg/example/Foo;::bar->Lorg/example/Baz;::qux->Lorg/example/Baz;::inner_[i] (/tmp/perf-9.map)\n" +
		"\t7f01 Ljava/lang/Thread;::run (/tmp/perf-9.map)\n" +
		"\tffffffff81000000 do_syscall_64 ([kernel.kallsyms])\n\n" +
		"java 9/11 [001] 1.000100:     3 cpu-clock:\n" +
		"\t7f02 Lorg/example/Foo;::bar_[j] (/tmp/perf-9.map)\n" +
		"\t7f03 jitted_fn (/root/.debug/jit/java-jit-20240101/jitted-9-42.so)\n\n",
	// Go, C++ and Rust names: what is argument list and what is not
	"names": "app 100 [000] 2.000000:     5 cpu-clock:\n" +
		"\t4a1 net/http.(*Client).Do+0x4a (/srv/app)\n" +
		"\t4a2 main.main.func1 (/srv/app)\n" +
		"\t4a3 std::function<void (int, int)>::operator()(int, int) const (/srv/cpp)\n" +
		"\t4a4 (anonymous namespace)::worker(int) (/srv/cpp)\n" +
		"\t4a5 {lambda(int)#1}::operator() (/srv/cpp)\n" +
		"\t4a6 foo<Vec::<usize>>(Vec<usize>) (/srv/rs)\n" +
		"\t4a7 std::sys::unix::fs::File::open::hb90e1c1c787080f0 (/srv/rs)\n" +
		"\t4a8 _$LT$std..fs..ReadDir$u20$as$u20$core..iter..Iterator$GT$::next::hc14f1750ca79129b (/srv/rs)\n" +
		"\t4a9 RegExp:[&<>\"'] (/tmp/perf-100.map)\n" +
		"\t4aa semi;colon;name (/srv/app)\n" +
		"\t4ab  (/lib/x86_64-linux-gnu/libc-2.31.so)\n\n",
	// unknown symbols: module fallback, --addrs, [unknown] kept
	"unknown": "dd 77 [000] 3.000000:     2 cpu-clock:\n" +
		"\tffffffffc0123456 [unknown] ([nf_conntrack])\n" +
		"\t8c3453 tcp_sendmsg (/lib/modules/6.1.0/build/vmlinux)\n" +
		"\tffffffffb94000e0 __softirqentry_text_start+0xe0 (/usr/lib/debug/boot/vmlinux-6.1.0-18-amd64)\n" +
		"\t7d8 ipv4_conntrack_local+0x7f8f80b8 ([nf_conntrack_ipv4])\n" +
		"\t1234 ext4_write (/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko)\n" +
		"\t7f0000001000 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n" +
		"\t0 [unknown] ([unknown])\n\n",
	// two event types: only the first is folded unless a filter is given
	"mixed-events": "a 1 [000] 1.0:     10 cycles:u:\n\t1 f (/x)\n\n" +
		"a 1 [000] 1.1:     20 instructions:u:\n\t1 g (/x)\n\n" +
		"a 1 [000] 1.2:     30 cycles:u:\n\t1 f (/x)\n\n",
	// an event line that carries its one frame
	"single-line-stack": "false 64414 20110.539270:      34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])\n" +
		"false 64414 20110.539271:      34467 cycles:u:  ffffffff9aa3c8de page_fault ([kernel.kallsyms])\n" +
		"vote   913    72.176760:     257597 cycles:u:\n\t400 main (/bin/vote)\n\n",
	// headers, comments, CRLF, weird lines, process-name frames, offsets
	"garbage": "# ========\n# cmdline : /usr/bin/perf record -g ./x\n#\n" +
		"x 5 [000] 1.0: 1 cpu-clock:\r\n\t1 f+0x10 (/x)\r\n\t2 (x) (/x)\r\n\t3 g+0x (/x)\r\n\r\n" +
		"this is not an event line\n\tnor (a) stack line\n\n" +
		"y 6 [000] 1.0: 1 cpu-clock:\n\tgarbage\n\t4 h+0xzz (/y)\n\n" +
		"z 7 [000] 1.0: +5 cpu-clock:\n\t5 k (/z)\n\n" +
		"z 7 [000] 1.0: 0 cpu-clock:\n\t5 k (/z)\n\n",
	// invalid UTF-8 and Unicode white space
	"utf8": "w\xffx 8 [000] 1.0: 2 cpu-clock:\n\t1 f\xe2\x82 (/w)\n\t2 g\xed\xa0\x80h (/w)\n\t3 \u00a0i\u2003 (/w)\u3000\n\n",
	// blank lines between samples of other events and odd spacing
	"spacing": "a  1  [000]  1.0:  7  cpu-clock:\n\t  1   f   (/x)\n\n\n\n" +
		"a 1/2 [000] 1.0: cpu-clock:\n\t1 f (/x)\n   \n" +
		"b 3 1.0: cpu-clock:\n",
}

func TestFoldCornerCases(t *testing.T) {
	names := make([]string, 0, len(cornerCases))
	for n := range cornerCases {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		for tag, opt := range flagSets {
			p := filepath.Join("testdata", "corner", name+"."+tag+".folded")
			want, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("%v (record with PERFLAB_RECORD=1 go test -run TestRecordCorner)", err)
			}
			for _, threads := range []int{1, 2} {
				opt.Threads = threads
				got := foldBytes(t, []byte(cornerCases[name]), opt)
				if !bytes.Equal(got, want) {
					t.Errorf("%s %s threads=%d:\n%s", name, tag, threads, firstDiff(got, want))
				}
			}
			checked++
		}
	}
	if checked != len(cornerCases)*len(flagSets) {
		t.Fatalf("checked %d cases", checked)
	}
}

// TestRecordCorner checks that every corner case has the reference's
// output recorded for every flag set; with PERFLAB_RECORD=1 it (re)records
// them with inferno-collapse-perf first.
func TestRecordCorner(t *testing.T) {
	if os.Getenv("PERFLAB_RECORD") != "" {
		ref := requireInferno(t)
		if err := os.MkdirAll("testdata/corner", 0o755); err != nil {
			t.Fatal(err)
		}
		for name, in := range cornerCases {
			for tag, opt := range flagSets {
				out := runInferno(t, ref, []byte(in), opt)
				if err := os.WriteFile(filepath.Join("testdata", "corner", name+"."+tag+".folded"), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for name := range cornerCases {
		for tag := range flagSets {
			p := filepath.Join("testdata", "corner", name+"."+tag+".folded")
			if _, err := os.Stat(p); err != nil {
				t.Errorf("no recorded reference %s (record with PERFLAB_RECORD=1 go test -run TestRecordCorner)", p)
			}
		}
	}
}

func TestSummaryOfSkippedEvents(t *testing.T) {
	res, err := Fold(strings.NewReader(cornerCases["mixed-events"]), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Event != "cycles" || res.Stats.Skipped["instructions"] != 1 || res.Stats.Samples != 2 {
		t.Fatalf("stats = %+v", res.Stats)
	}
	if got := res.Profile.Total(); got != 40 {
		t.Fatalf("total = %d, want the two cycles periods 10+30", got)
	}
}

func TestWeirdLinesAreCounted(t *testing.T) {
	res, err := Fold(strings.NewReader(cornerCases["garbage"]), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.WeirdEvents == 0 || res.Stats.WeirdStacks == 0 || res.Stats.FirstWeird == "" {
		t.Fatalf("stats = %+v", res.Stats)
	}
}
