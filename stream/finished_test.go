package stream

import (
	"context"
	"fmt"
	"github.com/weirdata/weir/stream/internal/graph"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/watermark"
)

// twoKey is the key of value v of twoSources: each half of each source
// (the split of one source subtask) has its own.
func twoKey(v, nb, nr int) int {
	if v >= 100 {
		return boolInt(v-100 >= nb/2)
	}
	return 2 + boolInt(v >= nr/2)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// twoSources is the program of TestCheckpointsAfterTasksFinished: a
// bounded source of 100+v and a long-running one of v, unioned, a rolling
// Sum per key (twoKey), lines "key:sum" into dir.
func twoSources(env *Env, bounded, running *gated[int], nb, nr int, dir string, seen *atomic.Int64) {
	b := FromSource(env, bounded, watermark.NoWatermarks[int](), "bounded").UID("bounded")
	r := FromSource(env, running, watermark.NoWatermarks[int](), "running").UID("running")
	b = Map(b, func(v int) int { seen.Add(1); return 100 + v }).UID("offset")
	pairs := Map(b.Union(r), func(v int) kv {
		return kv{twoKey(v, nb, nr), v}
	})
	sums := Sum(KeyBy(pairs, func(p kv) int { return p.K }), func(p kv) int { return p.V }, func(p *kv, v int) { p.V = v }).UID("sums")
	SinkTo(Map(sums, func(p kv) string { return fmt.Sprintf("%d:%d", p.K, p.V) }), sink.Text(dir))
}

// TestCheckpointsAfterTasksFinished follows Flink's FLIP-147
// (checkpoints-after-tasks-finish, on by default since 1.15): a bounded
// source finishes while the other keeps running; checkpoints keep
// completing, the bounded source's operators are recorded as finished,
// and a job restored from the last one does not run the bounded source
// again and commits, with what the first job committed, exactly the lines
// of an uninterrupted run.
func TestCheckpointsAfterTasksFinished(t *testing.T) {
	for _, unaligned := range []bool{false, true} {
		t.Run(fmt.Sprint("unaligned=", unaligned), func(t *testing.T) {
			const nb, nr = 30, 40
			dir := t.TempDir()
			store := checkpoint.NewMemory(1)
			var seen atomic.Int64
			bounded, running := newGated(ints(nb)), newGated(ints(nr))
			bounded.open()
			env := New(Options{Parallelism: 2, Clock: manual(), Restart: NoRestart()})
			cfg := env.EnableCheckpointing(time.Hour)
			cfg.Storage, cfg.Unaligned = store, unaligned
			twoSources(env, bounded, running, nb, nr, dir, &seen)
			ids := env.operatorIDs()
			var srcNode *graph.Node
			for n := range ids {
				if n.UID == "bounded" {
					srcNode = n
				}
			}
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			running.release(10)
			waitUntil(t, "the bounded input", func() bool { return seen.Load() == nb })
			finished := false
			for range 200 {
				if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
					t.Fatal(err)
				}
				s, _, _ := store.Latest()
				if op := s.Operator(ids[srcNode]); op != nil && op.Finished {
					finished = true
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if !finished {
				t.Fatal("no checkpoint recorded the bounded source as finished")
			}
			running.release(10)
			if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
				t.Fatalf("a checkpoint after the bounded source finished: %v", err)
			}
			running.release(5) // after the last checkpoint: replayed
			j.Cancel()
			j.Wait()

			bounded2, running2 := newGated(ints(nb)), newGated(ints(nr))
			bounded2.open()
			running2.open()
			env2 := New(Options{Parallelism: 2, Clock: manual(), Restart: NoRestart()})
			cfg2 := env2.EnableCheckpointing(time.Hour)
			cfg2.Storage, cfg2.Unaligned = store, unaligned
			var seen2 atomic.Int64
			twoSources(env2, bounded2, running2, nb, nr, dir, &seen2)
			if _, err := env2.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			if r := bounded2.readers.Load(); r != 0 || seen2.Load() != 0 {
				t.Fatalf("the finished source ran again: %d readers, %d records", r, seen2.Load())
			}
			acc := map[int]int{}
			var want []string
			add := func(v int) {
				k := twoKey(v, nb, nr)
				acc[k] += v
				want = append(want, fmt.Sprintf("%d:%d", k, acc[k]))
			}
			for v := range nb {
				add(100 + v)
			}
			for v := range nr {
				add(v)
			}
			slices.Sort(want)
			if c, h := dirState(t, dir); !slices.Equal(c, want) || len(h) != 0 {
				t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run", len(c), h, len(want))
			}
		})
	}
}
