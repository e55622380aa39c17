package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// keepOne is a Memory that keeps only checkpoint id (and finished
// snapshots), so that a job restores from it.
type keepOne struct {
	*checkpoint.Memory
	id int64
}

func (k *keepOne) Store(s *checkpoint.Snapshot) (string, error) {
	if s.ID != k.id && !s.Finished {
		return "", nil
	}
	return k.Memory.Store(s)
}

// hookedPart is an asynchronous snapshot part whose write calls hook
// before (an error fails it) and after.
type hookedPart struct {
	task.AsyncPart
	id   int64
	hook func(id int64, written bool) error
}

func (p hookedPart) WriteTo(w io.Writer) (int64, error) {
	if err := p.hook(p.id, false); err != nil {
		return 0, err
	}
	n, err := p.AsyncPart.WriteTo(w)
	_ = p.hook(p.id, true)
	return n, err
}

// hookedSum is a rolling Sum whose asynchronous snapshots call hook.
type hookedSum struct {
	*op.Reduce[kv, int]
	hook func(id int64, written bool) error
}

func (h hookedSum) SnapshotAsync(id int64) (task.AsyncPart, error) {
	p, err := h.Reduce.SnapshotAsync(id)
	if p == nil || err != nil || h.hook == nil {
		return p, err
	}
	return hookedPart{p, id, h.hook}, nil
}

// asyncSums is the test's program: the numbers 0..n-1 keyed by keyOf into
// a rolling Sum on the heap backend whose asynchronous snapshot writes call
// hook (when set); seen, when set, is called per sum.
func asyncSums(env *Env, src source.Source[int], n int, seen func(), hook func(id int64, written bool) error) *Collected[kv] {
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
	pairs := Map(ds, func(v int) kv { return kv{keyOf(v, n), v} })
	ks := KeyBy(pairs, func(p kv) int { return p.K })
	sn := addKeyed[kv](ks, "Sum", "Sum")
	sum := sumFn(func(p kv) int { return p.V }, func(p *kv, v int) { p.V = v })
	sn.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		r := hookedSum{op.NewReduce(b.MaxParallelism, ks.key, sum(), core.OutOf[kv](outs, ""), b.BatchSize()), hook}
		return []any{r}, r, nil
	}
	sums := stream[kv](env, sn).UID("sums")
	sums = Map(sums, func(p kv) kv {
		if seen != nil {
			seen()
		}
		return p
	}).UID("seen")
	return Collect(sums)
}

// checkTotals restores a job from store at parallelism p, runs it over
// all n numbers and checks that every key's last sum is its total: the
// restored keyed state held exactly the records before the barrier.
func checkTotals(t *testing.T, store checkpoint.Storage, n, p int) {
	t.Helper()
	env := New(Options{Parallelism: p, Clock: manual()})
	env.EnableCheckpointing(time.Hour).Storage = store
	src := newGated(ints(n))
	src.open()
	out := asyncSums(env, src, n, nil, nil)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	want, got := map[int]int{}, map[int]int{}
	for v := range n {
		want[keyOf(v, n)] += v
	}
	for _, s := range out.Values() {
		got[s.K] = max(got[s.K], s.V)
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("key %d: last sum %d after the restore, want the total %d (all sums %v)", k, got[k], w, got)
		}
	}
}

// TestAsyncSnapshotDoesNotBlock: the write of the keyed Sum's snapshot of
// checkpoint 1 blocks; the Sum task goes on summing records meanwhile,
// takes checkpoint 2, whose write finishes, and acknowledges neither until
// the write of checkpoint 1 is let go; then both complete, in order. A job
// restored from either checkpoint ends with every key's total: each
// snapshot is the state at its barrier, not the records summed while it
// was written.
func TestAsyncSnapshotDoesNotBlock(t *testing.T) {
	for _, from := range []int64{1, 2} {
		t.Run(fmt.Sprint("restore-from-", from), func(t *testing.T) {
			const n = 100
			entered, release, written2 := make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
			hook := func(id int64, written bool) error {
				switch {
				case id == 1 && !written:
					entered <- struct{}{}
					<-release
				case id == 2 && written:
					written2 <- struct{}{}
				}
				return nil
			}
			store := &keepOne{Memory: checkpoint.NewMemory(1), id: from}
			src := newGated(ints(n))
			var seen atomic.Int64
			env := New(Options{Parallelism: 1, Clock: manual()})
			cfg := env.EnableCheckpointing(time.Hour)
			cfg.Storage, cfg.MaxConcurrentCheckpoints = store, 2
			asyncSums(env, src, n, func() { seen.Add(1) }, hook)
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			src.release(10)
			waitUntil(t, "10 sums", func() bool { return seen.Load() == 10 })
			trigger := func() <-chan error {
				res := make(chan error, 1)
				go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
				return res
			}
			res1 := trigger()
			<-entered // the Sum task captured its state at barrier 1 and writes it
			src.release(15)
			waitUntil(t, "sums while checkpoint 1 is written", func() bool { return seen.Load() == 25 })
			res2 := trigger()
			<-written2
			src.release(5)
			waitUntil(t, "sums after checkpoint 2 was written", func() bool { return seen.Load() == 30 })
			if c := j.Checkpoints().Completed; len(c) != 0 {
				t.Fatalf("checkpoints %+v completed while the write of checkpoint 1 is blocked", c)
			}
			close(release)
			if err := <-res1; err != nil {
				t.Fatal(err)
			}
			if err := <-res2; err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, c := range j.Checkpoints().Completed {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, []int64{1, 2}) {
				t.Fatalf("completed checkpoints %v, want 1 and 2 in order", ids)
			}
			j.Cancel()
			j.Wait()
			checkTotals(t, store, n, 2)
		})
	}
}

// TestAsyncSnapshotFailureDeclines: the asynchronous write of checkpoint 1
// fails; the checkpoint is declined and aborted, the job runs on, and
// checkpoint 2 completes and restores.
func TestAsyncSnapshotFailureDeclines(t *testing.T) {
	const n = 60
	boom := errors.New("disk full")
	hook := func(id int64, written bool) error {
		if id == 1 && !written {
			return boom
		}
		return nil
	}
	store := &keepOne{Memory: checkpoint.NewMemory(1), id: 2}
	src := newGated(ints(n))
	var seen atomic.Int64
	env := New(Options{Parallelism: 1, Clock: manual()})
	cfg := env.EnableCheckpointing(time.Hour)
	cfg.Storage, cfg.TolerableFailures = store, -1 // the job runs on past the failed checkpoint
	asyncSums(env, src, n, func() { seen.Add(1) }, hook)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(10)
	waitUntil(t, "10 sums", func() bool { return seen.Load() == 10 })
	if _, err := j.TriggerCheckpoint(context.Background()); !errors.Is(err, coordinator.ErrAborted) || !strings.Contains(err.Error(), boom.Error()) {
		t.Fatalf("checkpoint 1: %v, want it aborted by the failed write", err)
	}
	src.release(10)
	waitUntil(t, "20 sums", func() bool { return seen.Load() == 20 })
	if id, err := j.TriggerCheckpoint(context.Background()); err != nil || id != 2 {
		t.Fatalf("checkpoint %d: %v", id, err)
	}
	j.Cancel()
	j.Wait()
	checkTotals(t, store, n, 1)
}

// TestAsyncSnapshotCancelled: the job is cancelled while the write of a
// keyed snapshot is in progress; the task waits for its goroutine and
// releases the capture, and the job ends (TestMain checks that no
// goroutine is left).
func TestAsyncSnapshotCancelled(t *testing.T) {
	const n = 60
	entered, release := make(chan struct{}), make(chan struct{})
	hook := func(id int64, written bool) error {
		if id == 1 && !written {
			entered <- struct{}{}
			<-release
		}
		return nil
	}
	src := newGated(ints(n))
	var seen atomic.Int64
	env := New(Options{Parallelism: 2, Clock: manual()})
	env.EnableCheckpointing(time.Hour)
	asyncSums(env, src, n, func() { seen.Add(1) }, hook)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(10)
	waitUntil(t, "10 sums", func() bool { return seen.Load() == 10 })
	res := make(chan error, 1)
	go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
	<-entered
	<-entered // both Sum subtasks write
	go j.Cancel()
	close(release)
	if _, err := j.Wait(); err == nil {
		t.Fatal("the cancelled job succeeded")
	}
	<-res // aborted, or completed when the writes were let go before the cancellation reached them
}
