package disk_test

import (
	"bytes"
	"testing"

	"github.com/weirdata/weir/stream/state"
)

// FuzzRestore feeds arbitrary bytes, seeded with full and incremental
// snapshots, to a disk backend's Restore: it fails with ErrCorruptSnapshot
// (or another error for what is well formed but refused) and never panics.
func FuzzRestore(f *testing.F) {
	e := newEnv(f, 8, 0)
	all := state.KeyGroupRange{Start: 0, End: 7}
	d := openDir(f, 1)
	e.shared = d
	s := e.side(true, all)
	for i, k := range keys(20) {
		s.b.SetCurrentKey(k)
		s.setNS(i % 2)
		s.v.Update(int64(i))
		s.l.Add(k)
		s.m.Put(k, int64(i))
	}
	var full, inc bytes.Buffer
	if err := s.b.Snapshot(&full, all); err != nil {
		f.Fatal(err)
	}
	if _, err := s.b.SnapshotIncremental(&inc); err != nil {
		f.Fatal(err)
	}
	f.Add(full.Bytes())
	f.Add(inc.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		e := newEnv(t, 8, 0)
		e.shared = d
		b := e.backend(true, all)
		if err := b.Restore(bytes.NewReader(data)); err == nil {
			e.register(b)
		}
		if names, err := state.SharedFilesOf(data); err == nil && !state.IsIncremental(data) {
			t.Fatalf("SharedFilesOf read %v from what IsIncremental refuses", names)
		}
	})
}
