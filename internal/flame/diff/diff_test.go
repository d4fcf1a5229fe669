package diff

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/termfmt"
)

func read(t testing.TB, s string) *folded.Profile {
	t.Helper()
	p, err := folded.Read(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJoinIsDifffolded(t *testing.T) {
	before := read(t, "a;b 10\na;c 30\n")
	after := read(t, "a;b 40\na;d 40\n")
	var out bytes.Buffer
	Join(before, after, Options{}).WriteTo(&out)
	if want := "a;b 10 40\na;c 30 0\na;d 0 40\n"; out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	Join(before, after, Options{Normalize: true}).WriteTo(&out) // before total 40 scaled to 80
	if want := "a;b 20 40\na;c 60 0\na;d 0 40\n"; out.String() != want {
		t.Fatalf("normalized got\n%s\nwant\n%s", out.String(), want)
	}
	again := read(t, out.String())
	if !again.Diff || again.TotalBefore() != 80 || again.Total() != 80 {
		t.Fatalf("differential output does not read back: %+v", again)
	}
}

// The story of field report 003: the same service on JDK 8u74 and 8u202,
// 13x slower on the latter; comparing two flame graphs by eye eventually
// showed ClientHandshaker.processMessage at 1.15% vs 23.98%. The table
// must show it at once, with those numbers, even though the two profiles
// have different lengths.
func TestTableFindsSeed003Regression(t *testing.T) {
	const pre = "java;Thread.run;HttpClient.send;SSLSocketImpl.startHandshake;ClientHandshaker.processMessage;"
	before := read(t, pre+"ClientHandshaker.serverFinished 60\n"+
		pre+"ClientHandshaker.serverHello 55\n"+
		"java;Thread.run;HttpClient.send;SocketOutputStream.write 3000\n"+
		"java;Thread.run;App.handle;JSON.parse 6885\n")
	after := read(t, pre+"ClientHandshaker.serverHelloDone 3000\n"+
		pre+"ClientHandshaker.serverKeyExchange 1700\n"+
		pre+"ClientHandshaker.serverHello 96\n"+
		"java;Thread.run;HttpClient.send;SocketOutputStream.write 4000\n"+
		"java;Thread.run;App.handle;JSON.parse 11204\n")
	rows := Table(Join(before, after, Options{}), 5)
	var hit *Row
	for i := range rows[:2] {
		if rows[i].Function == "ClientHandshaker.processMessage" {
			hit = &rows[i]
		}
	}
	if hit == nil {
		t.Fatalf("processMessage not in the top two rows: %+v", rows)
	}
	if math.Abs(hit.InclBefore-1.15) > 1e-9 || math.Abs(hit.InclAfter-23.98) > 1e-9 {
		t.Fatalf("processMessage inclusive %.2f%% → %.2f%%, want 1.15%% → 23.98%%", hit.InclBefore, hit.InclAfter)
	}
	if hit.SelfBefore != 0 || hit.SelfAfter != 0 {
		t.Fatalf("processMessage has no self samples: %+v", hit)
	}
	// The leaf that grew most is ranked by its self share.
	var hd *Row
	for i := range rows {
		if rows[i].Function == "ClientHandshaker.serverHelloDone" {
			hd = &rows[i]
		}
	}
	if hd == nil || !hd.Appeared || math.Abs(hd.SelfAfter-15) > 1e-9 {
		t.Fatalf("serverHelloDone should appear with 15%% self: %+v", hd)
	}
	var out bytes.Buffer
	if err := WriteTable(&out, rows, termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ClientHandshaker.processMessage") || !strings.Contains(out.String(), "1.15% →  23.98% (+22.83 pp)") {
		t.Fatalf("table:\n%s", out.String())
	}
}

func TestTableCountsRecursionOnce(t *testing.T) {
	d := Join(read(t, "m;f;f;f 10\nm;g 10\n"), read(t, "m;f;f;f 10\nm;g 10\n"), Options{})
	for _, r := range Table(d, 0) {
		if r.Function == "f" && (r.InclAfter != 50 || r.SelfAfter != 50 || r.InclDelta() != 0) {
			t.Fatalf("recursive f: %+v", r)
		}
	}
}

func BenchmarkJoinTable(b *testing.B) {
	var sb1, sb2 strings.Builder
	for i := 0; i < 20000; i++ {
		sb1.WriteString("p;main;a" + itoa(i%97) + ";b" + itoa(i) + " 3\n")
		sb2.WriteString("p;main;a" + itoa(i%89) + ";b" + itoa(i) + " 5\n")
	}
	before, after := read(b, sb1.String()), read(b, sb2.String())
	for b.Loop() {
		Table(Join(before, after, Options{Normalize: true}), 20)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}
