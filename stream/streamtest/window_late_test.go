package streamtest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/window"
)

// TestLateness follows Flink's WindowOperatorTest.testLateness: a purging
// event-time trigger with 500 ms of allowed lateness fires a late element
// on its own.
func TestLateness(t *testing.T) {
	a := window.TumblingEventTimeWindows(2 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Trigger(window.PurgingTriggerOf[window.TimeWindow](window.EventTimeTrigger{})).
			AllowedLateness(500 * time.Millisecond).SideOutputLateData(lateTag).Reduce(sumReducer)
	})
	f.el("key2", 1, 500)
	f.wm(1500)
	f.el("key2", 1, 1300)
	f.wm(2300)
	// not dropped: the window's MaxTimestamp + lateness > the watermark
	f.el("key2", 1, 1997)
	f.wm(6000)
	// dropped: the window's MaxTimestamp + lateness < the watermark
	f.el("key2", 1, 1998)
	f.wm(7000)
	f.check(cmp2, w2(1500), r2("key2", 2, 1999), w2(2300), r2("key2", 1, 1999), w2(6000), w2(7000))
	f.checkLate(lr("key2", 1, 1998))
}

// TestCleanupTimeOverflow follows Flink's
// WindowOperatorTest.testCleanupTimeOverflow: the cleanup time of a window
// near the end of time does not wrap around.
func TestCleanupTimeOverflow(t *testing.T) {
	a := window.TumblingEventTimeWindows(1000 * time.Millisecond)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).AllowedLateness(2000 * time.Millisecond).Reduce(sumReducer)
	})
	ts := int64(math.MaxInt64 - 1750)
	ws := ok(a.AssignWindows(nil, ts, nil, nil))
	maxTs := ws[0].MaxTimestamp()
	if maxTs+2000 >= maxTs || maxTs <= math.MaxInt64-1500 {
		t.Fatalf("window %v does not overflow its cleanup time", ws[0])
	}
	f.el("key2", 1, ts)
	f.wm(math.MaxInt64 - 1500)
	f.wm(maxTs)
	f.check(cmp2, w2(math.MaxInt64-1500), r2("key2", 1, maxTs), w2(maxTs))
}

// TestDropDueToLatenessTumbling follows Flink's
// WindowOperatorTest.testDropDueToLatenessTumbling.
func TestDropDueToLatenessTumbling(t *testing.T) {
	a := window.TumblingEventTimeWindows(2 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	})
	f.el("key2", 1, 1000)
	f.wm(1985)
	f.el("key2", 1, 1980)
	f.wm(1999)
	f.el("key2", 1, 1998) // dropped as late
	f.el("key2", 1, 2001)
	f.wm(2999)
	f.wm(3999)
	f.check(cmp2, w2(1985), r2("key2", 2, 1999), w2(1999), w2(2999), r2("key2", 1, 3999), w2(3999))
}

// TestSideOutputDueToLatenessTumbling follows Flink's
// WindowOperatorTest.testSideOutputDueToLatenessTumbling.
func TestSideOutputDueToLatenessTumbling(t *testing.T) {
	a := window.TumblingEventTimeWindows(2 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).SideOutputLateData(lateTag).Reduce(sumReducer)
	})
	f.el("key2", 1, 1000)
	f.wm(1985)
	f.el("key2", 1, 1980)
	f.wm(1999)
	f.el("key2", 1, 1998)
	f.el("key2", 1, 2001)
	f.wm(2999)
	f.wm(3999)
	f.check(cmp2, w2(1985), r2("key2", 2, 1999), w2(1999), w2(2999), r2("key2", 1, 3999), w2(3999))
	f.checkLate(lr("key2", 1, 1998))
}

// slidingLateness is WindowOperatorTest.testDropDueToLatenessSliding and
// testSideOutputDueToLatenessSliding: an element late for one of its
// sliding windows goes into the others and is not late.
func slidingLateness(t *testing.T, side bool) {
	a := window.SlidingEventTimeWindows(3*sec, 1*sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		ws := stream.Window(keyed(in), a)
		if side {
			ws = ws.SideOutputLateData(lateTag)
		}
		return ws.Reduce(sumReducer)
	})
	f.el("key2", 1, 1000)
	f.wm(1999)
	f.el("key2", 1, 2000)
	f.wm(3000)
	f.el("key1", 1, 3001)
	f.el("key2", 1, 2400)
	f.el("key2", 1, 2400)
	f.el("key1", 1, 3001)
	f.el("key2", 1, 3900)
	f.wm(6000)
	f.el("key1", 1, 3001) // late
	f.wm(25000)
	f.check(cmp2, r2("key2", 1, 1999), w2(1999), r2("key2", 2, 2999), w2(3000),
		r2("key2", 5, 3999), r2("key1", 2, 3999), r2("key2", 4, 4999), r2("key1", 2, 4999),
		r2("key2", 1, 5999), r2("key1", 2, 5999), w2(6000), w2(25000))
	if side {
		f.checkLate(lr("key1", 1, 3001))
	} else {
		f.checkLate()
	}
}

// TestDropDueToLatenessSliding follows Flink's
// WindowOperatorTest.testDropDueToLatenessSliding.
func TestDropDueToLatenessSliding(t *testing.T) { slidingLateness(t, false) }

// TestSideOutputDueToLatenessSliding follows Flink's
// WindowOperatorTest.testSideOutputDueToLatenessSliding.
func TestSideOutputDueToLatenessSliding(t *testing.T) { slidingLateness(t, true) }

// sessionLateness drives WindowOperatorTest's testDropDueToLatenessSession*
// and testSideOutputDueToLatenessSession* cases up to the watermark 14600:
// sessions with gap 3 s, a reducing state and ReducedSessionWindowFunction.
func sessionLateness(t *testing.T, lateness time.Duration, purging bool) *fixture[tuple3] {
	a := window.EventTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		ws := stream.Window(keyed(in), a).AllowedLateness(lateness).SideOutputLateData(lateTag)
		if purging {
			ws = ws.Trigger(window.PurgingTriggerOf[window.TimeWindow](window.EventTimeTrigger{}))
		}
		return stream.WindowReduceProcess(ws, sumReducer, reducedSessionFn)
	})
	f.el("key2", 1, 1000)
	f.wm(1999)
	f.el("key2", 1, 2000)
	f.wm(4998)
	// not dropped: the session it joins ends after the watermark
	f.el("key2", 1, 4500)
	// a new session
	f.el("key2", 1, 8500)
	f.wm(7400)
	// this merges the two sessions into one
	f.el("key2", 1, 7000)
	f.wm(11501)
	// a new session
	f.el("key2", 1, 11600)
	f.wm(14600)
	return f
}

var sessionLatenessHead = []Item[tuple3]{w3(1999), w3(4998), w3(7400),
	r3("key2-5", 1000, 11500, 11499), w3(11501), r3("key2-1", 11600, 14600, 14599), w3(14600)}

func withHead(items ...Item[tuple3]) []Item[tuple3] {
	return append(append([]Item[tuple3]{}, sessionLatenessHead...), items...)
}

// TestDropDueToLatenessSessionZeroLatenessPurgingTrigger follows Flink's
// WindowOperatorTest.testDropDueToLatenessSessionZeroLatenessPurgingTrigger
// and testSideOutputDueToLatenessSessionZeroLatenessPurgingTrigger.
func TestDropDueToLatenessSessionZeroLatenessPurgingTrigger(t *testing.T) {
	f := sessionLateness(t, 0, true)
	f.el("key2", 1, 10000) // late
	f.el("key2", 1, 10100) // late too, and not merged with the one before
	f.el("key2", 1, 14500)
	f.wm(20000)
	f.wm(100000)
	f.check(cmp3, withHead(r3("key2-1", 14500, 17500, 17499), w3(20000), w3(100000))...)
	f.checkLate(lr("key2", 1, 10000), lr("key2", 1, 10100))
}

// TestDropDueToLatenessSessionZeroLateness follows Flink's
// WindowOperatorTest.testDropDueToLatenessSessionZeroLateness and
// testSideOutputDueToLatenessSessionZeroLateness: an accumulating trigger
// gives the same output with no lateness.
func TestDropDueToLatenessSessionZeroLateness(t *testing.T) {
	f := sessionLateness(t, 0, false)
	f.el("key2", 1, 10000) // late
	f.el("key2", 1, 14500)
	f.wm(20000)
	f.wm(100000)
	f.check(cmp3, withHead(r3("key2-1", 14500, 17500, 17499), w3(20000), w3(100000))...)
	f.checkLate(lr("key2", 1, 10000))
}

// TestDropDueToLatenessSessionWithLatenessPurgingTrigger follows Flink's
// WindowOperatorTest.testDropDueToLatenessSessionWithLatenessPurgingTrigger
// (release-1.20): the late element joins the purged session kept for the
// lateness, which fires at once with what the purge left.
func TestDropDueToLatenessSessionWithLatenessPurgingTrigger(t *testing.T) {
	f := sessionLateness(t, 10*time.Millisecond, true)
	f.el("key2", 1, 10000)
	want := withHead(r3("key2-1", 10000, 14600, 14599))
	f.check(cmp3, want...)
	f.el("key2", 1, 14500)
	f.wm(20000)
	f.wm(100000)
	f.check(cmp3, append(want, r3("key2-1", 10000, 17500, 17499), w3(20000), w3(100000))...)
	f.checkLate()
}

// TestDropDueToLatenessSessionWithLateness follows Flink's
// WindowOperatorTest.testDropDueToLatenessSessionWithLateness: with an
// accumulating trigger the late element merges into the kept session,
// which fires at once.
func TestDropDueToLatenessSessionWithLateness(t *testing.T) {
	f := sessionLateness(t, 10*time.Millisecond, false)
	f.el("key2", 1, 10000)
	f.el("key2", 1, 14500)
	want := withHead(r3("key2-2", 10000, 14600, 14599))
	f.check(cmp3, want...)
	f.wm(20000)
	want = append(want, r3("key2-3", 10000, 17500, 17499), w3(20000))
	f.wm(100000)
	want = append(want, w3(100000))
	f.check(cmp3, want...)
	f.checkLate()
}

// TestNotSideOutputDueToLatenessSessionWithHugeLatenessPurgingTrigger
// follows Flink's WindowOperatorTest (release-1.20) test of that name.
func TestNotSideOutputDueToLatenessSessionWithHugeLatenessPurgingTrigger(t *testing.T) {
	f := sessionLateness(t, 10*sec, true)
	f.el("key2", 1, 10000)
	want := withHead(r3("key2-1", 1000, 14600, 14599))
	f.check(cmp3, want...)
	f.el("key2", 1, 14500)
	f.wm(20000)
	f.wm(100000)
	want = append(want, r3("key2-1", 1000, 17500, 17499), w3(20000), w3(100000))
	f.check(cmp3, want...)
	f.checkLate()
}

// TestDropDueToLatenessSessionWithHugeLateness follows Flink's
// WindowOperatorTest.testDropDueToLatenessSessionWithHugeLateness: the
// merged session is late already and fires at once.
func TestDropDueToLatenessSessionWithHugeLateness(t *testing.T) {
	f := sessionLateness(t, 10*sec, false)
	f.el("key2", 1, 10000)
	want := withHead(r3("key2-7", 1000, 14600, 14599))
	f.check(cmp3, want...)
	f.el("key2", 1, 14500)
	f.wm(20000)
	f.wm(100000)
	want = append(want, r3("key2-8", 1000, 17500, 17499), w3(20000), w3(100000))
	f.check(cmp3, want...)
}

// eventTimeTriggerAccumGC is WindowOperatorTest's EventTimeTriggerAccumGC:
// it fires at the window's end and again at the end plus cleanupTime,
// purging both times.
type eventTimeTriggerAccumGC struct {
	window.EventTimeTrigger
	cleanup int64
}

func (g eventTimeTriggerAccumGC) OnElement(_ any, _ int64, w window.TimeWindow, ctx window.TriggerContext) (window.TriggerResult, error) {
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return window.Fire, nil
	}
	ctx.RegisterEventTimeTimer(w.MaxTimestamp())
	return window.Continue, nil
}

func (g eventTimeTriggerAccumGC) OnEventTime(time int64, w window.TimeWindow, _ window.TriggerContext) (window.TriggerResult, error) {
	if time == w.MaxTimestamp() || time == w.MaxTimestamp()+g.cleanup {
		return window.FireAndPurge, nil
	}
	return window.Continue, nil
}

// TestCleanupTimerWithEmptyListStateForTumblingWindows2 follows Flink's
// WindowOperatorTest.testCleanupTimerWithEmptyListStateForTumblingWindows2:
// the cleanup timer of a purged window emits nothing.
func TestCleanupTimerWithEmptyListStateForTumblingWindows2(t *testing.T) {
	a := window.TumblingEventTimeWindows(2 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[string] {
		ws := stream.Window(keyed(in), a).Trigger(eventTimeTriggerAccumGC{cleanup: 100}).AllowedLateness(100 * time.Millisecond)
		return stream.WindowProcess(ws, func() stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, string] {
			return stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, string]{
				Process: func(_ string, _ *stream.WindowContext[string, window.TimeWindow], elems []tuple2, out stream.Collector[string]) error {
					s := "GOT: "
					for i, e := range elems {
						if i > 0 {
							s += ","
						}
						s += "(" + e.F0 + "," + itoa(e.F1) + ")"
					}
					out.Collect(s)
					return nil
				},
			}
		})
	})
	f.el("key2", 1, 1000)
	f.wm(1599)
	f.wm(1999)
	f.wm(2100)
	f.wm(5000)
	wmS := func(w int64) Item[string] { return Item[string]{Watermark: w, IsWatermark: true} }
	f.check(func(a, b string) int { return compareStrings(a, b) }, wmS(1599),
		Item[string]{Record: stream.Record[string]{Value: "GOT: (key2,1)", Timestamp: 1999}}, wmS(1999), wmS(2100), wmS(5000))
}

// cleanupTumbling is WindowOperatorTest's testCleanupTimerWithEmpty*State
// ForTumblingWindows: lateness 1 ms, the cleanup timer at 2000 emits
// nothing.
func cleanupTumbling(t *testing.T, build func(ws stream.WindowedStream[tuple2, string, window.TimeWindow]) stream.DataStream[tuple2]) {
	a := window.TumblingEventTimeWindows(2 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return build(stream.Window(keyed(in), a).AllowedLateness(time.Millisecond))
	})
	f.el("key2", 1, 1000)
	f.wm(1599)
	f.wm(1999)
	f.wm(2000)
	f.wm(5000)
	f.check(cmp2, w2(1599), r2("key2", 1, 1999), w2(1999), w2(2000), w2(5000))
}

// TestCleanupTimerWithEmptyReduceStateForTumblingWindows follows Flink's
// WindowOperatorTest.testCleanupTimerWithEmptyReduceStateForTumblingWindows.
func TestCleanupTimerWithEmptyReduceStateForTumblingWindows(t *testing.T) {
	cleanupTumbling(t, func(ws stream.WindowedStream[tuple2, string, window.TimeWindow]) stream.DataStream[tuple2] {
		return ws.Reduce(sumReducer)
	})
}

// TestCleanupTimerWithEmptyListStateForTumblingWindows follows Flink's
// WindowOperatorTest.testCleanupTimerWithEmptyListStateForTumblingWindows.
func TestCleanupTimerWithEmptyListStateForTumblingWindows(t *testing.T) {
	cleanupTumbling(t, func(ws stream.WindowedStream[tuple2, string, window.TimeWindow]) stream.DataStream[tuple2] {
		return stream.WindowProcess(ws, passThroughFn)
	})
}

func passThroughFn() stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, tuple2] {
	return stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, tuple2]{
		Process: func(_ string, _ *stream.WindowContext[string, window.TimeWindow], elems []tuple2, out stream.Collector[tuple2]) error {
			for _, e := range elems {
				out.Collect(e)
			}
			return nil
		},
	}
}

// TestCleanupTimerWithEmptyListStateForSessionWindows follows Flink's
// WindowOperatorTest.testCleanupTimerWithEmptyListStateForSessionWindows.
func TestCleanupTimerWithEmptyListStateForSessionWindows(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a).AllowedLateness(10*time.Millisecond), passThroughFn)
	})
	f.el("key2", 1, 1000)
	f.wm(4998)
	f.wm(14600)
	f.check(cmp2, r2("key2", 1, 3999), w2(4998), w2(14600))
}

// TestCleanupTimerWithEmptyReduceStateForSessionWindows follows Flink's
// WindowOperatorTest.testCleanupTimerWithEmptyReduceStateForSessionWindows.
func TestCleanupTimerWithEmptyReduceStateForSessionWindows(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowReduceProcess(stream.Window(keyed(in), a).AllowedLateness(10*time.Millisecond), sumReducer, reducedSessionFn)
	})
	f.el("key2", 1, 1000)
	f.wm(4998)
	f.wm(14600)
	f.check(cmp3, r3("key2-1", 1000, 4000, 3999), w3(4998), w3(14600))
}

// TestEventTimeTumblingWindowsWithOffset follows Flink's
// WindowOperatorTest.testEventTimeTumblingWindowsWithOffset.
func TestEventTimeTumblingWindowsWithOffset(t *testing.T) {
	a := window.TumblingEventTimeWindows(2000*time.Millisecond, 100*time.Millisecond)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a), passThroughFn)
	})
	f.el("key2", 1, 1000)
	f.wm(1985)
	f.el("key2", 2, 1980)
	f.el("key2", 3, 1998)
	f.el("key2", 4, 2001)
	f.wm(2010) // does not fire, as it would without the offset
	f.wm(2999)
	f.wm(3999)
	f.check(cmp2, w2(1985), w2(2010), r2("key2", 1, 2099), r2("key2", 2, 2099), r2("key2", 3, 2099), r2("key2", 4, 2099), w2(2999), w2(3999))
}

// TestEventTimeSlidingWindowsWithOffset follows Flink's
// WindowOperatorTest.testEventTimeSlidingWindowsWithOffset.
func TestEventTimeSlidingWindowsWithOffset(t *testing.T) {
	a := window.SlidingEventTimeWindows(2000*time.Millisecond, 500*time.Millisecond, 10*time.Millisecond)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a), passThroughFn)
	})
	f.el("key2", 1, 333)
	f.wm(6666)
	f.check(cmp2, r2("key2", 1, 509), r2("key2", 1, 1009), r2("key2", 1, 1509), r2("key2", 1, 2009), w2(6666))
}

// TestProcessingTimeTumblingWindows follows Flink's
// WindowOperatorTest.testProcessingTimeTumblingWindows.
func TestProcessingTimeTumblingWindows(t *testing.T) {
	a := window.TumblingProcessingTimeWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	})
	f.proc(3)
	f.el("key2", 1, math.MaxInt64) // timestamps are ignored
	f.el("key2", 1, 7000)
	f.el("key2", 1, 7000)
	f.el("key1", 1, 7000)
	f.el("key1", 1, 7000)
	f.proc(5000)
	want := []Item[tuple2]{r2("key2", 3, 2999), r2("key1", 2, 2999)}
	f.check(cmp2, want...)
	f.el("key1", 1, 7000)
	f.el("key1", 1, 7000)
	f.el("key1", 1, 7000)
	f.proc(7000)
	f.check(cmp2, append(want, r2("key1", 3, 5999))...)
}

// TestProcessingTimeWindowsAtEndOfInput: when the input ends, the
// processing-time windows still open fire, each as at its own end (Flink
// drops them): tumbling windows once, sliding windows in every window
// that holds an element.
func TestProcessingTimeWindowsAtEndOfInput(t *testing.T) {
	for _, c := range []struct {
		name string
		a    window.Assigner[window.TimeWindow]
		want []Item[tuple2]
	}{
		{"tumbling", window.TumblingProcessingTimeWindows(3 * sec),
			[]Item[tuple2]{r2("key1", 3, 2999), r2("key2", 1, 2999), r2("key1", 1, 5999)}},
		{"sliding", window.SlidingProcessingTimeWindows(2*sec, 1*sec),
			[]Item[tuple2]{r2("key1", 3, 1999), r2("key2", 1, 1999), r2("key1", 3, 2999), r2("key2", 1, 2999),
				r2("key1", 1, 4999), r2("key1", 1, 5999)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
				return stream.Window(keyed(in), c.a).Reduce(sumReducer)
			})
			f.proc(1500)
			f.el("key1", 1, 0)
			f.el("key1", 2, 0)
			f.el("key2", 1, 0)
			f.proc(2500) // sliding: [0,2000) fires
			f.proc(4000) // tumbling: [0,3000) fires; sliding: [1000,3000)
			f.el("key1", 1, 0)
			must(t, f.h.EndInput())
			f.check(cmp2, c.want...)
		})
	}
}

// TestProcessingTimeSlidingWindows follows Flink's
// WindowOperatorTest.testProcessingTimeSlidingWindows.
func TestProcessingTimeSlidingWindows(t *testing.T) {
	a := window.SlidingProcessingTimeWindows(3*sec, 1*sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	})
	f.proc(3)
	f.el("key2", 1, math.MaxInt64)
	f.proc(1000)
	want := []Item[tuple2]{r2("key2", 1, 999)}
	f.check(cmp2, want...)
	f.el("key2", 1, math.MaxInt64)
	f.el("key2", 1, math.MaxInt64)
	f.proc(2000)
	want = append(want, r2("key2", 3, 1999))
	f.check(cmp2, want...)
	f.el("key1", 1, math.MaxInt64)
	f.el("key1", 1, math.MaxInt64)
	f.proc(3000)
	want = append(want, r2("key2", 3, 2999), r2("key1", 2, 2999))
	f.check(cmp2, want...)
	f.el("key1", 1, math.MaxInt64)
	f.el("key1", 1, math.MaxInt64)
	f.el("key1", 1, math.MaxInt64)
	f.proc(7000)
	want = append(want, r2("key2", 2, 3999), r2("key1", 5, 3999), r2("key1", 5, 4999), r2("key1", 3, 5999))
	f.check(cmp2, want...)
}

// TestProcessingTimeSessionWindows follows Flink's
// WindowOperatorTest.testProcessingTimeSessionWindows.
func TestProcessingTimeSessionWindows(t *testing.T) {
	a := window.ProcessingTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	})
	f.proc(3)
	f.el("key2", 1, 1)
	f.proc(1000)
	f.el("key2", 1, 1002)
	f.proc(5000)
	want := []Item[tuple2]{r2("key2", 2, 3999)}
	f.check(cmp2, want...)
	f.el("key2", 1, 5000)
	f.el("key2", 1, 5000)
	f.el("key1", 1, 5000)
	f.el("key1", 1, 5000)
	f.el("key1", 1, 5000)
	f.proc(10000)
	f.check(cmp2, append(want, r2("key2", 2, 7999), r2("key1", 3, 7999))...)
}

// TestProcessingTimeTumblingWindowsWithOffset follows Flink's
// WindowOperatorTest.testProcessingTimeTumblingWindowsWithOffset.
func TestProcessingTimeTumblingWindowsWithOffset(t *testing.T) {
	a := window.TumblingProcessingTimeWindows(3000*time.Millisecond, 1000*time.Millisecond)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a), passThroughFn)
	})
	f.proc(3)
	f.el("key2", 1, math.MaxInt64)
	f.el("key2", 1, 7000)
	f.el("key2", 1, 7000)
	f.el("key1", 1, 7000)
	f.el("key1", 1, 7000)
	f.proc(5000)
	want := []Item[tuple2]{r2("key2", 1, 999), r2("key2", 1, 999), r2("key2", 1, 999), r2("key1", 1, 999), r2("key1", 1, 999)}
	f.check(cmp2, want...)
	f.el("key1", 1, 7000)
	f.el("key1", 1, 7000)
	f.el("key1", 1, 7000)
	f.proc(7000)
	f.check(cmp2, append(want, r2("key1", 1, 6999), r2("key1", 1, 6999), r2("key1", 1, 6999))...)
}

// TestProcessingTimeSlidingWindowsWithOffset follows Flink's
// WindowOperatorTest.testProcessingTimeSlidingWindowsWithOffset.
func TestProcessingTimeSlidingWindowsWithOffset(t *testing.T) {
	a := window.SlidingProcessingTimeWindows(3000*time.Millisecond, 1000*time.Millisecond, 10*time.Millisecond)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a), passThroughFn)
	})
	f.proc(3)
	f.el("key2", 1, math.MaxInt64)
	f.proc(1111)
	f.el("key2", 2, math.MinInt64)
	f.proc(2222)
	f.check(cmp2, r2("key2", 1, 9), r2("key2", 1, 1009), r2("key2", 1, 2009), r2("key2", 2, 2009))
}

// TestLateAfterRestore: an element late before a snapshot is late after a
// restore from it, as in a run that did not fail: the window operator's
// watermark is part of its snapshot. Flink's WindowOperator restores its
// timers but not the watermark, so the replayed element would open the
// window again and fire it a second time; weir drops it (here, to the late
// side output), for tumbling and session windows.
func TestLateAfterRestore(t *testing.T) {
	for _, c := range []struct {
		name string
		a    window.Assigner[window.TimeWindow]
	}{
		{"tumbling", window.TumblingEventTimeWindows(2 * sec)},
		{"session", window.EventTimeSessionWindows(2 * sec)},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(restore bool) ([]Item[tuple2], []stream.Record[tuple2]) {
				f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
					return stream.Window(keyed(in), c.a).SideOutputLateData(lateTag).Reduce(sumReducer)
				})
				f.el("key2", 1, 1000)
				f.wm(3500) // fires the window of 1000 and drops its state
				if restore {
					f.restore()
				}
				f.el("key2", 1, 1500) // late: the watermark passed its window
				f.el("key2", 1, 4000)
				f.wm(9000)
				f.collect()
				return f.out, append(f.late, mustSide(f.t, f.h, lateTag)...)
			}
			want, wantLate := run(false)
			got, gotLate := run(true)
			if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotLate) != fmt.Sprint(wantLate) {
				t.Fatalf("after a restore: %v, late %v; without: %v, late %v", got, gotLate, want, wantLate)
			}
			if len(wantLate) != 1 || wantLate[0].Timestamp != 1500 {
				t.Fatalf("late %v, want the element at 1500", wantLate)
			}
		})
	}
}
