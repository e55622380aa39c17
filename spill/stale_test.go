package spill

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// A spill directory whose process is gone (its .owner not locked) is
// removed when the next DiskFS is made; a live DiskFS's directory stays, and
// so does a weir-spill-* directory without .owner.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	live, err := NewDiskFS(tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	dead := filepath.Join(tmp, "weir-spill-dead")
	foreign := filepath.Join(tmp, "weir-spill-foreign")
	for _, f := range []string{ownerPath(dead), filepath.Join(dead, "weir-state-1", "db", "000001.sst"), filepath.Join(foreign, "x")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("pid 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	next, err := NewDiskFS(tmp)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range ents {
		left = append(left, filepath.Join(tmp, e.Name()))
	}
	want := []string{live.Dir(), ownerPath(live.Dir()), next.Dir(), ownerPath(next.Dir()), foreign}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveStale(tmp); err != nil || len(removed) != 0 {
		t.Errorf("a closed DiskFS leaves nothing to remove: %v %v", removed, err)
	}
	if _, err := os.Stat(live.Dir()); err != nil {
		t.Errorf("the live directory: %v", err)
	}
}

// TestRemoveStaleConcurrent sweeps the same stale directories from several
// goroutines at once, as processes starting together do: each opens an
// owner file, and the one that locks it second finds it removed. No sweep
// may fail, and every directory goes.
func TestRemoveStaleConcurrent(t *testing.T) {
	for round := range 20 {
		tmp := t.TempDir()
		for i := range 30 {
			dead := filepath.Join(tmp, fmt.Sprintf("weir-spill-dead%d", i))
			if err := os.MkdirAll(filepath.Join(dead, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ownerPath(dead), []byte("pid 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				if _, err := RemoveStale(tmp); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Fatalf("round %d: %d entries left", round, len(ents))
		}
	}
}
