package stream

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// twoSplits is an unbounded source of two splits: "busy" emits an event
// per millisecond with rising timestamps and keys a and b in turn, "quiet"
// never emits. Subtask 0 gets busy, subtask 1 quiet.
// With oneReader, subtask 0 reads both splits (a reader holding two
// splits: one watermark generator each, combined by the subtask).
type twoSplits struct{ oneReader bool }

func (twoSplits) Boundedness() source.Boundedness { return source.Unbounded }

func (s twoSplits) Enumerator(int, *source.EnumeratorState) (source.Enumerator, error) {
	return &twoEnum{oneReader: s.oneReader}, nil
}

func (twoSplits) Reader(rc source.ReaderContext) (source.Reader[event], error) {
	return &twoReader{rc: rc}, nil
}

type twoEnum struct {
	mu        sync.Mutex
	oneReader bool
	given     [2]bool
}

func (e *twoEnum) Request(subtask int) (source.Grant, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := subtask
	if e.oneReader && subtask == 0 && e.given[0] {
		i = 1
	}
	if i > 1 || e.given[i] || (e.oneReader && subtask > 0) {
		return source.Grant{Status: source.NoMore}, nil
	}
	e.given[i] = true
	return source.Grant{Status: source.Assigned, Split: source.Split{ID: [2]string{"busy", "quiet"}[i], Len: -1}}, nil
}
func (e *twoEnum) AddSplitsBack([]source.Split)     {}
func (e *twoEnum) Snapshot() source.EnumeratorState { return source.EnumeratorState{} }

type twoReader struct {
	rc     source.ReaderContext
	splits []source.Split
	asked  bool
	split  *source.Split // the busy split, if held
	buf    [1]event
}

func (r *twoReader) Next(ctx context.Context) (source.Batch[event], error) {
	for !r.asked {
		g, err := r.rc.Splits.Request(r.rc.Subtask)
		if err != nil {
			return source.Batch[event]{}, err
		}
		if g.Status != source.Assigned {
			r.asked = true
			break
		}
		r.splits = append(r.splits, g.Split)
	}
	for i := range r.splits {
		if r.splits[i].ID == "busy" {
			r.split = &r.splits[i]
		}
	}
	if len(r.splits) == 0 {
		return source.Batch[event]{}, io.EOF // no split will come: the subtask ends
	}
	if r.split == nil {
		<-ctx.Done()
		return source.Batch[event]{}, ctx.Err()
	}
	select {
	case <-ctx.Done():
		return source.Batch[event]{}, ctx.Err()
	case <-time.After(time.Millisecond):
	}
	i := r.split.Offset
	r.buf[0] = event{Key: [2]string{"a", "b"}[i%2], TS: i}
	r.split.Offset++
	return source.Batch[event]{Split: r.split.ID, First: i, Records: r.buf[:]}, nil
}

func (r *twoReader) AddSplits(s []source.Split) { r.splits = append(r.splits, s...) }

func (r *twoReader) Positions() []source.Split { return append([]source.Split(nil), r.splits...) }

func (r *twoReader) Close() error { return nil }

// timerJob runs twoSplits at parallelism 2 into a keyed process (parallelism
// 2) that registers, for each key, an event-time timer at 30 and emits the
// key when it fires.
func timerJob(t *testing.T, idleness, oneReader bool) (*Job, *Collected[string], *atomic.Int64) {
	env := New(Options{Parallelism: 2, AutoWatermarkInterval: 5 * time.Millisecond})
	strategy := watermark.ForMonotonousTimestamps[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
	if idleness {
		strategy = strategy.WithIdleness(20 * time.Millisecond)
	}
	var seen atomic.Int64
	src := FromSource[event](env, twoSplits{oneReader}, strategy, "two splits")
	fired := KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, string] {
		return KeyedProcessFunction[string, event, string]{
			ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[string]) error {
				seen.Add(1)
				if ctx.CurrentWatermark() < 30 { // a timer in the past would fire at the next watermark
					ctx.RegisterEventTimeTimer(30)
				}
				return nil
			},
			OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[string]) error {
				if wm := ctx.CurrentWatermark(); wm < ts {
					return errors.New("timer fired before the watermark reached it")
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
	return j, got, &seen
}

// TestWatermarkIdleSplit: a split that emits nothing holds back the
// watermark of every keyed subtask downstream until idleness releases it;
// then the busy split's watermark alone fires the timers, across the keyBy.
func TestWatermarkIdleSplit(t *testing.T) {
	for _, one := range []bool{false, true} {
		name := "a split per subtask"
		if one {
			name = "one subtask reading both"
		}
		t.Run(name, func(t *testing.T) { idleSplit(t, one) })
	}
}

func idleSplit(t *testing.T, oneReader bool) {
	t.Run("held back", func(t *testing.T) {
		j, got, seen := timerJob(t, false, oneReader)
		deadline := time.Now().Add(10 * time.Second)
		for seen.Load() < 100 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		j.Cancel()
		if _, err := j.Wait(); err == nil {
			t.Fatal("a cancelled job returned no error")
		}
		if seen.Load() < 100 {
			t.Fatalf("only %d events reached the keyed operator", seen.Load())
		}
		if v := got.Values(); len(v) != 0 {
			t.Fatalf("timers fired with a silent split and no idleness: %v", v)
		}
	})
	t.Run("idle", func(t *testing.T) {
		j, got, _ := timerJob(t, true, oneReader)
		deadline := time.Now().Add(10 * time.Second)
		for len(got.Values()) < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		j.Cancel()
		_, err := j.Wait()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("wait: %v", err)
		}
		v := sorted(got.Values(), compareString)
		if len(v) != 2 || v[0] != "a" || v[1] != "b" {
			t.Fatalf("timers fired for %v, want a and b once each", v)
		}
	})
}
