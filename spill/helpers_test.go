package spill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

var codecs = []Codec{None, S2, Zstd}

// writeFile writes recs to a new file of s and returns its Handle.
func writeFile(t testing.TB, s *Space, recs [][]byte) Handle {
	t.Helper()
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i, r := range recs {
		if err := w.Append(r); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	h, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// readFile reads a whole file back, copying every record.
func readFile(s *Space, h Handle) ([][]byte, error) {
	r, err := s.Open(h)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, r.Close()
		}
		if err != nil {
			return out, err
		}
		out = append(out, slices.Clone(rec))
	}
}

// checkRecords compares got with the oracle want, record by record.
func checkRecords(t testing.TB, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d: got %d bytes %.20q, want %d bytes %.20q", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

// sumLen is the oracle for Handle.Bytes.
func sumLen(recs [][]byte) int64 {
	var n int64
	for _, r := range recs {
		n += int64(len(r))
	}
	return n
}

// textRecord returns a random printable line of n bytes.
func textRecord(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(' ' + rng.IntN(95))
	}
	return b
}

// compressibleRecord returns n bytes drawn from a small alphabet.
func compressibleRecord(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "weir-spill"[rng.IntN(4)]
	}
	return b
}

// zipfRecords returns n records whose keys follow a Zipf distribution, as
// key/value records of AppendKV's form, and the keys.
func zipfRecords(seed uint64, n int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	z := rand.NewZipf(rng, 1.2, 1, 1<<20)
	recs := make([][]byte, n)
	for i := range recs {
		k := z.Uint64()
		recs[i] = fmt.Appendf(nil, "key-%d|value-%d-%s", k, i, compressibleRecord(rng, int(k%64)))
	}
	return recs
}

// newDiskFS returns a DiskFS in a test temp directory, closed at the end.
func newDiskFS(t testing.TB) *DiskFS {
	t.Helper()
	d, err := NewDiskFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// assertEmptyDir fails unless the DiskFS directory holds no file.
func assertEmptyDir(t testing.TB, d *DiskFS) {
	t.Helper()
	ents, err := os.ReadDir(d.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		t.Fatalf("spill directory not empty: %v", names)
	}
}

// closeSpace closes s and asserts that no file of it is left in fs.
func closeSpace(t testing.TB, s *Space, fs *MemFS) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := fs.Files(); len(left) != 0 {
		t.Fatalf("files left after Space.Close: %v", left)
	}
}

// wantErr fails unless err wraps target and mentions every string in parts.
func wantErr(t testing.TB, err, target error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", target)
	}
	if !errors.Is(err, target) {
		t.Fatalf("error %q does not wrap %q", err, target)
	}
	for _, p := range parts {
		if !bytes.Contains([]byte(err.Error()), []byte(p)) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}
