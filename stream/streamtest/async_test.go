package streamtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
)

// The tests port Flink's AsyncWaitOperatorTest: a function that completes
// on a goroutine of its own with twice its input (MyAsyncFunction), and a
// lazy one whose calls the test completes (LazyAsyncFunction).

const asyncTimeout = time.Second // Flink's TIMEOUT

// doubling completes each call with 2v on a goroutine it starts.
func doubling() stream.AsyncFunction[int, int] {
	return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
		go rf.Complete([]int{2 * v})
	}}
}

// lazy keeps each call's ResultFuture for the test to complete.
type lazy struct {
	mu    sync.Mutex
	calls []lazyCall
}

type lazyCall struct {
	v  int
	rf stream.ResultFuture[int]
}

func (l *lazy) fn() stream.AsyncFunction[int, int] {
	return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
		l.mu.Lock()
		l.calls = append(l.calls, lazyCall{v, rf})
		l.mu.Unlock()
	}}
}

// take returns the calls made so far and forgets them.
func (l *lazy) take() []lazyCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

func asyncHarness(t *testing.T, ordered bool, newFn func() stream.AsyncFunction[int, int], timeout time.Duration, capacity int, opts ...stream.AsyncOption[int]) *Harness[int, int] {
	t.Helper()
	h, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[int] {
		if ordered {
			return stream.OrderedWait(in, newFn, timeout, capacity, opts...)
		}
		return stream.UnorderedWait(in, newFn, timeout, capacity, opts...)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { must(t, h.Close()) })
	return h
}

func byTimestamp(a, b stream.Record[int]) int {
	return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.Value, b.Value))
}

func modeName(ordered bool) string {
	if ordered {
		return "ordered"
	}
	return "unordered"
}

// TestAsyncEventTime is Flink's testEventTimeOrdered and
// testWaterMarkUnordered: capacity 2, a watermark between the records;
// the watermark waits for the records before it, and takes a place in the
// queue.
func TestAsyncEventTime(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			h := asyncHarness(t, ordered, doubling, asyncTimeout, 2)
			must(t, h.ProcessElement(1, 1))
			must(t, h.ProcessElement(2, 2))
			must(t, h.ProcessWatermark(2))
			must(t, h.ProcessElement(3, 3))
			must(t, h.EndInput())
			want := []Item[int]{rec(2, 1), rec(4, 2), wm(2), rec(6, 3)}
			if ordered {
				expect(t, h, want...)
				return
			}
			AssertOutputEqualsSorted(t, h, want, byTimestamp)
		})
	}
}

// TestAsyncProcessingTime is Flink's testProcessingTimeOrdered and
// testProcessingUnordered: eight records, capacity 6.
func TestAsyncProcessingTime(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			h := asyncHarness(t, ordered, doubling, asyncTimeout, 6)
			var want []Item[int]
			for v := 1; v <= 8; v++ {
				must(t, h.ProcessElement(v, int64(v)))
				want = append(want, rec(2*v, int64(v)))
			}
			must(t, h.EndInput())
			if ordered {
				expect(t, h, want...)
				return
			}
			AssertOutputEqualsSorted(t, h, want, byTimestamp)
		})
	}
}

// TestAsyncCompletionOrder completes the calls in an order the test
// chooses, across two watermarks: ordered emits in input order, each
// watermark after the records before it; unordered emits each record as
// it completes, but a record after a watermark only once the watermark
// went, and the watermark only once the records before it went.
func TestAsyncCompletionOrder(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			l := &lazy{}
			h := asyncHarness(t, ordered, l.fn, 0, 10)
			for _, v := range []int{1, 2, 3} {
				must(t, h.ProcessElement(v, int64(v)))
			}
			must(t, h.ProcessWatermark(3))
			for _, v := range []int{4, 5} {
				must(t, h.ProcessElement(v, int64(v)))
			}
			must(t, h.ProcessWatermark(5))
			must(t, h.ProcessElement(6, 6))
			calls := l.take()
			if len(calls) != 6 {
				t.Fatalf("%d calls, want 6", len(calls))
			}
			// complete 5, 3, 6, then 1, then 2 and 4
			step := func(vs ...int) {
				for _, v := range vs {
					calls[v-1].rf.Complete([]int{10 * v})
				}
				must(t, h.ProcessMail())
			}
			step(5, 3, 6)
			if ordered {
				expect(t, h)
			} else {
				expect(t, h, rec(30, 3))
			}
			step(1)
			if ordered {
				expect(t, h, rec(10, 1))
			} else {
				expect(t, h, rec(30, 3), rec(10, 1))
			}
			step(2, 4)
			if ordered {
				expect(t, h, rec(10, 1), rec(20, 2), rec(30, 3), wm(3), rec(40, 4), rec(50, 5), wm(5), rec(60, 6))
			} else {
				expect(t, h, rec(30, 3), rec(10, 1), rec(20, 2), wm(3), rec(50, 5), rec(40, 4), wm(5), rec(60, 6))
			}
			must(t, h.EndInput())
		})
	}
}

// TestAsyncCapacity: with capacity c, the k-th call is made only once at
// least k-c records left the queue (the task yields while it is full),
// and the queue does fill: backpressure, the bound never exceeded.
func TestAsyncCapacity(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		for _, capacity := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/capacity=%d", modeName(ordered), capacity), func(t *testing.T) {
				var h *Harness[int, int]
				calls, fullest := 0, 0
				newFn := func() stream.AsyncFunction[int, int] {
					return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
						calls++
						fullest = max(fullest, calls-len(h.Records()))
						go rf.Complete([]int{v})
					}}
				}
				h = asyncHarness(t, ordered, newFn, 0, capacity)
				batch := make([]stream.Record[int], 20)
				for i := range batch {
					batch[i] = stream.Record[int]{Value: i, Timestamp: int64(i)}
				}
				must(t, h.ProcessElements(batch))
				must(t, h.EndInput())
				if fullest != capacity {
					t.Errorf("at most %d records in the queue, want %d", fullest, capacity)
				}
				if calls != len(batch) || len(h.Records()) != len(batch) {
					t.Errorf("%d calls and %d records out, want %d", calls, len(h.Records()), len(batch))
				}
			})
		}
	}
}

// TestAsyncTimeout is Flink's testAsyncTimeoutFailure and
// testAsyncTimeoutIgnore: timeout 10 ms, capacity 2; record 1 at time 0,
// record 2 at time 5; at time 11 record 1 times out. Without a Timeout
// the call fails the job with ErrAsyncTimeout naming the record; with
// one that completes with 3v, that result goes out, then record 2's.
func TestAsyncTimeout(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprint("timeout-function=", ignore), func(t *testing.T) {
			l := &lazy{}
			newFn := func() stream.AsyncFunction[int, int] {
				fn := l.fn()
				if ignore {
					fn.Timeout = func(v int, rf stream.ResultFuture[int]) { rf.Complete([]int{3 * v}) }
				}
				return fn
			}
			h := asyncHarness(t, true, newFn, 10*time.Millisecond, 2)
			must(t, h.SetProcessingTime(0))
			must(t, h.ProcessElement(1, 0))
			must(t, h.SetProcessingTime(5))
			must(t, h.ProcessElement(2, 5))
			if n := h.NumProcessingTimeTimers(); n != 2 {
				t.Fatalf("%d timers, want the 2 timeouts", n)
			}
			must(t, h.SetProcessingTime(11))
			err := h.ProcessMail()
			if !ignore {
				if !errors.Is(err, stream.ErrAsyncTimeout) || !strings.Contains(err.Error(), "could not complete the element 1 (timestamp 0)") ||
					!strings.Contains(err.Error(), "timed out after 10ms") {
					t.Fatalf("error %v, want the timeout of element 1", err)
				}
				expect(t, h)
				return
			}
			must(t, err)
			expect(t, h, rec(3, 0))
			for _, c := range l.take() {
				c.rf.Complete([]int{c.v}) // record 1's is ignored: its call timed out and completed
			}
			must(t, h.EndInput())
			expect(t, h, rec(3, 0), rec(2, 5))
		})
	}
}

// TestAsyncTimeoutCleanup is Flink's testTimeoutCleanup (FLINK-5652): a
// record's timeout timer is gone once its call completed.
func TestAsyncTimeoutCleanup(t *testing.T) {
	l := &lazy{}
	h := asyncHarness(t, true, l.fn, asyncTimeout, 1)
	must(t, h.ProcessElement(42, 1))
	if n := h.NumProcessingTimeTimers(); n != 1 {
		t.Fatalf("%d timers in flight, want 1", n)
	}
	l.take()[0].rf.Complete([]int{84})
	must(t, h.EndInput())
	expect(t, h, rec(84, 1))
	if n := h.NumProcessingTimeTimers(); n != 0 {
		t.Fatalf("%d timers after the call completed, want 0", n)
	}
}

// TestAsyncTimeoutAfterComplete is Flink's testTimeoutAfterComplete
// (FLINK-22573): Timeout is not called for a call that completed within
// its timeout, even when the task handles the result after the timeout
// came due.
func TestAsyncTimeoutAfterComplete(t *testing.T) {
	l := &lazy{}
	timedOut := 0
	newFn := func() stream.AsyncFunction[int, int] {
		fn := l.fn()
		fn.Timeout = func(int, stream.ResultFuture[int]) { timedOut++ }
		return fn
	}
	h := asyncHarness(t, true, newFn, 10*time.Millisecond, 1)
	must(t, h.ProcessElement(1, 1))
	l.take()[0].rf.Complete([]int{1})
	must(t, h.SetProcessingTime(20)) // before the task took the result
	must(t, h.EndInput())
	expect(t, h, rec(1, 1))
	if timedOut != 0 {
		t.Fatalf("Timeout called %d times after the call completed", timedOut)
	}
}

// TestAsyncUserError is Flink's testOrderedWaitUserExceptionHandling and
// its unordered twin: a call completed exceptionally fails the job with an
// error naming the record and wrapping the function's.
func TestAsyncUserError(t *testing.T) {
	boom := errors.New("lookup failed")
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			newFn := func() stream.AsyncFunction[int, int] {
				return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
					if v == 2 {
						go rf.CompleteExceptionally(boom)
						return
					}
					rf.Complete([]int{v})
				}}
			}
			h := asyncHarness(t, ordered, newFn, asyncTimeout, 4)
			must(t, h.ProcessElement(1, 1))
			must(t, h.ProcessElement(2, 2))
			err := h.EndInput()
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), "could not complete the element 2 (timestamp 2)") {
				t.Fatalf("error %v, want the failure of element 2", err)
			}
		})
	}
}

// TestAsyncRepeatedComplete is Flink's
// testProcessingTimeRepeatedComplete: a second Complete of one call, or a
// CompleteExceptionally after it, is ignored.
func TestAsyncRepeatedComplete(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			newFn := func() stream.AsyncFunction[int, int] {
				return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
					rf.Complete([]int{2 * v})
					rf.Complete([]int{3 * v})
					rf.CompleteExceptionally(errors.New("late"))
				}}
			}
			h := asyncHarness(t, ordered, newFn, asyncTimeout, 3)
			var want []Item[int]
			for v := 1; v <= 8; v++ {
				must(t, h.ProcessElement(v, int64(v)))
				want = append(want, rec(2*v, int64(v)))
			}
			must(t, h.EndInput())
			AssertOutputEqualsSorted(t, h, want, byTimestamp)
		})
	}
}

// TestAsyncEmptyInput: no record, no call, no output.
func TestAsyncEmptyInput(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		calls := 0
		newFn := func() stream.AsyncFunction[int, int] {
			return stream.AsyncFunction[int, int]{AsyncInvoke: func(context.Context, int, stream.ResultFuture[int]) { calls++ }}
		}
		h := asyncHarness(t, ordered, newFn, asyncTimeout, 3)
		must(t, h.EndInput())
		expect(t, h)
		if calls != 0 {
			t.Fatalf("%d calls", calls)
		}
	}
}

// TestAsyncSnapshotRestore is Flink's testStateSnapshotAndRestore:
// records 1-4 in flight in a lazy function (capacity 4) are snapshotted;
// a new harness of the doubling function (capacity 6) restores them and
// calls the function for them again, then takes 5-8, with a snapshot
// between 7 and 8: exactly 2, 4, ... 16 come out, in order. Unordered,
// with a watermark held between the records in flight, the watermark is
// restored in its place.
func TestAsyncSnapshotRestore(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			l := &lazy{}
			capacity := 4
			if !ordered {
				capacity = 5 // 4 records and the watermark
			}
			h := asyncHarness(t, ordered, l.fn, asyncTimeout, capacity)
			for v := 1; v <= 4; v++ {
				must(t, h.ProcessElement(v, int64(v)))
				if v == 2 && !ordered {
					must(t, h.ProcessWatermark(2))
				}
			}
			if ordered {
				l.take()[2].rf.Complete([]int{30}) // completed, not emitted: snapshotted too
				must(t, h.ProcessMail())
			}
			snap, err := h.Snapshot()
			must(t, err)
			expect(t, h)

			r := asyncHarness(t, ordered, doubling, asyncTimeout, 6)
			must(t, r.Restore(snap))
			for v := 5; v <= 8; v++ {
				must(t, r.ProcessElement(v, int64(v)))
				if v == 7 {
					if _, err := r.Snapshot(); err != nil {
						t.Fatal(err)
					}
				}
			}
			must(t, r.EndInput())
			var want []Item[int]
			for v := 1; v <= 8; v++ {
				want = append(want, rec(2*v, int64(v)))
				if v == 2 && !ordered {
					want = append(want, wm(2))
				}
			}
			if ordered {
				expect(t, r, want...)
				return
			}
			AssertOutputEqualsSorted(t, r, want, byTimestamp)
		})
	}
}

// TestAsyncRescale: two subtasks with records in flight and a watermark
// held are snapshotted; restored at parallelism 1 (more records than its
// capacity: the restore yields until there is room), 2 and 3, the new
// subtasks together emit every record once, doubled.
func TestAsyncRescale(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		for _, n := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/to=%d", modeName(ordered), n), func(t *testing.T) {
				var snaps [][]byte
				var want []stream.Record[int]
				for sub := range 2 {
					l := &lazy{}
					h, err := New(Options{Parallelism: 2, Subtask: sub}, func(in stream.DataStream[int]) stream.DataStream[int] {
						if ordered {
							return stream.OrderedWait(in, l.fn, asyncTimeout, 4)
						}
						return stream.UnorderedWait(in, l.fn, asyncTimeout, 4)
					})
					must(t, err)
					for k := range 3 {
						v := 10*sub + k
						must(t, h.ProcessElement(v, int64(k)))
						want = append(want, stream.Record[int]{Value: 2 * v, Timestamp: int64(k)})
					}
					must(t, h.ProcessWatermark(5))
					snap, err := h.Snapshot()
					must(t, err)
					snaps = append(snaps, snap)
					must(t, h.Close())
				}
				parts, err := Repartition(snaps, n)
				must(t, err)
				var got []stream.Record[int]
				for sub, p := range parts {
					h, err := New(Options{Parallelism: n, Subtask: sub}, func(in stream.DataStream[int]) stream.DataStream[int] {
						if ordered {
							return stream.OrderedWait(in, doubling, asyncTimeout, 4)
						}
						return stream.UnorderedWait(in, doubling, asyncTimeout, 4)
					})
					must(t, err)
					must(t, h.Restore(p))
					must(t, h.EndInput())
					got = append(got, h.Records()...)
					must(t, h.Close())
				}
				slices.SortFunc(got, byTimestamp)
				slices.SortFunc(want, byTimestamp)
				if !slices.Equal(got, want) {
					t.Fatalf("restored subtasks emitted\n%v\nwant\n%v", got, want)
				}
			})
		}
	}
}

// oddEmptyOnce completes a call of an odd input with no result the first
// time (Flink's OddInputEmptyResultAsyncFunction), else with 2v; it
// counts the calls per input.
func oddEmptyOnce(calls map[int]int) func() stream.AsyncFunction[int, int] {
	return func() stream.AsyncFunction[int, int] {
		return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
			calls[v]++
			if v%2 == 1 && calls[v] == 1 {
				rf.Complete(nil)
				return
			}
			rf.Complete([]int{2 * v})
		}}
	}
}

// TestAsyncRetry is Flink's testProcessingTimeOrderedWithRetry and
// testProcessingTimeUnorderedWithRetry: a fixed-delay strategy (2
// attempts, 10 ms) retrying empty results; the odd inputs are called
// again 10 ms after their first call, not before, and the output is what
// a function without empty results gives. The capacity holds the 8
// records (Flink's test has 6 and a clock that moves while the task
// waits; the harness's clock moves only between records).
func TestAsyncRetry(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			calls := map[int]int{}
			retry := stream.FixedDelayRetry[int](2, 10*time.Millisecond).IfResult(stream.EmptyResult[int])
			h := asyncHarness(t, ordered, oddEmptyOnce(calls), asyncTimeout, 8, stream.WithRetry(retry))
			must(t, h.SetProcessingTime(0))
			var want []Item[int]
			for v := 1; v <= 8; v++ {
				must(t, h.ProcessElement(v, int64(v)))
				want = append(want, rec(2*v, int64(v)))
			}
			must(t, h.ProcessMail())
			must(t, h.SetProcessingTime(9))
			if calls[1] != 1 || calls[7] != 1 {
				t.Fatalf("calls %v before the backoff passed", calls)
			}
			must(t, h.SetProcessingTime(20))
			must(t, h.EndInput())
			for v := 1; v <= 8; v++ {
				if c := calls[v]; c != 1+v%2 {
					t.Errorf("input %d called %d times", v, c)
				}
			}
			if ordered {
				expect(t, h, want...)
				return
			}
			AssertOutputEqualsSorted(t, h, want, byTimestamp)
		})
	}
}

// TestAsyncRetryLimits: a function whose calls always fail with a
// transient error is called MaxAttempts+1 times per record (Flink's
// canRetry: attempts so far at most MaxAttempts), at the exponential
// backoff's times, and then fails the job; an error the predicate does
// not accept fails it at once; once the input ended a retry waiting is
// made at once and is the last.
func TestAsyncRetryLimits(t *testing.T) {
	transient := errors.New("transient")
	permanent := errors.New("permanent")
	var at []int64
	var h *Harness[int, int]
	newFn := func() stream.AsyncFunction[int, int] {
		return stream.AsyncFunction[int, int]{AsyncInvoke: func(_ context.Context, v int, rf stream.ResultFuture[int]) {
			at = append(at, h.ProcessingTime())
			if v == 2 {
				rf.CompleteExceptionally(permanent)
				return
			}
			rf.CompleteExceptionally(transient)
		}}
	}
	retry := stream.ExponentialBackoffRetry[int](3, 10*time.Millisecond, 25*time.Millisecond, 2).
		IfError(func(err error) bool { return errors.Is(err, transient) })
	h = asyncHarness(t, true, newFn, asyncTimeout, 2, stream.WithRetry(retry))
	must(t, h.ProcessElement(1, 1))
	for _, now := range []int64{10, 30, 55} {
		must(t, h.ProcessMail())
		must(t, h.SetProcessingTime(now))
	}
	err := h.ProcessMail()
	if !errors.Is(err, transient) || !slices.Equal(at, []int64{0, 10, 30, 55}) {
		t.Fatalf("error %v after calls at %v, want the transient error after calls at 0, 10, 30, 55", err, at)
	}

	at = nil
	h = asyncHarness(t, true, newFn, asyncTimeout, 2, stream.WithRetry(retry))
	must(t, h.ProcessElement(2, 2))
	if err := h.ProcessMail(); !errors.Is(err, permanent) || len(at) != 1 {
		t.Fatalf("error %v after %d calls, want the permanent error after one", err, len(at))
	}

	at = nil
	h = asyncHarness(t, true, newFn, asyncTimeout, 2, stream.WithRetry(retry))
	must(t, h.ProcessElement(1, 1))
	must(t, h.ProcessMail()) // a retry waits for time 10
	if err := h.EndInput(); !errors.Is(err, transient) || !slices.Equal(at, []int64{0, 0}) {
		t.Fatalf("error %v after calls at %v, want the transient error after two calls at 0", err, at)
	}
}

// TestAsyncRetryTimeout follows Flink's
// testProcessingTimeWithTimeoutFunctionOrderedWithRetry: a function that
// never completes, with a Timeout that completes with no result, and a
// strategy retrying empty results; each record's timeout ends it, with
// no result and no retry.
func TestAsyncRetryTimeout(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(modeName(ordered), func(t *testing.T) {
			calls := 0
			newFn := func() stream.AsyncFunction[int, int] {
				return stream.AsyncFunction[int, int]{
					AsyncInvoke: func(context.Context, int, stream.ResultFuture[int]) { calls++ },
					Timeout:     func(_ int, rf stream.ResultFuture[int]) { rf.Complete(nil) },
				}
			}
			retry := stream.FixedDelayRetry[int](2, 10*time.Millisecond).IfResult(stream.EmptyResult[int])
			h := asyncHarness(t, ordered, newFn, asyncTimeout, 4, stream.WithRetry(retry))
			for v := 1; v <= 3; v++ {
				must(t, h.ProcessElement(v, int64(v)))
			}
			must(t, h.SetProcessingTime(asyncTimeout.Milliseconds()))
			must(t, h.EndInput())
			expect(t, h)
			if n := h.NumProcessingTimeTimers(); n != 0 || calls != 3 {
				t.Fatalf("%d timers left after %d calls, want none after 3", n, calls)
			}
		})
	}
}

// TestAsyncTimeoutDuringBackoff: a record whose timeout fires while it
// waits for a retry is not retried; its Timeout decides.
func TestAsyncTimeoutDuringBackoff(t *testing.T) {
	calls := 0
	newFn := func() stream.AsyncFunction[int, int] {
		return stream.AsyncFunction[int, int]{
			AsyncInvoke: func(_ context.Context, _ int, rf stream.ResultFuture[int]) {
				calls++
				rf.Complete(nil)
			},
			Timeout: func(v int, rf stream.ResultFuture[int]) { rf.Complete([]int{-v}) },
		}
	}
	retry := stream.FixedDelayRetry[int](3, 2*asyncTimeout).IfResult(stream.EmptyResult[int])
	h := asyncHarness(t, true, newFn, asyncTimeout, 2, stream.WithRetry(retry))
	must(t, h.ProcessElement(7, 1))
	must(t, h.ProcessMail()) // empty: a retry waits for time 2000
	if n := h.NumProcessingTimeTimers(); n != 2 {
		t.Fatalf("%d timers, want the timeout and the retry", n)
	}
	must(t, h.SetProcessingTime(asyncTimeout.Milliseconds()))
	must(t, h.ProcessMail())
	expect(t, h, rec(-7, 1))
	must(t, h.SetProcessingTime(3*asyncTimeout.Milliseconds()))
	must(t, h.EndInput())
	if n := h.NumProcessingTimeTimers(); n != 0 || calls != 1 {
		t.Fatalf("%d timers left after %d calls, want none after 1", n, calls)
	}
	expect(t, h, rec(-7, 1))
}
