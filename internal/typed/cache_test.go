package typed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

type cacheFlat struct {
	A int64
	B float64
}

type cacheDeep struct {
	X []float64
	S string
}

func (d cacheDeep) equal(e cacheDeep) bool { return d.S == e.S && slices.Equal(d.X, e.X) }

// cacheEnv returns a memory manager of budget (0: none) and an env over it
// and fs (a disk directory when nil).
func cacheEnv(t *testing.T, budget int64, fs spill.FS) (*memory.Manager, resource.Env) {
	t.Helper()
	mgr, err := memory.NewManager(memory.Options{SegmentSize: 4096, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close() })
	if fs == nil {
		disk, err := spill.NewDiskFS(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { disk.Close() })
		fs = disk
	}
	return mgr, resource.Env{Memory: mgr, FS: fs}
}

func replayAll[T any](t *testing.T, c *Cache[T], batch int) []T {
	t.Helper()
	var got []T
	if err := c.Replay(context.Background(), batch, func(b []T) error {
		if len(b) > batch {
			t.Fatalf("batch of %d records, want at most %d", len(b), batch)
		}
		got = append(got, b...)
		clear(b) // receivers may change the batch: the cache must not care
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCacheKeepsValues: a cache that fits keeps Go values, replays them in
// order as often as asked, owns the memory they reference (changing the
// records added changes nothing) and holds a reservation for them that Reset
// and Release return; one that does not fit moves to its spool and replays
// the same records.
func TestCacheKeepsValues(t *testing.T) {
	const n = 10000
	for _, tc := range []struct {
		name   string
		budget int64
		typed  bool
	}{
		{"fits", 0, true},
		{"spills", 64 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs, orig []cacheDeep
			for i := range n {
				x := []float64{float64(i), float64(-i), 0.5}
				recs = append(recs, cacheDeep{X: x, S: fmt.Sprint("r", i)})
				orig = append(orig, cacheDeep{X: slices.Clone(x), S: fmt.Sprint("r", i)})
			}
			mgr, env := cacheEnv(t, tc.budget, nil)
			c := NewCache(env, "test cache", mustCodec[cacheDeep](t))
			for round := range 2 {
				for i := 0; i < n; i += 333 {
					if err := c.Add(recs[i:min(i+333, n)]); err != nil {
						t.Fatal(err)
					}
				}
				if c.Typed() != tc.typed || c.Len() != n {
					t.Fatalf("round %d: typed %v with %d records, want %v with %d", round, c.Typed(), c.Len(), tc.typed, n)
				}
				if tc.typed && (c.Bytes() < n*3*8 || mgr.Used() < c.Bytes()) {
					t.Fatalf("round %d: %d bytes reserved (manager: %d) for %d records of 3 floats", round, c.Bytes(), mgr.Used(), n)
				}
				if !tc.typed && c.Bytes() != 0 {
					t.Fatalf("round %d: moved to the spool but still reserves %d bytes for values", round, c.Bytes())
				}
				if spilled := c.SpilledBytes() > 0; spilled == tc.typed {
					t.Fatalf("round %d: typed %v, %d bytes spilled", round, c.Typed(), c.SpilledBytes())
				}
				for i := range recs { // the cache owns its copies
					recs[i].X[0] = -1
				}
				for range 2 {
					got := replayAll(t, c, 64)
					if len(got) != n {
						t.Fatalf("round %d: replayed %d records, want %d", round, len(got), n)
					}
					for i := range got {
						if !got[i].equal(orig[i]) {
							t.Fatalf("round %d: record %d is %v, want %v", round, i, got[i], orig[i])
						}
					}
				}
				for i := range recs {
					recs[i].X[0] = orig[i].X[0]
				}
				c.Reset()
				if c.Len() != 0 || c.Bytes() != 0 || !c.Typed() || mgr.Used() != 0 {
					t.Fatalf("reset left %d records, %d bytes (manager: %d), typed %v", c.Len(), c.Bytes(), mgr.Used(), c.Typed())
				}
			}
			if err := c.Add(recs[:10]); err != nil {
				t.Fatal(err)
			}
			c.Release()
			if mgr.Used() != 0 {
				t.Fatalf("release left %d bytes reserved", mgr.Used())
			}
		})
	}
}

// TestCacheFlat: flat records are kept by value, and a replay's batches are
// copies: a receiver that changes them does not change the next replay.
func TestCacheFlat(t *testing.T) {
	var recs []cacheFlat
	for i := range 9000 {
		recs = append(recs, cacheFlat{A: int64(i), B: float64(i) / 2})
	}
	_, env := cacheEnv(t, 0, nil)
	c := NewCache(env, "test cache", mustCodec[cacheFlat](t))
	defer c.Release()
	if err := c.Add(recs); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := replayAll(t, c, 100); !slices.Equal(got, recs) || !c.Typed() {
			t.Fatalf("replayed %d records (typed %v), not the %d added", len(got), c.Typed(), len(recs))
		}
	}
}

// TestCacheSpillFault: when the cache moves to its spool and the spool cannot
// create its spill file, Add fails with the file system's error, and Release
// leaves nothing reserved.
func TestCacheSpillFault(t *testing.T) {
	disk, err := spill.NewDiskFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	fs := spill.NewFaultFS(disk)
	fs.FailNth(spill.OpCreate, 1)
	mgr, env := cacheEnv(t, 32<<10, fs)
	c := NewCache(env, "test cache", mustCodec[cacheFlat](t))
	recs := make([]cacheFlat, 20000)
	err = nil
	for i := 0; i < len(recs) && err == nil; i += 500 {
		err = c.Add(recs[i : i+500])
	}
	if !errors.Is(err, spill.ErrInjected) {
		t.Fatalf("Add: %v, want the injected fault", err)
	}
	c.Release()
	if mgr.Used() != 0 {
		t.Fatalf("release left %d bytes reserved", mgr.Used())
	}
}

func mustCodec[T any](t *testing.T) *memory.Codec[T] {
	t.Helper()
	c, err := memory.NewCodec[T]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCacheScan: a scan hands out the records a replay does, in order and in
// batches of at most the batch size, from the cache's values while it keeps
// them and decoded from its spool once it moved there; scanning values
// allocates nothing.
func TestCacheScan(t *testing.T) {
	const n = 10000
	for _, tc := range []struct {
		name   string
		budget int64
		typed  bool
	}{
		{"fits", 0, true},
		{"spills", 64 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []cacheDeep
			for i := range n {
				recs = append(recs, cacheDeep{X: []float64{float64(i), float64(-i)}, S: fmt.Sprint("r", i)})
			}
			_, env := cacheEnv(t, tc.budget, nil)
			c := NewCache(env, "test cache", mustCodec[cacheDeep](t))
			defer c.Release()
			for i := 0; i < n; i += 777 {
				if err := c.Add(recs[i:min(i+777, n)]); err != nil {
					t.Fatal(err)
				}
			}
			if c.Typed() != tc.typed {
				t.Fatalf("typed %v, want %v", c.Typed(), tc.typed)
			}
			for _, batch := range []int{1, 100, 5000} {
				var got []cacheDeep
				if err := c.Scan(context.Background(), batch, func(b []cacheDeep) error {
					if len(b) == 0 || len(b) > batch {
						t.Fatalf("batch of %d records, want 1 to %d", len(b), batch)
					}
					got = append(got, b...)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(got) != n {
					t.Fatalf("batch %d: scanned %d records, want %d", batch, len(got), n)
				}
				for i := range got {
					if !got[i].equal(recs[i]) {
						t.Fatalf("batch %d: record %d is %v, want %v", batch, i, got[i], recs[i])
					}
				}
			}
			stop := errors.New("stop")
			if err := c.Scan(context.Background(), 10, func([]cacheDeep) error { return stop }); !errors.Is(err, stop) {
				t.Fatalf("Scan: %v, want fn's error", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := c.Scan(ctx, 10, func([]cacheDeep) error { return nil }); !errors.Is(err, context.Canceled) {
				t.Fatalf("Scan of a cancelled context: %v", err)
			}
			if !tc.typed {
				return
			}
			var sum float64
			if allocs := testing.AllocsPerRun(10, func() {
				_ = c.Scan(context.Background(), 256, func(b []cacheDeep) error {
					for i := range b {
						sum += b[i].X[0]
					}
					return nil
				})
			}); allocs != 0 {
				t.Fatalf("a scan of %d values allocates %.0f times", n, allocs)
			}
			if want := float64(n*(n-1)/2) * 11; sum != want { // AllocsPerRun runs once more to warm up
				t.Fatalf("scans summed %v, want %v", sum, want)
			}
		})
	}
}
