package stream

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// oneSplit is an unbounded source of one split, "busy" (an event per
// millisecond, rising timestamps, keys a and b in turn), given to the first
// reader that asks; the enumerator answers every other request with Later,
// as an enumerator that may yet discover splits (a watched directory) does.
type oneSplit struct{}

func (oneSplit) Boundedness() source.Boundedness { return source.Unbounded }

func (oneSplit) Enumerator(int, *source.EnumeratorState) (source.Enumerator, error) {
	return &oneEnum{}, nil
}

func (oneSplit) Reader(rc source.ReaderContext) (source.Reader[event], error) {
	return &oneReader{twoReader: twoReader{rc: rc}}, nil
}

type oneEnum struct {
	mu    sync.Mutex
	given bool
}

func (e *oneEnum) Request(int) (source.Grant, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.given {
		return source.Grant{Status: source.Later, Retry: time.Millisecond}, nil
	}
	e.given = true
	return source.Grant{Status: source.Assigned, Split: source.Split{ID: "busy", Len: -1}}, nil
}
func (e *oneEnum) AddSplitsBack([]source.Split)     {}
func (e *oneEnum) Snapshot() source.EnumeratorState { return source.EnumeratorState{} }

// oneReader asks for a split until it has one; without one it waits for
// its context (the task's periodic deadline) and asks again.
type oneReader struct{ twoReader }

func (r *oneReader) Next(ctx context.Context) (source.Batch[event], error) {
	if len(r.splits) == 0 {
		g, err := r.rc.Splits.Request(r.rc.Subtask)
		if err != nil {
			return source.Batch[event]{}, err
		}
		if g.Status != source.Assigned {
			<-ctx.Done()
			return source.Batch[event]{}, ctx.Err()
		}
		r.splits = append(r.splits, g.Split)
	}
	r.asked = true
	return r.twoReader.Next(ctx)
}

// timers runs oneSplit at parallelism p into a keyed process that registers
// an event-time timer at 30 per key and emits the key when it fires.
func timers(t *testing.T, p int, clock clock.Clock) (*Job, *Collected[string], *atomic.Int64) {
	t.Helper()
	env := New(Options{Parallelism: p, AutoWatermarkInterval: 5 * time.Millisecond, Clock: clock})
	strategy := watermark.ForMonotonousTimestamps[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
	var seen atomic.Int64
	src := FromSource[event](env, oneSplit{}, strategy, "one split")
	fired := KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, string] {
		return KeyedProcessFunction[string, event, string]{
			ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[string]) error {
				seen.Add(1)
				if ctx.CurrentWatermark() < 30 {
					ctx.RegisterEventTimeTimer(30)
				}
				return nil
			},
			OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[string]) error {
				out.Collect(ctx.CurrentKey())
				return nil
			},
		}
	})
	got := Collect(fired)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return j, got, &seen
}

func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func stopJob(t *testing.T, j *Job) {
	t.Helper()
	j.Cancel()
	if _, err := j.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: %v", err)
	}
}

// TestSourceWithoutSplitIsIdle: with one split and source parallelism 2,
// the subtask without a split marks itself idle (as Flink's SourceOperator),
// so the keyed subtasks downstream follow the other subtask's watermark and
// fire their event-time timers.
func TestSourceWithoutSplitIsIdle(t *testing.T) {
	j, got, _ := timers(t, 2, nil)
	ok := waitFor(func() bool { return len(got.Values()) >= 2 })
	stopJob(t, j)
	v := sorted(got.Values(), compareString)
	if !ok || len(v) != 2 || v[0] != "a" || v[1] != "b" {
		t.Fatalf("timers fired for %v, want a and b once each", v)
	}
}

// TestPeriodicWatermarksOnJobClock: a source asks its generators for
// watermarks every AutoWatermarkInterval of the job's clock: with a manual
// clock that stands still no watermark passes however long the wall clock
// runs, and one interval's advance lets the watermark through.
func TestPeriodicWatermarksOnJobClock(t *testing.T) {
	clock := clock.NewManual(time.UnixMilli(0))
	j, got, seen := timers(t, 1, clock)
	if !waitFor(func() bool { return seen.Load() >= 100 }) {
		stopJob(t, j)
		t.Fatalf("only %d events reached the keyed operator", seen.Load())
	}
	time.Sleep(50 * time.Millisecond) // ten wall-clock intervals
	if v := got.Values(); len(v) != 0 {
		stopJob(t, j)
		t.Fatalf("timers fired before the job's clock moved: %v", v)
	}
	clock.Advance(5 * time.Millisecond)
	ok := waitFor(func() bool { return len(got.Values()) >= 2 })
	stopJob(t, j)
	if v := sorted(got.Values(), compareString); !ok || len(v) != 2 || v[0] != "a" || v[1] != "b" {
		t.Fatalf("timers fired for %v after the clock moved, want a and b", v)
	}
}
