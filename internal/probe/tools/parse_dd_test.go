package tools

import (
	"strings"
	"testing"
)

// Real stderr of coreutils 9.1's dd (Debian 12), LC_ALL=C.
func TestParseDD91(t *testing.T) {
	for _, tc := range []struct {
		file           string
		bytes          int64
		sec            float64
		fullIn, partIn int64
	}{
		{"coreutils-9.1-write-fdatasync.txt", 67108864, 0.108155, 64, 0},
		{"coreutils-9.1-write-direct.txt", 67108864, 0.0771223, 64, 0},
		{"coreutils-9.1-read.txt", 67108864, 0.0798228, 64, 0},
		{"coreutils-9.1-512-bytes.txt", 512, 5.4801e-05, 1, 0},
		{"coreutils-9.1-1-byte.txt", 1, 0.000142812, 1, 0},
		{"coreutils-9.1-partial-record.txt", 1572864, 0.00100186, 1, 1},
		// coreutils 8.4–8.23 (CentOS 6/7): "(67 MB)" without the binary
		// size; edited from the 9.1 outputs to that documented form.
		{"coreutils-8.22-write-fdatasync.txt", 67108864, 0.108155, 64, 0},
		{"coreutils-8.22-partial-record.txt", 1572864, 0.00100186, 1, 1},
	} {
		r, err := ParseDD(string(fixture(t, "dd", tc.file)))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if r.Bytes != tc.bytes || r.FullIn != tc.fullIn || r.PartialIn != tc.partIn || r.FullOut != tc.fullIn {
			t.Errorf("%s: %+v", tc.file, r)
		}
		wantNear(t, tc.file+" seconds", r.Seconds, tc.sec)
	}
	r, _ := ParseDD(string(fixture(t, "dd", "coreutils-9.1-write-fdatasync.txt")))
	// dd printed "620 MB/s"; the exact rate is 67108864 B / 0.108155 s.
	wantNear(t, "MB/s", r.MBPerSec(), 67108864/0.108155/1e6)
}

func TestParseDDErrors(t *testing.T) {
	_, err := ParseDD(string(fixture(t, "dd", "coreutils-9.1-open-error.txt")))
	if err == nil || !strings.Contains(err.Error(), "failed to open") {
		t.Errorf("open error: %v", err)
	}
	for _, bad := range []string{
		"",
		"64+0 records in\n64+0 records out\n",
		"67108864 bytes (67 MB, 64 MiB) copied, 0.1 s, 620 MB/s\n",
		"1+0 records in\n1+0 records out\n1 byte copied, 0 s, inf B/s\n",
	} {
		if _, err := ParseDD(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// status=progress: the \r-overwritten progress line is not the result.
	r, err := ParseDD("33554432 bytes (34 MB, 32 MiB) copied, 1 s, 34 MB/s\r64+0 records in\n64+0 records out\n67108864 bytes (67 MB, 64 MiB) copied, 2 s, 34 MB/s\n")
	if err != nil || r.Bytes != 67108864 || r.Seconds != 2 {
		t.Errorf("progress: %+v %v", r, err)
	}
}

func FuzzParseDD(f *testing.F) {
	for _, n := range []string{"coreutils-9.1-write-fdatasync.txt", "coreutils-9.1-1-byte.txt", "coreutils-8.22-partial-record.txt", "coreutils-9.1-open-error.txt"} {
		f.Add(string(fixture(f, "dd", n)))
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseDD(s)
		if err == nil && (r.Seconds <= 0 || r.Bytes < 0 || r.MBPerSec() < 0) {
			t.Errorf("accepted %+v", r)
		}
	})
}
