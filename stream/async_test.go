package stream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// shuffled completes each call with f(v) on a goroutine of its own that
// first yields a random number of times, so calls complete out of order.
func shuffled(f func(int) int) func() AsyncFunction[int, int] {
	return func() AsyncFunction[int, int] {
		return AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf ResultFuture[int]) {
			n := rand.IntN(20)
			go func() {
				for range n {
					runtime.Gosched()
				}
				rf.Complete([]int{f(v)})
			}()
		}}
	}
}

func asyncWaitOf(ordered bool, ds DataStream[int], newFn func() AsyncFunction[int, int], capacity int) DataStream[int] {
	if ordered {
		return OrderedWait(ds, newFn, time.Minute, capacity)
	}
	return UnorderedWait(ds, newFn, time.Minute, capacity)
}

// TestAsyncJobEventTime: events at times 0..n-1, a watermark every tenth
// event, through an async function at parallelism 1 and 3 whose calls
// complete out of order, then counted per key in 50 ms event-time windows:
// every count equals the oracle's, so no watermark overtook a record (a
// record behind its watermark would be late and dropped), and every
// result kept its record's timestamp.
func TestAsyncJobEventTime(t *testing.T) {
	const n = 3000
	want := map[string]int{}
	for i := range n {
		want[fmt.Sprintf("%d@%d", i%5, i/50*50+49)]++
	}
	for _, ordered := range []bool{true, false} {
		for _, p := range []int{1, 3} {
			t.Run(fmt.Sprintf("ordered=%v/p=%d", ordered, p), func(t *testing.T) {
				env := New(Options{Parallelism: p})
				ts := watermark.ForGenerator(func(watermark.Context) watermark.Generator[int] {
					return watermark.Punctuated(func(v int, ts int64) (int64, bool) { return ts - 1, v%10 == 0 })
				}).WithTimestampAssigner(func(v int, _ int64) int64 { return int64(v) })
				src := FromSource(env, source.FromSlice(ints(n)), ts, "events").SetParallelism(1)
				out := asyncWaitOf(ordered, src, shuffled(func(v int) int { return v }), 7)
				counts := WindowAggregate(Window(KeyBy(out, func(v int) int { return v % 5 }), window.TumblingEventTimeWindows(50*time.Millisecond)), countAgg{})
				got := Collect(counts)
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				have := map[string]int{}
				for _, r := range got.Records() {
					have[fmt.Sprintf("%d@%d", r.Value.K, r.Timestamp)] += r.Value.V
				}
				if len(have) != len(want) {
					t.Fatalf("%d windows, want %d", len(have), len(want))
				}
				for k, c := range want {
					if have[k] != c {
						t.Fatalf("window %s counted %d, want %d", k, have[k], c)
					}
				}
			})
		}
	}
}

// countAgg counts the values of a window per key.
type countAgg struct{}

func (countAgg) CreateAccumulator() kv { return kv{} }
func (countAgg) Add(v int, acc kv) kv  { return kv{K: v % 5, V: acc.V + 1} }
func (countAgg) GetResult(acc kv) kv   { return acc }
func (countAgg) Merge(a, b kv) kv      { return kv{K: a.K, V: a.V + b.V} }

// TestAsyncJobOrder: at parallelism 1 OrderedWait emits in input order and
// UnorderedWait emits every record once; at parallelism 3 both emit every
// record once; an empty input emits nothing.
func TestAsyncJobOrder(t *testing.T) {
	for _, n := range []int{0, 2000} {
		for _, ordered := range []bool{true, false} {
			for _, p := range []int{1, 3} {
				t.Run(fmt.Sprintf("n=%d/ordered=%v/p=%d", n, ordered, p), func(t *testing.T) {
					env := New(Options{Parallelism: p})
					out := asyncWaitOf(ordered, FromSlice(env, ints(n)).Rebalance(), shuffled(func(v int) int { return 2 * v }), 16)
					got := Collect(out)
					if _, err := env.Execute(context.Background()); err != nil {
						t.Fatal(err)
					}
					var vs []int
					for _, r := range got.Records() {
						vs = append(vs, r.Value)
					}
					want := make([]int, n)
					for i := range want {
						want[i] = 2 * i
					}
					if !(ordered && p == 1) {
						slices.Sort(vs)
					}
					if !slices.Equal(vs, want) {
						t.Fatalf("got %d values, want %d in order: %v", len(vs), n, vs[:min(len(vs), 20)])
					}
				})
			}
		}
	}
}

// TestAsyncJobRestart: numbers through an async function into the keyed
// sums of the checkpoint tests. Of the first 60 numbers read, the calls of
// the multiples of 7 are held in flight while the job checkpoints (the
// snapshot holds them, and, ordered, the records completed behind them);
// the call of 190 then fails the first attempt. The job restarts from the
// checkpoint and calls the function again for the records in flight.
// Ordered, it commits exactly the lines of an uninterrupted run;
// unordered, a held record may reach its key's sum later, so each key has
// as many lines as records and the run's total.
func TestAsyncJobRestart(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			const n = 200
			src := newGated(ints(n))
			env := New(Options{Parallelism: 2, Clock: manual(), Restart: FixedDelayRestart(1, 0)})
			env.EnableCheckpointing(time.Hour)
			var attempt1 atomic.Bool
			attempt1.Store(true)
			hold := make(chan struct{})
			var mu sync.Mutex
			var calls1 int
			before, held, recalled := map[int]bool{}, map[int]bool{}, map[int]bool{}
			var wg sync.WaitGroup
			defer wg.Wait()
			newFn := func() AsyncFunction[int, int] {
				return AsyncFunction[int, int]{AsyncInvoke: func(ctx context.Context, v int, rf ResultFuture[int]) {
					mu.Lock()
					defer mu.Unlock()
					switch {
					case !attempt1.Load():
						if before[v] {
							recalled[v] = true
						}
						rf.Complete([]int{v})
					case v == 190:
						attempt1.Store(false)
						rf.CompleteExceptionally(errors.New("lookup service down"))
					case calls1 < 60:
						calls1++
						before[v] = true
						if v%7 != 0 {
							rf.Complete([]int{v})
							return
						}
						held[v] = true
						wg.Add(1)
						go func() {
							defer wg.Done()
							select {
							case <-hold:
								rf.Complete([]int{v})
							case <-ctx.Done():
							}
						}()
					default:
						rf.Complete([]int{v})
					}
				}}
			}
			ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
			dir := t.TempDir()
			waitSums(asyncWaitOf(ordered, ds, newFn, 100).UID("async"), n, dir)
			jobs := make(chan *Job, 1)
			env.opts.Started = func(j *Job) { jobs <- j }
			done := make(chan error, 1)
			go func() {
				_, err := env.Execute(context.Background())
				done <- err
			}()
			j := <-jobs
			src.release(60)
			for {
				mu.Lock()
				c := calls1
				mu.Unlock()
				if c == 60 {
					break
				}
				runtime.Gosched()
			}
			if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
				t.Fatal(err)
			}
			close(hold)
			src.open()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			c, hid := dirState(t, dir)
			if len(hid) != 0 {
				t.Fatalf("hidden files %v", hid)
			}
			if ordered && !slices.Equal(c, sumsOracle(n)) {
				t.Fatalf("committed %d lines, want the %d of an uninterrupted run", len(c), n)
			}
			// unordered, a key's records may come in another order: each
			// key has as many lines as records, the last one its total
			if got, want := lastSums(t, c), lastSums(t, sumsOracle(n)); !maps.Equal(got, want) {
				t.Fatalf("lines and totals per key %v, want %v", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if h := j.Checkpoints(); h.Restarts != 1 || len(held) == 0 {
				t.Fatalf("%d restarts, %d calls held: want 1 restart and some held", h.Restarts, len(held))
			}
			for v := range held {
				if !recalled[v] {
					t.Errorf("%d was in flight at the checkpoint and not called again", v)
				}
			}
			if !ordered && len(recalled) != len(held) {
				t.Errorf("called again %v, want only the calls in flight %v", recalled, held)
			}
		})
	}
}

// lastSums returns, per key of "key:sum" lines, the number of lines and
// the largest sum.
func lastSums(t *testing.T, lines []string) map[int][2]int {
	out := map[int][2]int{}
	for _, l := range lines {
		var k, sum int
		if _, err := fmt.Sscanf(l, "%d:%d", &k, &sum); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out[k] = [2]int{out[k][0] + 1, max(out[k][1], sum)}
	}
	return out
}

// waitSums is keyedSums's program after its source: ds keyed by keyOf, a
// rolling Sum per key, lines "key:sum" into a FileSink in dir.
func waitSums(ds DataStream[int], n int, dir string) {
	pairs := Map(ds, func(v int) kv { return kv{keyOf(v, n), v} })
	sums := Sum(KeyBy(pairs, func(p kv) int { return p.K }), func(p kv) int { return p.V }, func(p *kv, v int) { p.V = v }).UID("sums")
	SinkTo(Map(sums, func(p kv) string { return fmt.Sprintf("%d:%d", p.K, p.V) }), sink.Text(dir))
}

func modeName(ordered bool) string {
	if ordered {
		return "ordered"
	}
	return "unordered"
}

// TestAsyncJobCancel: a job whose async queue is full of calls that never
// complete (the subtask yields, waiting) ends when cancelled; the calls'
// context ends with it, so their goroutines stop (goleak checks).
func TestAsyncJobCancel(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			var calls atomic.Int32
			newFn := func() AsyncFunction[int, int] {
				return AsyncFunction[int, int]{AsyncInvoke: func(ctx context.Context, v int, rf ResultFuture[int]) {
					calls.Add(1)
					go func() {
						<-ctx.Done()
						rf.CompleteExceptionally(ctx.Err()) // ignored: the operator is gone
					}()
				}}
			}
			env := New(Options{Parallelism: 2})
			Discard(asyncWaitOf(ordered, FromSlice(env, ints(100)), newFn, 3))
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for calls.Load() < 6 { // both subtasks full
				runtime.Gosched()
			}
			j.Cancel()
			if _, err := j.Wait(); !errors.Is(err, context.Canceled) {
				t.Fatalf("job error %v, want it cancelled", err)
			}
			if c := calls.Load(); c != 6 {
				t.Fatalf("%d calls, want 6: 3 per subtask", c)
			}
		})
	}
}

// TestAsyncBuildErrors: a nil function, a capacity below 1, a retry
// strategy without a timeout or with no attempts, a function without
// AsyncInvoke, and a record type with no codec under checkpoints are
// errors of Execute, each naming its call.
func TestAsyncBuildErrors(t *testing.T) {
	env := New(Options{Parallelism: 1})
	ds := FromSlice(env, []int{1})
	fn := shuffled(func(v int) int { return v })
	_, _, line, _ := runtime.Caller(0)
	OrderedWait[int, int](ds, nil, time.Second, 1)
	UnorderedWait(ds, fn, time.Second, 0)
	OrderedWait(ds, fn, 0, 1, WithRetry(FixedDelayRetry[int](1, time.Millisecond).IfResult(EmptyResult[int])))
	UnorderedWait(ds, fn, time.Second, 1, WithRetry(FixedDelayRetry[int](0, time.Millisecond).IfError(AnyError)))
	_, err := env.Execute(context.Background())
	for i, want := range []string{
		"OrderedWait: nil function",
		"UnorderedWait: capacity 0 must be positive",
		"OrderedWait: a retry strategy needs a positive timeout, not 0s",
		"UnorderedWait: retry: MaxAttempts 0 must be positive",
	} {
		want = fmt.Sprintf("async_test.go:%d: %s", line+1+i, want)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}

	env = New(Options{Parallelism: 1})
	Discard(OrderedWait(FromSlice(env, []int{1}), func() AsyncFunction[int, int] { return AsyncFunction[int, int]{} }, time.Second, 1))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "OrderedWait: no AsyncInvoke") {
		t.Errorf("error %v, want the missing AsyncInvoke", err)
	}

	env = New(Options{Parallelism: 1})
	env.EnableCheckpointing(time.Hour)
	noCodec := func() AsyncFunction[func(), int] {
		return AsyncFunction[func(), int]{AsyncInvoke: func(_ context.Context, _ func(), rf ResultFuture[int]) { rf.Complete(nil) }}
	}
	Discard(UnorderedWait(Map(FromSlice(env, []int{1}), func(int) func() { return nil }), noCodec, time.Second, 1))
	if _, err := env.Execute(context.Background()); !IsUnrecoverable(err) || !strings.Contains(err.Error(), "the records in flight cannot be checkpointed") {
		t.Errorf("error %v, want the async operator's record type refused, unrecoverable", err)
	}
}
