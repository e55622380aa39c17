package stream

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// DefaultAsyncCapacity is Flink's default capacity of an async operator.
const DefaultAsyncCapacity = 100

// ErrAsyncTimeout is the error a call of an AsyncFunction without Timeout
// completes with when its timeout fires; it fails the job (Flink's
// TimeoutException "Async function call has timed out.").
var ErrAsyncTimeout = op.ErrAsyncTimeout

// AsyncFunction is Flink's AsyncFunction: AsyncInvoke starts a call for
// record v and returns; the call ends when something completes rf, on any
// goroutine, once. The function decides its concurrency: it may start a
// goroutine, hand v to a client with callbacks, or complete rf before it
// returns. ctx ends when the operator closes (the job finished, failed or
// was cancelled): calls in flight should stop then.
//
// Timeout, when set, is called on the subtask's goroutine when a record's
// timeout fires before its call completed, with the call's rf (a new one
// when the record was waiting for a retry): it may complete it with a
// default result, and whatever completes it first counts. Without it the
// call completes exceptionally with ErrAsyncTimeout, which fails the job.
// Open, when set, is called once per subtask before the first call, with
// the subtask's RuntimeContext; Close, when set, once at the end, on every
// path. The metrics of the context's group are updated from the subtask's
// goroutine only (Open, Timeout, Close), never from a call's own
// goroutines.
type AsyncFunction[I, O any] struct {
	Open        func(rc *RuntimeContext) error
	AsyncInvoke func(ctx context.Context, v I, rf ResultFuture[O])
	Timeout     func(v I, rf ResultFuture[O])
	Close       func() error
}

// ResultFuture is the handle of one call of an AsyncFunction (Flink's
// ResultFuture). Complete and CompleteExceptionally may be called from any
// goroutine; the first call of either counts, later ones are ignored, as
// are those of a call the operator no longer waits for (it was retried, or
// the job ended).
type ResultFuture[O any] struct{ f op.Future[O] }

// Complete completes the call with results, each emitted with the input
// record's timestamp; none emits nothing. The operator reads results
// until it emits them: do not change them after.
func (rf ResultFuture[O]) Complete(results []O) { rf.f.Complete(results) }

// CompleteExceptionally completes the call with err: a retry when the
// strategy says so, else the job fails with an error naming the record
// and wrapping err.
func (rf ResultFuture[O]) CompleteExceptionally(err error) { rf.f.CompleteExceptionally(err) }

// AsyncRetryStrategy is Flink's AsyncRetryStrategy: a call that completed
// with results RetryOnResult accepts, or exceptionally with an error
// RetryOnError accepts, is made again after Backoff(n), n the number of
// calls made for the record so far, while n is at most MaxAttempts (as
// Flink's canRetry: up to MaxAttempts retries). A strategy with neither
// predicate never retries. Once a record's timeout fired, or the input
// ended, its next completion is final.
type AsyncRetryStrategy[O any] struct {
	MaxAttempts   int
	Backoff       func(n int) time.Duration
	RetryOnResult func(results []O) bool
	RetryOnError  func(err error) bool
}

// FixedDelayRetry retries after delay each time, up to maxAttempts times
// (Flink's FixedDelayRetryStrategy); set the predicates with IfResult and
// IfError.
func FixedDelayRetry[O any](maxAttempts int, delay time.Duration) AsyncRetryStrategy[O] {
	return AsyncRetryStrategy[O]{MaxAttempts: maxAttempts, Backoff: func(int) time.Duration { return delay }}
}

// ExponentialBackoffRetry retries up to maxAttempts times, the first time
// after initial, each next one after multiplier times the delay before,
// at most maxDelay. Flink's ExponentialBackoffDelayRetryStrategy starts at
// initial times multiplier and keeps one delay for all the records of a
// subtask; here each record has its own.
func ExponentialBackoffRetry[O any](maxAttempts int, initial, maxDelay time.Duration, multiplier float64) AsyncRetryStrategy[O] {
	return AsyncRetryStrategy[O]{MaxAttempts: maxAttempts, Backoff: func(n int) time.Duration {
		d := float64(initial) * math.Pow(multiplier, float64(n-1))
		if d >= float64(maxDelay) {
			return maxDelay
		}
		return time.Duration(d)
	}}
}

// IfResult returns s retrying the calls whose results pred accepts.
func (s AsyncRetryStrategy[O]) IfResult(pred func(results []O) bool) AsyncRetryStrategy[O] {
	s.RetryOnResult = pred
	return s
}

// IfError returns s retrying the calls completed with an error pred
// accepts.
func (s AsyncRetryStrategy[O]) IfError(pred func(err error) bool) AsyncRetryStrategy[O] {
	s.RetryOnError = pred
	return s
}

// EmptyResult accepts no results (Flink's RetryPredicates.EMPTY_RESULT_PREDICATE).
func EmptyResult[O any](results []O) bool { return len(results) == 0 }

// AnyError accepts every error (Flink's RetryPredicates.HAS_EXCEPTION_PREDICATE).
func AnyError(error) bool { return true }

// AsyncOption is an option of OrderedWait and UnorderedWait.
type AsyncOption[O any] func(*asyncOptions[O])

type asyncOptions[O any] struct{ retry *AsyncRetryStrategy[O] }

// WithRetry retries calls as s says (Flink's orderedWaitWithRetry and
// unorderedWaitWithRetry); the timeout then covers all the attempts of a
// record and must be positive.
func WithRetry[O any](s AsyncRetryStrategy[O]) AsyncOption[O] {
	return func(o *asyncOptions[O]) { o.retry = &s }
}

// OrderedWait applies the async function newFn returns (once per
// subtask) to every record of ds and emits each record's results, with
// its timestamp, in the order of the records (Flink's
// AsyncDataStream.orderedWait). A record's call has timeout to complete
// (zero or less: no timeout), over all its attempts. At most capacity
// records are in flight per subtask, watermarks waiting to go on
// included: a full subtask stops reading its input (backpressure). A
// watermark goes on after the results of the records before it. On a
// checkpoint the records in flight and those completed but not emitted
// are stored; a restore calls the function for them again.
func OrderedWait[I, O any](ds DataStream[I], newFn func() AsyncFunction[I, O], timeout time.Duration, capacity int, opts ...AsyncOption[O]) DataStream[O] {
	return asyncWait(ds, newFn, timeout, capacity, true, opts)
}

// UnorderedWait is OrderedWait emitting each record's results as soon as
// its call completed (Flink's AsyncDataStream.unorderedWait), but never
// across a watermark: the results of the records before a watermark go
// out before it, those of the records after it after it.
func UnorderedWait[I, O any](ds DataStream[I], newFn func() AsyncFunction[I, O], timeout time.Duration, capacity int, opts ...AsyncOption[O]) DataStream[O] {
	return asyncWait(ds, newFn, timeout, capacity, false, opts)
}

func asyncWait[I, O any](ds DataStream[I], newFn func() AsyncFunction[I, O], timeout time.Duration, capacity int, ordered bool, opts []AsyncOption[O]) DataStream[O] {
	name := "UnorderedWait"
	if ordered {
		name = "OrderedWait"
	}
	n := addNode[O](ds.env, "AsyncWait", "AsyncWait", ds.edge())
	var o asyncOptions[O]
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := checkAsync(newFn, timeout, capacity, o.retry); err != nil {
		ds.env.fail(caller(2), fmt.Errorf("%s: %w", name, err))
	}
	cfg := op.AsyncConfig[O]{Ordered: ordered, Timeout: max(timeout, 0), Capacity: capacity}
	if r := o.retry; r != nil && (r.RetryOnResult != nil || r.RetryOnError != nil) {
		cfg.Retry = &op.AsyncRetry[O]{MaxAttempts: r.MaxAttempts, Backoff: r.Backoff, IfResult: r.RetryOnResult, IfError: r.RetryOnError}
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.AsyncInvoke == nil {
			return nil, nil, fmt.Errorf("%s: no AsyncInvoke", name)
		}
		fns := op.AsyncFns[I, O]{Open: opener(fn.Open, newRuntimeContext(b)), Close: fn.Close,
			Invoke: func(ctx context.Context, v I, f op.Future[O]) { fn.AsyncInvoke(ctx, v, ResultFuture[O]{f}) }}
		if fn.Timeout != nil {
			fns.Timeout = func(v I, f op.Future[O]) { fn.Timeout(v, ResultFuture[O]{f}) }
		}
		a := op.NewAsync(fns, cfg, core.OutOf[O](outs, ""), b.BatchSize())
		return []any{a}, a, nil
	}
	return stream[O](ds.env, n)
}

// checkAsync checks the arguments of OrderedWait and UnorderedWait.
func checkAsync[I, O any](newFn func() AsyncFunction[I, O], timeout time.Duration, capacity int, r *AsyncRetryStrategy[O]) error {
	switch {
	case newFn == nil:
		return fmt.Errorf("nil function")
	case capacity <= 0:
		return fmt.Errorf("capacity %d must be positive", capacity)
	case r == nil:
		return nil
	case timeout <= 0:
		return fmt.Errorf("a retry strategy needs a positive timeout, not %v", timeout)
	case r.MaxAttempts <= 0:
		return fmt.Errorf("retry: MaxAttempts %d must be positive", r.MaxAttempts)
	case r.Backoff == nil:
		return fmt.Errorf("retry: no Backoff")
	}
	return nil
}
