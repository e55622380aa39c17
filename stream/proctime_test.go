package stream

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// burst is an unbounded source whose subtask 0 emits events and then waits
// for the job's end.
type burst struct{ events []event }

func (burst) Boundedness() source.Boundedness { return source.Unbounded }
func (burst) Enumerator(int, *source.EnumeratorState) (source.Enumerator, error) {
	return &twoEnum{}, nil
}
func (b burst) Reader(rc source.ReaderContext) (source.Reader[event], error) {
	return &burstReader{events: b.events, sub: rc.Subtask}, nil
}

type burstReader struct {
	events []event
	sub    int
	done   bool
}

func (r *burstReader) Next(ctx context.Context) (source.Batch[event], error) {
	if r.sub == 0 && !r.done {
		r.done = true
		return source.Batch[event]{Split: "burst", Records: r.events}, nil
	}
	<-ctx.Done()
	return source.Batch[event]{}, ctx.Err()
}
func (r *burstReader) AddSplits([]source.Split)  {}
func (r *burstReader) Positions() []source.Split { return nil }
func (r *burstReader) Close() error              { return nil }

// TestProcessingTimeTimersInJob: keyed processing-time timers fire from the
// task loop's wait on the job's clock, a clock.Manual, only once the
// test moves it; their records carry no timestamp.
func TestProcessingTimeTimersInJob(t *testing.T) {
	start := time.UnixMilli(1_000_000)
	clock := clock.NewManual(start)
	env := New(Options{Parallelism: 1, Clock: clock})
	src := FromSource[event](env, burst{[]event{{"a", 1}, {"b", 2}, {"a", 3}}}, watermark.NoWatermarks[event](), "burst")
	var seen atomic.Int64
	fired := KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, string] {
		return KeyedProcessFunction[string, event, string]{
			ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[string]) error {
				ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + 1000)
				seen.Add(1)
				return nil
			},
			OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[string]) error {
				if ctx.TimeDomain() != ProcessingTime || ts != start.UnixMilli()+1000 {
					return errors.New("wrong timer")
				}
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
	defer func() {
		j.Cancel()
		_, _ = j.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for seen.Load() < 3 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := clock.AwaitWaiting(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if v := got.Records(); len(v) != 0 {
		t.Fatalf("timers fired before the clock moved: %v", v)
	}
	clock.Advance(999 * time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	if v := got.Records(); len(v) != 0 {
		t.Fatalf("timers fired before their time: %v", v)
	}
	clock.Advance(time.Millisecond)
	for len(got.Records()) < 2 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	recs := got.Records()
	if len(recs) != 2 {
		t.Fatalf("fired %v, want a and b", recs)
	}
	keys := sorted([]string{recs[0].Value, recs[1].Value}, compareString)
	if keys[0] != "a" || keys[1] != "b" || recs[0].HasTimestamp() || recs[1].HasTimestamp() {
		t.Fatalf("fired %v, want a and b without timestamps", recs)
	}
}
