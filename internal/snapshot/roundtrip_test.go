package snapshot

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// TestJSONRoundTrip writes whole snapshots of every fixture tree and reads
// them back: any field that does not survive JSON (a map keyed by a
// non-string, an unexported field, a NaN) would show here.
func TestJSONRoundTrip(t *testing.T) {
	for _, name := range []string{"kvm", "metal", "kunpeng"} {
		t.Run(name, func(t *testing.T) {
			s, err := Collect(tree(t, name, nil), Options{PID: 4243, Now: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			if s.Process == nil || len(s.Sysctl) < 100 || s.CPU.Threads == 0 {
				t.Fatalf("snapshot of %s is not whole: process %v, %d sysctls, %d threads", name, s.Process, len(s.Sysctl), s.CPU.Threads)
			}
			var buf bytes.Buffer
			if err := s.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := Unmarshal(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, back) {
				diffFields(t, reflect.ValueOf(*s), reflect.ValueOf(*back), "snapshot")
			}
			var again bytes.Buffer
			if err := back.Encode(&again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Error("re-encoding the decoded snapshot gives different JSON")
			}
		})
	}
}

// diffFields reports which top-level fields differ.
func diffFields(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	for i := 0; i < a.NumField(); i++ {
		if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			t.Errorf("%s.%s differs after the round trip:\n got  %#v\n want %#v", path, a.Type().Field(i).Name, b.Field(i).Interface(), a.Field(i).Interface())
		}
	}
}

// Other perflab documents carry a "schema" too; a run export must not
// decode as a snapshot with every fact empty (audit would then pass it).
func TestUnmarshalRejectsOtherDocuments(t *testing.T) {
	for _, doc := range []string{
		`{"kind": "perflab-runs", "schema": 1, "runs": []}`,
		`{"schema": 1, "kind": "anything"}`,
		`{"kind": "perflab-runs"}`,
	} {
		if s, err := Unmarshal([]byte(doc)); err == nil {
			t.Errorf("%s decoded as a snapshot: %+v", doc, s.Host)
		}
	}
	if _, err := Unmarshal([]byte(`{"schema": 1, "id": "x"}`)); err != nil {
		t.Errorf("minimal snapshot: %v", err)
	}
}
