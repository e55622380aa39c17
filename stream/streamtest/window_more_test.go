package streamtest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/window"
)

// TestSessionWindowsWithEvictor: an evictor over merging windows keeps the
// merged session's elements in list state; a count evictor of 2 leaves the
// last two elements of the session to the function.
func TestSessionWindowsWithEvictor(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowProcess(stream.Window(keyed(in), a).Evictor(window.CountEvictorOf[window.TimeWindow](2)), sessionFn)
	})
	f.el("key1", 1, 0)
	f.el("key1", 2, 5000)
	f.el("key1", 4, 2500) // bridges the two sessions
	f.restore()
	f.el("key1", 8, 6000)
	f.wm(20000)
	// added in the order 1, 2, 4, 8: the last two are 4 and 8
	f.check(cmp3, r3("key1-12", 0, 9000, 8999), w3(20000))
}

// TestMergingTriggerRequired: a merging assigner refuses a trigger that
// cannot merge, as Flink's WindowedStream.trigger does.
func TestMergingTriggerRequired(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	delta := window.DeltaTriggerOf[tuple2, window.TimeWindow](1, func(a, b tuple2) float64 { return float64(b.F1 - a.F1) })
	_, err := New(Options{}, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Trigger(delta).Reduce(sumReducer)
	})
	if err == nil || !strings.Contains(err.Error(), "does not support merging") {
		t.Fatalf("err = %v", err)
	}
}

// TestContinuousProcessingTimeTrigger: global windows fired every second of
// processing time with what they hold so far.
func TestContinuousProcessingTimeTrigger(t *testing.T) {
	trig := window.ContinuousProcessingTimeTriggerOf[gw](time.Second)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), window.GlobalWindows()).Trigger(trig).Reduce(sumReducer)
	})
	f.proc(100)
	f.el("key1", 1, 0)
	f.el("key1", 1, 0)
	f.proc(999)
	f.check(cmp2)
	f.proc(1000)
	want := []Item[tuple2]{r2("key1", 2, maxTs)}
	f.check(cmp2, want...)
	f.el("key1", 1, 0)
	f.restore()
	f.proc(2500)
	want = append(want, r2("key1", 3, maxTs))
	f.check(cmp2, want...)
}

// TestProcessWindowState: a ProcessWindowFunction's per-window state
// survives the late firings of its window and is cleared by Clear at the
// cleanup time, while its global state counts every firing of the key, as
// Flink's ProcessWindowFunction.Context windowState and globalState.
func TestProcessWindowState(t *testing.T) {
	a := window.TumblingEventTimeWindows(2 * sec)
	type counters struct{ win, global int }
	cleared := 0
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[string] {
		ws := stream.Window(keyed(in), a).AllowedLateness(time.Second)
		return stream.WindowProcess(ws, func() stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, string] {
			var perWin *state.Value[string, window.TimeWindow, int]
			var global state.ValueState[int]
			return stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, string]{
				Open: func(rc *stream.KeyedRuntimeContext[string]) (err error) {
					if perWin, err = state.NewValue[string, window.TimeWindow, int](rc.Backend(), state.ValueDescriptor[int]{Name: "firings"}); err != nil {
						return err
					}
					global, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "all-firings"})
					return err
				},
				Process: func(k string, ctx *stream.WindowContext[string, window.TimeWindow], elems []tuple2, out stream.Collector[string]) error {
					perWin.SetNamespace(ctx.Window())
					n, _ := perWin.Value()
					perWin.Update(n + 1)
					g, _ := global.Value()
					global.Update(g + 1)
					out.Collect(k + ":" + itoa(len(elems)) + "/" + itoa(n+1) + "/" + itoa(g+1))
					return nil
				},
				Clear: func(ctx *stream.WindowContext[string, window.TimeWindow]) error {
					perWin.SetNamespace(ctx.Window())
					if _, ok := perWin.Value(); ok {
						cleared++
					}
					perWin.Clear()
					return nil
				},
			}
		})
	})
	f.el("k", 1, 500)
	f.wm(1999)         // fires [0, 2000): 1 element, firing 1 of the window, 1 of the key
	f.el("k", 1, 1500) // late but allowed: fires again at once
	f.el("k", 1, 2500) // the next window
	f.wm(2999)         // cleanup of [0, 2000) at 2999
	f.el("k", 1, 1000) // too late: its window is gone
	f.wm(4000)         // fires [2000, 4000)
	cmpS := func(a, b string) int { return strings.Compare(a, b) }
	wmS := func(w int64) Item[string] { return Item[string]{Watermark: w, IsWatermark: true} }
	recS := func(v string, ts int64) Item[string] {
		return Item[string]{Record: stream.Record[string]{Value: v, Timestamp: ts}}
	}
	f.check(cmpS, recS("k:1/1/1", 1999), wmS(1999), recS("k:2/2/2", 1999), wmS(2999), recS("k:1/1/3", 3999), wmS(4000))
	if cleared != 1 {
		t.Fatalf("Clear found per-window state %d times, want once (window [0, 2000))", cleared)
	}
}

// TestWindowRestoreAtParallelism2: a snapshot of a window harness with
// every key restores into the two subtasks of parallelism 2, which
// between them fire every window once with the same sums.
func TestWindowRestoreAtParallelism2(t *testing.T) {
	a := window.TumblingEventTimeWindows(sec)
	build := func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	}
	h, err := New(Options{MaxParallelism: 128}, build)
	must(t, err)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for i, k := range keys {
		for j := 0; j <= i; j++ {
			must(t, h.ProcessElement(tuple2{k, j + 1}, int64(100*j)))
		}
	}
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.Close())
	var got []string
	for sub := 0; sub < 2; sub++ {
		h2, err := New(Options{Parallelism: 2, Subtask: sub, MaxParallelism: 128}, build)
		must(t, err)
		must(t, h2.Restore(snap))
		must(t, h2.ProcessWatermark(5000))
		for _, r := range h2.Records() {
			got = append(got, r.Value.F0+":"+itoa(r.Value.F1)+"@"+itoa(int(r.Timestamp)))
		}
		must(t, h2.Close())
	}
	var want []string
	for i, k := range keys {
		want = append(want, k+":"+itoa((i+1)*(i+2)/2)+"@999")
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestDynamicGapSessions: event-time sessions whose gap each element sets
// (Flink's EventTimeSessionWindows.withDynamicGap): an element's window is
// [ts, ts + F1 seconds).
func TestDynamicGapSessions(t *testing.T) {
	a := window.DynamicEventTimeSessionWindows(func(v tuple2) time.Duration { return time.Duration(v.F1) * time.Second })
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowProcess(stream.Window[tuple2, string, window.TimeWindow](keyed(in), a), sessionFn)
	})
	f.el("key1", 1, 0)    // [0, 1000)
	f.el("key1", 3, 1000) // [1000, 4000): touches, merges into [0, 4000)
	f.el("key1", 1, 5000) // [5000, 6000): a new session
	f.restore()
	f.el("key2", 2, 500) // [500, 2500)
	f.wm(10000)
	f.check(cmp3, r3("key1-4", 0, 4000, 3999), r3("key2-2", 500, 2500, 2499), r3("key1-1", 5000, 6000, 5999), w3(10000))
}

// TestGlobalWindowsEndOfStream: global windows never fire by default, and
// fire once per key at the end of the input with the end-of-stream
// trigger (Flink's GlobalWindows.createWithEndOfStreamTrigger).
func TestGlobalWindowsEndOfStream(t *testing.T) {
	for _, eos := range []bool{false, true} {
		a := window.GlobalWindows()
		if eos {
			a = window.GlobalWindowsWithEndOfStreamTrigger()
		}
		f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
			return stream.Window(keyed(in), a).Reduce(sumReducer)
		})
		f.el("key1", 1, 10)
		f.el("key2", 2, 20)
		f.el("key1", 3, 30)
		f.wm(1000)
		f.restore()
		f.wm(maxTs)
		want := []Item[tuple2]{w2(1000)}
		if eos {
			want = append(want, r2("key1", 4, maxTs), r2("key2", 2, maxTs))
		}
		f.check(cmp2, append(want, w2(maxTs))...)
	}
}
