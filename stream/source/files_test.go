package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// moveIn writes a file beside dir and renames it into dir, so that it
// appears complete.
func moveIn(t testing.TB, dir, name, data string) {
	t.Helper()
	if err := tryMoveIn(dir, name, data); err != nil {
		t.Fatal(err)
	}
}

func tryMoveIn(dir, name, data string) error {
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// TestMonitorDirectory follows Flink's continuous FileSource: files present
// at start and files created while the source runs are each read once, in
// order of discovery; the files seen are the enumerator's state, and a
// source restored from it reads only files that appear afterwards.
func TestMonitorDirectory(t *testing.T) {
	dir := t.TempDir()
	moveIn(t, dir, "b.txt", "b1\nb2\n")
	moveIn(t, dir, "a.txt", "a1\n")
	src, err := MonitorDirectory(Text(), dir, 5*time.Millisecond, PollInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if src.Boundedness() != Unbounded {
		t.Fatal("a monitored directory is bounded")
	}
	en, rs := newReaders(t, src, 2, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(20 * time.Millisecond)
		if err := tryMoveIn(dir, "z.txt", "z1\n"); err != nil {
			t.Error(err)
		}
		time.Sleep(20 * time.Millisecond)
		if err := tryMoveIn(dir, "c.txt", "c1\nc2\nc3\n"); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644); err != nil {
			t.Error(err)
		}
	})
	// Each reader in its own goroutine, as subtasks run; they share the
	// enumerator.
	var got []string
	var mu sync.Mutex
	var rwg sync.WaitGroup
	for _, r := range rs {
		rwg.Go(func() {
			for {
				b, err := r.Next(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				got = append(got, b.Records...)
				n := len(got)
				mu.Unlock()
				if n == 7 {
					cancel()
				}
			}
		})
	}
	rwg.Wait()
	wg.Wait()
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Fatalf("timed out with %v", got)
	}
	slices.Sort(got)
	if want := []string{"a1", "b1", "b2", "c1", "c2", "c3", "z1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want each line once: %v", got, want)
	}
	st := en.Snapshot()
	want := []string{filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "z.txt"), filepath.Join(dir, "c.txt")}
	if !slices.Equal(st.Processed, want) || len(st.Pending) != 0 {
		t.Fatalf("snapshot %+v, want processed %v", st, want)
	}

	// Restored: nothing is read again, a new file is.
	_, rs2 := newReaders(t, src, 1, &st)
	ctx2, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel2()
	if recs, err := nextRecords(ctx2, rs2[0], 1); !errors.Is(err, context.DeadlineExceeded) || len(recs) != 0 {
		t.Fatalf("restored reader read %v, %v", recs, err)
	}
	moveIn(t, dir, "d.txt", "d1\n")
	ctx3, cancel3 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel3()
	if recs, err := nextRecords(ctx3, rs2[0], 1); err != nil || !slices.Equal(recs, []string{"d1"}) {
		t.Fatalf("restored reader read %v, %v; want [d1]", recs, err)
	}
}

// TestMonitorDiscoveryOrder reads with one reader and a fake clock: files of
// one listing come by name, later listings after them.
func TestMonitorDiscoveryOrder(t *testing.T) {
	dir := t.TempDir()
	moveIn(t, dir, "m.txt", "m\n")
	moveIn(t, dir, "k.txt", "k\n")
	clk := newFakeClock()
	src, err := MonitorDirectory(Text(), dir, time.Second, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	got, err := nextRecords(t.Context(), rs[0], 2)
	if err != nil || !slices.Equal(got, []string{"k", "m"}) {
		t.Fatalf("first listing: %v, %v", got, err)
	}
	before := clk.Now()
	moveIn(t, dir, "a.txt", "a\n")
	got, err = nextRecords(t.Context(), rs[0], 1)
	if err != nil || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("second listing: %v, %v", got, err)
	}
	if waited := clk.Now().Sub(before); waited > time.Second {
		t.Fatalf("waited %v for the next listing, want at most the interval", waited)
	}
}

func TestMonitorMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if _, err := MonitorDirectory(Text(), dir, time.Second); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := MonitorDirectory(Text(), dir, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := rs[0].Next(t.Context()); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, dir)
	}
}

func TestFilesMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.txt")
	_, err := Files(Text(), missing)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) || !strings.HasPrefix(err.Error(), "stream/source: ") {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, missing)
	}
}
