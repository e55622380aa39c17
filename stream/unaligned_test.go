package stream

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/watermark"
)

// slowSums is keyedSums with a slow last task: the map after the keyed
// Sum takes a permit per record (or passes once stop is closed), so the
// records queue up between the source and the Sum (backpressure). done
// counts the records it passed.
func slowSums(env *Env, src *gated[int], n int, dir string, permits, stop chan struct{}, done *atomic.Int64, emitted *atomic.Int64) {
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
	pairs := Map(ds, func(v int) kv { emitted.Add(1); return kv{keyOf(v, n), v} })
	sums := Sum(KeyBy(pairs, func(p kv) int { return p.K }), func(p kv) int { return p.V }, func(p *kv, v int) { p.V = v }).UID("sums")
	lines := Map(sums, func(p kv) string {
		select {
		case <-permits:
		case <-stop:
		}
		done.Add(1)
		return fmt.Sprintf("%d:%d", p.K, p.V)
	})
	SinkTo(lines, sink.Text(dir))
}

// TestUnalignedCheckpointUnderBackpressure follows Flink's
// UnalignedCheckpointITCase idea: a slow sink task backpressures the job.
// The aligned checkpoint completes only once the slow task processed every
// record its source emitted before the barrier; the unaligned one
// completes while those records are still queued, and persists them as
// channel state. Asserted on the records the slow task processed when the
// checkpoint completed, not on time.
func TestUnalignedCheckpointUnderBackpressure(t *testing.T) {
	const n = 40
	for _, unaligned := range []bool{false, true} {
		t.Run(fmt.Sprint("unaligned=", unaligned), func(t *testing.T) {
			dir := t.TempDir()
			src := newGated(ints(n))
			permits, stop := make(chan struct{}, n), make(chan struct{})
			var done, emitted atomic.Int64
			env := New(Options{Parallelism: 1, Clock: manual(), BatchSize: 2, BufferTimeout: -1, Restart: NoRestart()})
			cfg := env.EnableCheckpointing(time.Hour)
			cfg.Unaligned = unaligned
			slowSums(env, src, n, dir, permits, stop, &done, &emitted)
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { close(stop); j.Cancel(); j.Wait() }()
			var before atomic.Int64 // records emitted before the barrier
			src.onSnapshot = func() { before.Store(emitted.Load()) }
			src.release(n / 2)
			permits <- struct{}{}
			waitUntil(t, "a record through the slow task", func() bool { return done.Load() == 1 })
			res := make(chan error, 1)
			go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
			var at int64
		loop:
			for {
				select {
				case err := <-res:
					if err != nil {
						t.Fatal(err)
					}
					at = done.Load()
					break loop
				case <-time.After(20 * time.Millisecond):
				}
				if done.Load() < n/2+1 {
					permits <- struct{}{}
				}
			}
			h := j.Checkpoints()
			if len(h.Completed) != 1 {
				t.Fatalf("checkpoints %+v", h.Completed)
			}
			inflight, b := h.Completed[0].InFlight, before.Load()
			if !unaligned && (at < b || inflight != 0) {
				t.Fatalf("aligned checkpoint completed after %d records (in flight %d bytes), want all %d before the barrier and none in flight", at, inflight, b)
			}
			if unaligned && (at >= b || inflight == 0) {
				t.Fatalf("unaligned checkpoint completed after %d records with %d bytes in flight, want fewer than the %d before the barrier and some in flight", at, inflight, b)
			}
		})
	}
}

// TestUnalignedRestoreExact: an unaligned checkpoint taken under
// backpressure holds records in flight between the source and the keyed
// Sum; a job restored from it (at the same parallelism and rescaled, the
// keyed records in flight going to their new key group owners) commits,
// with what the first job committed, exactly the lines of an
// uninterrupted run.
func TestUnalignedRestoreExact(t *testing.T) {
	const n = 60
	for _, ps := range [][2]int{{1, 1}, {2, 2}, {2, 3}, {2, 1}} {
		t.Run(fmt.Sprintf("%dto%d", ps[0], ps[1]), func(t *testing.T) {
			dir := t.TempDir()
			store := checkpoint.NewMemory(1)
			src := newGated(ints(n))
			permits, stop := make(chan struct{}, n), make(chan struct{})
			var done, emitted atomic.Int64
			env := New(Options{Parallelism: ps[0], Clock: manual(), BatchSize: 2, BufferTimeout: 2 * time.Millisecond, Restart: NoRestart()})
			cfg := env.EnableCheckpointing(time.Hour)
			cfg.Unaligned, cfg.Storage = true, store
			slowSums(env, src, n, dir, permits, stop, &done, &emitted)
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			src.release(30)
			permits <- struct{}{}
			waitUntil(t, "a record through the slow task", func() bool { return done.Load() >= 1 })
			res := make(chan error, 1)
			go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
		loop:
			for {
				select {
				case err := <-res:
					if err != nil {
						t.Fatal(err)
					}
					break loop
				case <-time.After(20 * time.Millisecond):
					permits <- struct{}{}
				}
			}
			src.release(10) // after the checkpoint: replayed from the source
			close(stop)
			waitUntil(t, "the records after the checkpoint", func() bool { return done.Load() == 40 })
			j.Cancel()
			j.Wait()
			if h := j.Checkpoints(); len(h.Completed) != 1 || h.Completed[0].InFlight == 0 {
				t.Fatalf("checkpoints %+v, want one with records in flight", h.Completed)
			}

			env2 := New(Options{Parallelism: ps[1], Clock: manual(), Restart: NoRestart()})
			cfg2 := env2.EnableCheckpointing(time.Hour)
			cfg2.Unaligned, cfg2.Storage = true, store
			src2 := newGated(ints(n))
			src2.open()
			open := make(chan struct{})
			close(open)
			var done2, emitted2 atomic.Int64
			slowSums(env2, src2, n, dir, nil, open, &done2, &emitted2)
			if _, err := env2.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c, h := dirState(t, dir); !slices.Equal(c, sumsOracle(n)) || len(h) != 0 {
				t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run:\n%v\n%v", len(c), h, n, c, sumsOracle(n))
			}
		})
	}
}
