package source

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzTextResume writes data to a file, reads it with reads of size read,
// stops after k lines, resumes at the reported position and expects the
// file's lines (linesOf, the oracle) across the two reads.
func FuzzTextResume(f *testing.F) {
	f.Add([]byte("a\nb\r\n\nccc"), uint8(3), uint8(2))
	f.Add([]byte("\n\n\n"), uint8(1), uint8(1))
	f.Add([]byte("no newline"), uint8(4), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, read, k uint8) {
		path := filepath.Join(t.TempDir(), "f.txt")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want := linesOf(string(data))
		src, err := Files(Text(), path, BatchSize(1), ReadSize(int(read%16)+1))
		if err != nil {
			t.Fatal(err)
		}
		stop := int(k) % (len(want) + 1)
		en, rs := newReaders(t, src, 1, nil)
		res := result[string]{bySplit: map[string][]string{}}
		readRecords(t, rs[0], &res, stop)
		pos := roundTrip(t, rs[0].Positions())
		st := en.Snapshot()
		_, rs2 := newReaders(t, src, 1, &st)
		rs2[0].AddSplits(pos)
		drainInto(t, rs2, &res)
		if !slices.Equal(res.all, want) {
			t.Fatalf("stop after %d at %v: got %q, want %q", stop, pos, res.all, want)
		}
	})
}
