package stream

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

type event struct {
	Key string
	TS  int64
}

type windowCount struct {
	Key   string
	End   int64 // the timer: the window's last millisecond
	Count int   // events of the window
	Seq   int   // the key's windows fired before this one, plus one (value state)
}

// TestKeyedProcessEventTimers counts each key's events per 10 ms tumbling
// window with list and value state and an event-time timer at the window's
// last millisecond, over out-of-order input under a bounded out-of-orderness
// strategy whose bound covers the disorder: nothing is late, so the
// result is the hand-computed window counts whatever the watermarks'
// timing, and every output carries its timer's timestamp.
func TestKeyedProcessEventTimers(t *testing.T) {
	events := []event{
		{"a", 1}, {"b", 3}, {"a", 5}, {"a", 2}, {"b", 12}, {"a", 11}, {"b", 8},
		{"a", 9}, {"a", 25}, {"b", 14}, {"a", 19}, {"b", 30}, {"a", 27}, {"b", 29},
	}
	// the largest disorder: {b 14} after {a 25} (11)
	want := []windowCount{
		{"a", 9, 4, 1}, {"a", 19, 2, 2}, {"a", 29, 2, 3},
		{"b", 9, 2, 1}, {"b", 19, 2, 2}, {"b", 29, 1, 3}, {"b", 39, 1, 4},
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p, AutoWatermarkInterval: time.Millisecond})
			slow := iter.Seq[event](func(yield func(event) bool) {
				for i, e := range events {
					if i%3 == 2 {
						time.Sleep(2 * time.Millisecond) // let periodic watermarks pass mid-stream
					}
					if !yield(e) {
						return
					}
				}
			})
			strategy := watermark.ForBoundedOutOfOrderness[event](11 * time.Millisecond).
				WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
			src := FromSource(env, source.FromSeq(slow, source.BatchSize(1)), strategy, "events").SetParallelism(1)
			out := KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, windowCount] {
				var pending state.ListState[int64]
				var fired state.ValueState[int]
				return KeyedProcessFunction[string, event, windowCount]{
					Open: func(rc *KeyedRuntimeContext[string]) (err error) {
						if pending, err = GetListState(rc, state.ListDescriptor[int64]{Name: "pending"}); err != nil {
							return err
						}
						fired, err = GetState(rc, state.ValueDescriptor[int]{Name: "fired"})
						return err
					},
					ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[windowCount]) error {
						ts, ok := ctx.Timestamp()
						if !ok || ts != e.TS {
							return fmt.Errorf("timestamp %d %v, want %d", ts, ok, e.TS)
						}
						if ts <= ctx.CurrentWatermark() {
							return fmt.Errorf("%v late at watermark %d", e, ctx.CurrentWatermark())
						}
						pending.Add(ts)
						ctx.RegisterEventTimeTimer(ts - ts%10 + 9)
						return nil
					},
					OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[windowCount]) error {
						var keep []int64
						n := 0
						for _, x := range pending.Get() {
							if x <= ts {
								n++
							} else {
								keep = append(keep, x)
							}
						}
						pending.Update(keep)
						seq, _ := fired.Value()
						fired.Update(seq + 1)
						out.Collect(windowCount{ctx.CurrentKey(), ts, n, seq + 1})
						return nil
					},
				}
			})
			got := Collect(out)
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			recs := got.Records()
			var have []windowCount
			for _, r := range recs {
				if r.Timestamp != r.Value.End {
					t.Errorf("%v has timestamp %d, want its timer's %d", r.Value, r.Timestamp, r.Value.End)
				}
				have = append(have, r.Value)
			}
			slices.SortFunc(have, func(a, b windowCount) int {
				if a.Key != b.Key {
					return compare(a.Key, b.Key)
				}
				return compare(a.End, b.End)
			})
			if !slices.Equal(have, want) {
				t.Fatalf("got  %v\nwant %v", have, want)
			}
		})
	}
}

func compare[T int64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
