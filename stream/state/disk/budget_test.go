package disk_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/state/disk"
)

// TestTinyBudget gives a store a budget of 1 MiB: it runs with a small
// cache and memtables of at most 128 KiB, flushes to disk many times, and reads back the 4 MB
// written as the heap backend does.
func TestTinyBudget(t *testing.T) {
	mem := memory.MustNewManager(memory.Options{Budget: 1 << 20})
	st, err := disk.Open(disk.Options{Name: "op", Dir: t.TempDir(), Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	if st.MemTableSize() > 128<<10 || mem.Used() > 512<<10 {
		t.Fatalf("memtable %d bytes, %d bytes reserved", st.MemTableSize(), mem.Used())
	}
	all := state.KeyGroupRange{Start: 0, End: 127}
	b, err := state.NewBackend[string](state.Options{Name: "op", MaxParallelism: 128, Groups: all, Memory: mem, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, 128, 0)
	heap := e.side(false, all)
	dsk := e.register(b)
	n := 20000
	if testing.Short() { // the race run: 2 MB, still many flushes
		n = 8000
	}
	ks := keys(n)
	for i, k := range ks {
		v := fmt.Sprintf("%d-%s", i, strings.Repeat("x", 200))
		for _, s := range []*side{heap, dsk} {
			s.b.SetCurrentKey(k)
			s.vv.Update(v)
			s.setNS(i % 4)
			s.l.Add(v[:20])
			s.m.Put(v[:8], int64(i))
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	if st.Flushes() < 10 {
		t.Fatalf("%d flushes of small memtables for %d keys", st.Flushes(), n)
	}
	var sample []string
	for i := 0; i < len(ks); i += 10 {
		sample = append(sample, ks[i])
	}
	same(t, "tiny budget", sample, heap.read, dsk.read)
	var snap bytes.Buffer
	if err := b.Snapshot(&snap, all); err != nil {
		t.Fatal(err)
	}
	dir := st.Dir()
	if err := b.Dispose(); err != nil {
		t.Fatal(err)
	}
	if mem.Used() != 0 {
		t.Fatalf("%d bytes reserved after Dispose", mem.Used())
	}
	if _, err := disk.Open(disk.Options{Name: "x", Dir: t.TempDir(), Memory: memory.MustNewManager(memory.Options{Budget: 100 << 10})}); err == nil {
		t.Fatal("a store opened in a budget of 100 KiB")
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := statDir(dir); err == nil {
		t.Fatalf("the store's directory %s is left after Dispose", dir)
	}
	h := e.backend(false, all)
	if err := h.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	same(t, "restored on the heap", sample, heap.read, e.register(h).read)
}

func statDir(dir string) (any, error) { return os.Stat(dir) }
