package disk_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/weirdata/weir/stream/state"
)

// TestDifferential runs random operations of every state kind, in
// namespaces and with TTL, on a heap and a disk backend and checks that
// every read returns the same on both (the heap backend is the oracle).
func TestDifferential(t *testing.T) {
	for seed := range uint64(4) {
		e := newEnv(t, 8, 0)
		all := state.KeyGroupRange{Start: 0, End: 7}
		heap, dsk := e.side(false, all), e.side(true, all)
		ks := keys(40)
		r1, r2 := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
		pick := rand.New(rand.NewPCG(seed, 2))
		for i := range 6000 {
			op, key, ns := pick.IntN(ops), ks[pick.IntN(len(ks))], pick.IntN(4)
			if pick.IntN(50) == 0 {
				e.now += int64(pick.IntN(8))
			}
			want, got := heap.op(op, r1, key, ns), dsk.op(op, r2, key, ns)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("seed %d step %d op %d key %q ns %d: disk %v, heap %v", seed, i, op, key, ns, got, want)
			}
		}
		for _, s := range []*side{heap, dsk} {
			if err := s.b.Err(); err != nil {
				t.Fatal(err)
			}
		}
		same(t, "end", ks, heap.read, dsk.read)

		// The disk backend's full snapshot restores on the heap and on
		// disk alike, and the heap's on disk.
		var hs, ds bytes.Buffer
		if err := heap.b.Snapshot(&hs, all); err != nil {
			t.Fatal(err)
		}
		if err := dsk.b.Snapshot(&ds, all); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			onDisk bool
			snap   []byte
		}{{"disk to heap", false, ds.Bytes()}, {"disk to disk", true, ds.Bytes()}, {"heap to disk", true, hs.Bytes()}} {
			b := e.backend(c.onDisk, all)
			if err := b.Restore(bytes.NewReader(c.snap)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := e.register(b)
			same(t, c.name, ks, heap.read, got.read)
		}
	}
}
