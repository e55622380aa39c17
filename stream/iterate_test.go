package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

type branch struct{ Root, Depth int }

// fanOut builds a loop in which every record at depth d < depth feeds
// back two records at depth d+1, and records at depth are emitted: each
// root comes out 2^depth times.
func fanOut(env *Env, roots []int, depth int) *Collected[branch] {
	in := Map(FromSlice(env, roots), func(r int) branch { return branch{Root: r} })
	return fanOutFrom(in, depth, func(b *branch) *int { return &b.Depth })
}

// loopQuiet is the maxWait of the tests' loops: long enough that a loaded
// machine's pause between two feedback batches (a buffer timeout, a spill
// written and read back) does not end a loop early. It adds to a test's
// end only: the wait starts over with every batch fed back.
const loopQuiet = 2 * time.Second

// fanOutFrom is fanOut over records of any type, whose depth at is.
func fanOutFrom[T any](in DataStream[T], depth int, at func(*T) *int) *Collected[T] {
	it := Iterate(in, loopQuiet)
	again := NewOutputTag[T]("again")
	step := Process(it.DataStream, func() ProcessFunction[T, T] {
		return ProcessFunction[T, T]{
			ProcessElement: func(b T, ctx *Context, out Collector[T]) error {
				if *at(&b) == depth {
					out.Collect(b)
					return nil
				}
				*at(&b)++
				Output(ctx, again, b)
				Output(ctx, again, b)
				return nil
			},
		}
	})
	it.CloseWith(GetSideOutput(step, again))
	return Collect(step)
}

// TestIterateFeedbackUnderBackpressure: a loop that feeds back far more
// records than the credit queues hold (batches of 4 records, channels of
// two batches) at parallelism 1 and 2 ends with every record: the tail
// never waits for the head, so the cycle cannot deadlock. The oracle counts 2^depth records per root.
func TestIterateFeedbackUnderBackpressure(t *testing.T) {
	const roots, depth = 300, 7
	var in []int
	for r := range roots {
		in = append(in, r)
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p, BatchSize: 4})
			got := fanOut(env, in, depth)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := env.Execute(ctx); err != nil {
				t.Fatal(err)
			}
			count := map[int]int{}
			for _, b := range got.Values() {
				if b.Depth != depth {
					t.Fatalf("record at depth %d", b.Depth)
				}
				count[b.Root]++
			}
			if len(count) != roots {
				t.Fatalf("%d roots came out, want %d", len(count), roots)
			}
			for r, n := range count {
				if n != 1<<depth {
					t.Fatalf("root %d came out %d times, want %d", r, n, 1<<depth)
				}
			}
		})
	}
}

// TestIterateWatermarks: records fed back keep their timestamps, the head
// forwards the input's watermarks only (as Flink's, whose head emits the
// maximal watermark so that the loop never holds event time back), and
// the loop body reaches the input's end of event time.
func TestIterateWatermarks(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p})
			src := source.Generator(func(i int64) int64 { return 100 + i }, 10, 0)
			in := FromSource(env, src, watermark.ForMonotonousTimestamps[int64]().WithTimestampAssigner(func(v int64, _ int64) int64 { return v }), "gen")
			type trip struct{ V, N int64 }
			it := Iterate(Map(in, func(v int64) trip { return trip{V: v} }), loopQuiet)
			again := NewOutputTag[trip]("again")
			var mu sync.Mutex
			var bad []string
			lastWM := map[int64]int64{}
			lastTrip := map[int64]bool{}
			step := Process(it.DataStream, func() ProcessFunction[trip, trip] {
				return ProcessFunction[trip, trip]{
					ProcessElement: func(v trip, ctx *Context, out Collector[trip]) error {
						ts, ok := ctx.Timestamp()
						wm := ctx.CurrentWatermark()
						mu.Lock()
						if !ok || ts != v.V {
							bad = append(bad, fmt.Sprintf("trip %v has timestamp %d", v, ts))
						}
						if wm != watermark.Max && wm >= 110 {
							bad = append(bad, fmt.Sprintf("watermark %d beyond the input's", wm))
						}
						lastWM[v.V] = wm
						lastTrip[v.V] = v.N == 29
						mu.Unlock()
						v.N++
						if v.N < 30 {
							Output(ctx, again, v)
						} else {
							out.Collect(v)
						}
						return nil
					},
				}
			})
			it.CloseWith(GetSideOutput(step, again))
			got := Collect(step)
			execute(t, env)
			if len(bad) > 0 {
				t.Fatal(strings.Join(bad[:min(len(bad), 5)], "; "))
			}
			for v, wm := range lastWM {
				if v >= 100 && wm != watermark.Max && lastTrip[v] {
					t.Fatalf("the last trip of %d saw watermark %d, want the input's end", v, wm)
				}
			}
			if n := len(got.Values()); n != 10 {
				t.Fatalf("%d records out, want 10", n)
			}
			for _, r := range got.Records() {
				if r.Timestamp != r.Value.V {
					t.Fatalf("output %v has timestamp %d", r.Value, r.Timestamp)
				}
			}
		})
	}
}

// TestIterateRefusedInBatch: iterations are refused in BATCH mode, and in
// AUTOMATIC mode over bounded inputs, as Flink's StreamGraphGenerator does
// ("Iterations are not supported in BATCH execution mode.", which its
// StreamGraphGenerator batch-execution test expects).
func TestIterateRefusedInBatch(t *testing.T) {
	for _, mode := range []Mode{Batch, Automatic} {
		env := New(Options{Parallelism: 1, Mode: mode})
		fanOut(env, []int{1}, 1)
		_, err := env.Execute(context.Background())
		if err == nil || !strings.Contains(err.Error(), "iterations are not supported in BATCH execution mode") {
			t.Fatalf("mode %d: err = %v", mode, err)
		}
	}
}

// TestIterateBuildErrors: an iteration without feedback, and feedback at
// another parallelism than the head's (Flink's "Parallelism of the
// feedback stream must match").
func TestIterateBuildErrors(t *testing.T) {
	env := New(Options{Parallelism: 2})
	it := Iterate(FromSlice(env, []int{1}), time.Millisecond)
	Collect(it.DataStream)
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "CloseWith") {
		t.Fatalf("no feedback: err = %v", err)
	}
	env = New(Options{Parallelism: 2})
	it = Iterate(FromSlice(env, []int{1}), time.Millisecond)
	fb := Map(it.DataStream, func(v int) int { return v }).SetParallelism(1)
	it.CloseWith(fb)
	Discard(fb)
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "must match") {
		t.Fatalf("parallelism mismatch: err = %v", err)
	}
}

// TestIterateCancelForever: a loop with maxWait zero waits for feedback
// forever, as Flink's iterate(0); records keep circling until the job is
// cancelled, which ends every task (goleak in TestMain), over a bounded
// input and an unbounded one.
func TestIterateCancelForever(t *testing.T) {
	for _, bounded := range []bool{true, false} {
		t.Run(fmt.Sprint("bounded=", bounded), func(t *testing.T) { iterateForever(t, bounded) })
	}
}

func iterateForever(t *testing.T, bounded bool) {
	env := New(Options{Parallelism: 2})
	in := FromSlice(env, []int{1, 2, 3, 4})
	if !bounded {
		in = FromSource(env, source.Generator(func(i int64) int { return int(i) }, 0, 1000), watermark.NoWatermarks[int](), "generator")
	}
	it := Iterate(in, 0)
	var trips atomic.Int64
	step := Map(it.DataStream, func(v int) int { trips.Add(1); return v + 1 })
	it.CloseWith(step)
	Discard(step)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && trips.Load() < 10000 {
		time.Sleep(5 * time.Millisecond)
	}
	if n := trips.Load(); n < 10000 {
		t.Fatalf("only %d trips around the loop", n)
	}
	j.Cancel()
	if _, err := j.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: %v", err)
	}
}

// TestIterateCheckpointAfterInputEnded: a loop with checkpoints whose two
// heads' inputs end a second apart (three roots read at one record a
// second per subtask: one subtask's split holds one root, the other's
// two). The checkpoints triggered in between reach the loop through one
// head only: the other's input ended, so its barrier must come from the
// coordinator (FLIP-147's trigger of the first running tasks), or the
// loop's consumer, aligning, would wait for it while that head's side of
// the loop ran dry, until it timed out and dropped what was fed back to
// it later. Every root comes out 2^depth times.
func TestIterateCheckpointAfterInputEnded(t *testing.T) {
	const depth = 8
	env := New(Options{Parallelism: 2, SourceRate: 2, BatchSize: 4})
	env.EnableCheckpointing(50 * time.Millisecond)
	in := Map(FromSlice(env, []int{0, 1, 2}), func(r int) branch { return branch{Root: r} })
	it := Iterate(in, time.Second)
	again := NewOutputTag[branch]("again")
	step := Process(it.DataStream.Rebalance(), func() ProcessFunction[branch, branch] {
		return ProcessFunction[branch, branch]{
			ProcessElement: func(b branch, ctx *Context, out Collector[branch]) error {
				time.Sleep(200 * time.Microsecond) // the loop runs past the first checkpoints
				if b.Depth == depth {
					out.Collect(b)
					return nil
				}
				b.Depth++
				Output(ctx, again, b)
				Output(ctx, again, b)
				return nil
			},
		}
	})
	it.CloseWith(GetSideOutput(step, again))
	got := Collect(step)
	var job *Job
	env.opts.Started = func(j *Job) { job = j }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := env.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, b := range got.Values() {
		count[b.Root]++
	}
	for r := range 3 {
		if count[r] != 1<<depth {
			t.Errorf("root %d came out %d times, want %d", r, count[r], 1<<depth)
		}
	}
	if n := len(job.Checkpoints().Completed); n == 0 {
		t.Error("no checkpoint completed")
	}
}
