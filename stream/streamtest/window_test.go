package streamtest

import (
	"math"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/window"
)

const sec = time.Second

func keyed(in stream.DataStream[tuple2]) stream.KeyedStream[tuple2, string] {
	return stream.KeyBy(in, key0)
}

// slidingEventTime is WindowOperatorTest.testSlidingEventTimeWindows: the
// same records and watermarks for the reduce and the apply variants, with
// a snapshot and restore after the watermark 2999.
func slidingEventTime(t *testing.T, f *fixture[tuple2]) {
	f.el("key2", 1, 3999)
	f.el("key2", 1, 3000)
	f.el("key1", 1, 20)
	f.el("key1", 1, 0)
	f.el("key1", 1, 999)
	f.el("key2", 1, 1998)
	f.el("key2", 1, 1999)
	f.el("key2", 1, 1000)
	want := []Item[tuple2]{}
	f.wm(999)
	want = append(want, r2("key1", 3, 999), w2(999))
	f.check(cmp2, want...)
	f.wm(1999)
	want = append(want, r2("key1", 3, 1999), r2("key2", 3, 1999), w2(1999))
	f.check(cmp2, want...)
	f.wm(2999)
	want = append(want, r2("key1", 3, 2999), r2("key2", 3, 2999), w2(2999))
	f.check(cmp2, want...)
	f.restore()
	f.wm(3999)
	want = append(want, r2("key2", 5, 3999), w2(3999))
	f.check(cmp2, want...)
	f.wm(4999)
	want = append(want, r2("key2", 2, 4999), w2(4999))
	f.check(cmp2, want...)
	f.wm(5999)
	want = append(want, r2("key2", 2, 5999), w2(5999))
	f.check(cmp2, want...)
	f.wm(6999)
	f.wm(7999)
	want = append(want, w2(6999), w2(7999))
	f.check(cmp2, want...)
}

// TestSlidingEventTimeWindowsReduce follows Flink's
// WindowOperatorTest.testSlidingEventTimeWindowsReduce.
func TestSlidingEventTimeWindowsReduce(t *testing.T) {
	a := window.SlidingEventTimeWindows(3*sec, 1*sec)
	slidingEventTime(t, newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	}))
}

// TestSlidingEventTimeWindowsApply follows Flink's
// WindowOperatorTest.testSlidingEventTimeWindowsApply.
func TestSlidingEventTimeWindowsApply(t *testing.T) {
	a := window.SlidingEventTimeWindows(3*sec, 1*sec)
	slidingEventTime(t, newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a), richSum[window.TimeWindow])
	}))
}

// tumblingEventTime is WindowOperatorTest.testTumblingEventTimeWindows,
// with a snapshot and restore after the watermark 1999.
func tumblingEventTime(t *testing.T, f *fixture[tuple2]) {
	f.el("key2", 1, 3999)
	f.el("key2", 1, 3000)
	f.el("key1", 1, 20)
	f.el("key1", 1, 0)
	f.el("key1", 1, 999)
	f.el("key2", 1, 1998)
	f.el("key2", 1, 1999)
	f.el("key2", 1, 1000)
	f.wm(999)
	want := []Item[tuple2]{w2(999)}
	f.check(cmp2, want...)
	f.wm(1999)
	want = append(want, w2(1999))
	f.check(cmp2, want...)
	f.restore()
	f.wm(2999)
	want = append(want, r2("key1", 3, 2999), r2("key2", 3, 2999), w2(2999))
	f.check(cmp2, want...)
	f.wm(3999)
	want = append(want, w2(3999))
	f.wm(4999)
	want = append(want, w2(4999))
	f.wm(5999)
	want = append(want, r2("key2", 2, 5999), w2(5999))
	f.check(cmp2, want...)
	f.wm(6999)
	f.wm(7999)
	want = append(want, w2(6999), w2(7999))
	f.check(cmp2, want...)
}

// TestTumblingEventTimeWindowsReduce follows Flink's
// WindowOperatorTest.testTumblingEventTimeWindowsReduce.
func TestTumblingEventTimeWindowsReduce(t *testing.T) {
	a := window.TumblingEventTimeWindows(3 * sec)
	tumblingEventTime(t, newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), a).Reduce(sumReducer)
	}))
}

// TestTumblingEventTimeWindowsApply follows Flink's
// WindowOperatorTest.testTumblingEventTimeWindowsApply.
func TestTumblingEventTimeWindowsApply(t *testing.T) {
	a := window.TumblingEventTimeWindows(3 * sec)
	tumblingEventTime(t, newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), a), richSum[window.TimeWindow])
	}))
}

// TestSessionWindows follows Flink's WindowOperatorTest.testSessionWindows.
func TestSessionWindows(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowProcess(stream.Window(keyed(in), a), sessionFn)
	})
	f.el("key2", 1, 0)
	f.el("key2", 2, 1000)
	f.el("key2", 3, 2500)
	f.el("key1", 1, 10)
	f.el("key1", 2, 1000)
	f.restore()
	f.el("key1", 3, 2500)
	f.el("key2", 4, 5501)
	f.el("key2", 5, 6000)
	f.el("key2", 5, 6000)
	f.el("key2", 6, 6050)
	f.wm(12000)
	want := []Item[tuple3]{r3("key1-6", 10, 5500, 5499), r3("key2-6", 0, 5500, 5499), r3("key2-20", 5501, 9050, 9049), w3(12000)}
	f.el("key2", 10, 15000)
	f.el("key2", 20, 15000)
	f.wm(17999)
	want = append(want, r3("key2-30", 15000, 18000, 17999), w3(17999))
	f.check(cmp3, want...)
}

// TestReduceSessionWindows follows Flink's
// WindowOperatorTest.testReduceSessionWindows (an incremental reduce with
// a window function).
func TestReduceSessionWindows(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowReduceProcess(stream.Window(keyed(in), a), sumReducer, reducedSessionFn)
	})
	f.el("key2", 1, 0)
	f.el("key2", 2, 1000)
	f.el("key2", 3, 2500)
	f.restore()
	f.el("key1", 1, 10)
	f.el("key1", 2, 1000)
	f.el("key1", 3, 2500)
	f.el("key2", 4, 5501)
	f.el("key2", 5, 6000)
	f.el("key2", 5, 6000)
	f.el("key2", 6, 6050)
	f.wm(12000)
	want := []Item[tuple3]{r3("key1-6", 10, 5500, 5499), r3("key2-6", 0, 5500, 5499), r3("key2-20", 5501, 9050, 9049), w3(12000)}
	f.el("key2", 10, 15000)
	f.el("key2", 20, 15000)
	f.wm(17999)
	want = append(want, r3("key2-30", 15000, 18000, 17999), w3(17999))
	f.check(cmp3, want...)
}

// TestSessionWindowsWithCountTrigger follows Flink's
// WindowOperatorTest.testSessionWindowsWithCountTrigger: the count of
// merged sessions adds up.
func TestSessionWindowsWithCountTrigger(t *testing.T) {
	a := window.EventTimeSessionWindows(3 * sec)
	count := window.CountTriggerOf[window.TimeWindow](4)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowProcess(stream.Window(keyed(in), a).Trigger(window.PurgingTriggerOf[window.TimeWindow](count)), sessionFn)
	})
	f.el("key2", 1, 0)
	f.el("key2", 2, 1000)
	f.el("key2", 3, 2500)
	f.el("key2", 4, 3500)
	f.el("key1", 1, 10)
	f.el("key1", 2, 1000)
	f.restore()
	f.el("key1", 3, 2500)
	f.el("key1", 1, 6000)
	f.el("key1", 2, 6500)
	f.el("key1", 3, 7000)
	want := []Item[tuple3]{r3("key2-10", 0, 6500, 6499)}
	f.check(cmp3, want...)
	// an element merging the two key1 sessions: their count is 6, it fires
	f.el("key1", 10, 4500)
	want = append(want, r3("key1-22", 10, 10000, 9999))
	f.check(cmp3, want...)
}

// pointSessions is WindowOperatorTest's PointSessionWindows: an element
// with 33 gets the point window [ts, ts).
type pointSessions struct{ *window.Sessions[any] }

func (p pointSessions) AssignWindows(elem any, ts int64, ctx window.AssignerContext, dst []window.TimeWindow) ([]window.TimeWindow, error) {
	if v := elem.(*tuple2); v.F1 == 33 {
		return append(dst, window.TimeWindow{Start: ts, End: ts}), nil
	}
	return p.Sessions.AssignWindows(elem, ts, ctx, dst)
}

// TestPointSessions follows Flink's WindowOperatorTest.testPointSessions.
func TestPointSessions(t *testing.T) {
	a := pointSessions{window.EventTimeSessionWindows(3 * sec)}
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple3] {
		return stream.WindowProcess(stream.Window[tuple2, string, window.TimeWindow](keyed(in), a), sessionFn)
	})
	f.el("key2", 1, 0)
	f.el("key2", 33, 1000)
	f.restore()
	f.el("key2", 33, 2500)
	f.el("key1", 1, 10)
	f.el("key1", 2, 1000)
	f.el("key1", 33, 2500)
	f.wm(12000)
	f.check(cmp3, r3("key1-36", 10, 4000, 3999), r3("key2-67", 0, 3000, 2999), w3(12000))
}

// TestContinuousWatermarkTrigger follows Flink's
// WindowOperatorTest.testContinuousWatermarkTrigger: global windows fired
// every 3 s of event time.
func TestContinuousWatermarkTrigger(t *testing.T) {
	trig := window.ContinuousEventTimeTriggerOf[window.GlobalWindow](3 * sec)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), window.GlobalWindows()).Trigger(trig).Reduce(sumReducer)
	})
	f.el("key1", 1, 0)
	f.el("key2", 1, 3000)
	f.el("key2", 1, 3999)
	f.el("key1", 1, 20)
	f.el("key1", 1, 999)
	f.el("key2", 1, 1998)
	f.el("key2", 1, 1999)
	f.el("key2", 1, 1000)
	f.wm(1000)
	want := []Item[tuple2]{w2(1000)}
	f.check(cmp2, want...)
	f.wm(2000)
	want = append(want, w2(2000))
	f.wm(3000)
	want = append(want, r2("key1", 3, math.MaxInt64), w2(3000))
	f.check(cmp2, want...)
	f.wm(4000)
	f.wm(5000)
	want = append(want, w2(4000), w2(5000))
	f.wm(6000)
	want = append(want, r2("key1", 3, math.MaxInt64), r2("key2", 5, math.MaxInt64), w2(6000))
	f.check(cmp2, want...)
	f.wm(7000)
	f.wm(8000)
	want = append(want, w2(7000), w2(8000))
	f.check(cmp2, want...)
}

// TestCountTrigger follows Flink's WindowOperatorTest.testCountTrigger:
// global windows with a purging count trigger, across a restore.
func TestCountTrigger(t *testing.T) {
	count := window.CountTriggerOf[window.GlobalWindow](4)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.Window(keyed(in), window.GlobalWindows()).Trigger(window.PurgingTriggerOf[window.GlobalWindow](count)).Reduce(sumReducer)
	})
	f.el("key2", 1, 3000)
	f.el("key2", 1, 3999)
	f.el("key1", 1, 20)
	f.el("key1", 1, 0)
	f.el("key1", 1, 999)
	f.el("key2", 1, 1998)
	f.el("key2", 1, 1999)
	f.restore()
	f.el("key2", 1, 1000)
	want := []Item[tuple2]{r2("key2", 4, math.MaxInt64)}
	f.check(cmp2, want...)
	f.el("key1", 1, 10999)
	f.el("key2", 1, 1000)
	f.el("key2", 1, 1000)
	f.el("key2", 1, 1000)
	want = append(want, r2("key1", 4, math.MaxInt64), r2("key2", 4, math.MaxInt64))
	f.check(cmp2, want...)
}

// TestCountWindow is Flink's countWindow(4) on the data of testCountTrigger.
func TestCountWindow(t *testing.T) {
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.CountWindow(keyed(in), 2).Reduce(sumReducer)
	})
	for i := range 5 {
		f.el("a", i+1, int64(i))
	}
	f.wm(math.MaxInt64) // count windows do not flush at the end
	f.check(cmp2, r2("a", 3, math.MaxInt64), r2("a", 7, math.MaxInt64), w2(math.MaxInt64))
}

// TestCountWindowSlide is Flink's countWindow(3, 1): the sum of the last
// three elements at every element.
func TestCountWindowSlide(t *testing.T) {
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.CountWindowSlide(keyed(in), 3, 1).Reduce(sumReducer)
	})
	for i := range 5 {
		f.el("a", i+1, int64(i))
	}
	want := []Item[tuple2]{r2("a", 1, math.MaxInt64), r2("a", 3, math.MaxInt64), r2("a", 6, math.MaxInt64), r2("a", 9, math.MaxInt64), r2("a", 12, math.MaxInt64)}
	f.check(cmp2, want...)
}
