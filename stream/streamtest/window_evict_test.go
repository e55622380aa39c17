package streamtest

import (
	"math"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

type gw = window.GlobalWindow

const maxTs = math.MaxInt64

// evicting builds WindowProcess(RichSumReducer) over global windows with
// a count trigger of 2 and evictor e (EvictingWindowOperatorTest's setup).
func evicting(t *testing.T, e window.Evictor[gw]) *fixture[tuple2] {
	count := window.CountTriggerOf[gw](2)
	return newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.WindowProcess(stream.Window(keyed(in), window.GlobalWindows()).Trigger(count).Evictor(e), richSum[gw])
	})
}

// TestCountEvictorEvictAfter follows Flink's
// EvictingWindowOperatorTest.testCountEvictorEvictAfter.
func TestCountEvictorEvictAfter(t *testing.T) {
	f := evicting(t, window.CountEvictorOf[gw](4, true))
	for _, e := range []struct {
		k  string
		ts int64
	}{{"key2", 3000}, {"key2", 3999}, {"key1", 20}, {"key1", 0}, {"key1", 999}, {"key2", 1998}, {"key2", 1999}, {"key2", 1000}} {
		f.el(e.k, 1, e.ts)
	}
	want := []Item[tuple2]{r2("key2", 2, maxTs), r2("key2", 4, maxTs), r2("key1", 2, maxTs)}
	f.check(cmp2, want...)
	f.el("key1", 1, 10999)
	f.el("key2", 1, 1000)
	want = append(want, r2("key1", 4, maxTs), r2("key2", 6, maxTs))
	f.check(cmp2, want...)
	f.el("key2", 1, 1000)
	f.el("key2", 1, 1000)
	want = append(want, r2("key2", 6, maxTs))
	f.check(cmp2, want...)
}

// TestTimeEvictorEvictAfter follows Flink's
// EvictingWindowOperatorTest.testTimeEvictorEvictAfter.
func TestTimeEvictorEvictAfter(t *testing.T) {
	f := evicting(t, window.TimeEvictorOf[gw](2*time.Second, true))
	for _, e := range []struct {
		k  string
		ts int64
	}{{"key2", 1000}, {"key2", 4000}, {"key1", 20}, {"key1", 0}, {"key1", 999}, {"key2", 3500}, {"key2", 2001}, {"key2", 1001}} {
		f.el(e.k, 1, e.ts)
	}
	want := []Item[tuple2]{r2("key2", 2, maxTs), r2("key1", 2, maxTs), r2("key2", 3, maxTs)}
	f.check(cmp2, want...)
	f.el("key1", 1, 10999)
	f.el("key2", 1, 1002)
	want = append(want, r2("key1", 4, maxTs), r2("key2", 5, maxTs))
	f.check(cmp2, want...)
}

// TestTimeEvictorEvictBefore follows Flink's
// EvictingWindowOperatorTest.testTimeEvictorEvictBefore: tumbling windows
// of 4 s, a count trigger of 2 and a time evictor of 2 s.
func TestTimeEvictorEvictBefore(t *testing.T) {
	a := window.TumblingEventTimeWindows(4 * time.Second)
	count := window.CountTriggerOf[window.TimeWindow](2)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		ws := stream.Window(keyed(in), a).Trigger(count).Evictor(window.TimeEvictorOf[window.TimeWindow](2 * time.Second))
		return stream.WindowProcess(ws, richSum[window.TimeWindow])
	})
	for _, e := range []struct {
		k  string
		ts int64
	}{{"key2", 1000}, {"key2", 3999}, {"key1", 20}, {"key1", 0}, {"key1", 999}, {"key1", 5999}, {"key2", 3500}, {"key2", 2001}, {"key2", 1001}} {
		f.el(e.k, 1, e.ts)
	}
	want := []Item[tuple2]{r2("key2", 1, 3999), r2("key1", 2, 3999), r2("key2", 3, 3999)}
	f.check(cmp2, want...)
	f.el("key1", 1, 6500)
	f.el("key2", 1, 1002)
	want = append(want, r2("key1", 2, 7999), r2("key2", 3, 3999))
	f.check(cmp2, want...)
}

// TestTimeEvictorNoTimestamp follows Flink's
// EvictingWindowOperatorTest.testTimeEvictorNoTimestamp: elements without
// timestamps are never evicted by time.
func TestTimeEvictorNoTimestamp(t *testing.T) {
	f := evicting(t, window.TimeEvictorOf[gw](2*time.Second, true))
	for _, k := range []string{"key2", "key2", "key1", "key1", "key1", "key2", "key2", "key2"} {
		f.el(k, 1, watermark.Min)
	}
	want := []Item[tuple2]{r2("key2", 2, maxTs), r2("key1", 2, maxTs), r2("key2", 4, maxTs)}
	f.check(cmp2, want...)
	f.el("key1", 1, watermark.Min)
	f.el("key2", 1, watermark.Min)
	want = append(want, r2("key1", 4, maxTs), r2("key2", 6, maxTs))
	f.check(cmp2, want...)
}

func deltaF1(old, cur tuple2) float64 { return float64(cur.F1 - old.F1) }

// deltaEvicting is EvictingWindowOperatorTest's delta evictor data.
func deltaEvicting(t *testing.T, after bool, want1, want2 []Item[tuple2]) {
	f := evicting(t, window.DeltaEvictorOf[tuple2, gw](2, deltaF1, after))
	for _, e := range []struct {
		k  string
		n  int
		ts int64
	}{{"key2", 1, 3000}, {"key2", 4, 3999}, {"key1", 1, 20}, {"key1", 1, 0}, {"key1", 5, 999}, {"key2", 5, 1998}, {"key2", 6, 1999}, {"key2", 1, 1000}} {
		f.el(e.k, e.n, e.ts)
	}
	f.check(cmp2, want1...)
	f.el("key1", 3+6*boolInt(after), 10999)
	f.el("key2", 10, 1000)
	f.check(cmp2, append(want1, want2...)...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDeltaEvictorEvictBefore follows Flink's
// EvictingWindowOperatorTest.testDeltaEvictorEvictBefore.
func TestDeltaEvictorEvictBefore(t *testing.T) {
	deltaEvicting(t, false,
		[]Item[tuple2]{r2("key2", 4, maxTs), r2("key2", 11, maxTs), r2("key1", 2, maxTs)},
		[]Item[tuple2]{r2("key1", 8, maxTs), r2("key2", 10, maxTs)})
}

// TestDeltaEvictorEvictAfter follows Flink's
// EvictingWindowOperatorTest.testDeltaEvictorEvictAfter (key1's last
// element is 9 there).
func TestDeltaEvictorEvictAfter(t *testing.T) {
	deltaEvicting(t, true,
		[]Item[tuple2]{r2("key2", 5, maxTs), r2("key2", 15, maxTs), r2("key1", 2, maxTs)},
		[]Item[tuple2]{r2("key1", 16, maxTs), r2("key2", 22, maxTs)})
}

// TestEvictingCountTrigger follows Flink's
// EvictingWindowOperatorTest.testCountTrigger: countWindow(4, 2) with a
// reduce function.
func TestEvictingCountTrigger(t *testing.T) {
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		return stream.CountWindowSlide(keyed(in), 4, 2).Reduce(sumReducer)
	})
	for _, e := range []struct {
		k  string
		ts int64
	}{{"key2", 3000}, {"key2", 3999}, {"key1", 20}, {"key1", 0}, {"key1", 999}, {"key2", 1998}, {"key2", 1999}, {"key2", 1000}} {
		f.el(e.k, 1, e.ts)
	}
	want := []Item[tuple2]{r2("key2", 2, maxTs), r2("key2", 4, maxTs), r2("key1", 2, maxTs)}
	f.check(cmp2, want...)
	f.el("key1", 1, 10999)
	f.el("key2", 1, 1000)
	want = append(want, r2("key1", 4, maxTs), r2("key2", 4, maxTs))
	f.check(cmp2, want...)
}

// TestTumblingWindowWithApplyEvicting follows Flink's
// EvictingWindowOperatorTest.testTumblingWindowWithApply: a count evictor
// of 4 before the function of a tumbling window.
func TestTumblingWindowWithApplyEvicting(t *testing.T) {
	a := window.TumblingEventTimeWindows(4 * time.Second)
	f := newFixture(t, func(in stream.DataStream[tuple2]) stream.DataStream[tuple2] {
		ws := stream.Window(keyed(in), a).Evictor(window.CountEvictorOf[window.TimeWindow](4))
		return stream.WindowProcess(ws, richSum[window.TimeWindow])
	})
	f.el("key1", 1, 10)
	f.el("key1", 1, 100)
	f.wm(1999)
	f.el("key1", 1, 1997)
	f.el("key1", 1, 1998)
	f.el("key1", 1, 2310)
	f.el("key1", 1, 2310)
	f.el("key2", 1, 2310)
	f.el("key2", 1, 2310)
	f.wm(3999)
	f.check(cmp2, w2(1999), r2("key1", 4, 3999), r2("key2", 2, 3999), w2(3999))
}

// TestWindowAggregations checks WindowSum, WindowMin, WindowMax,
// WindowMinBy and WindowMaxBy against Flink's field rules: sum, min and
// max replace the field of the window's first element, minBy and maxBy
// keep the first element of the extreme value.
func TestWindowAggregations(t *testing.T) {
	type ev struct {
		K    string
		A, B int
	}
	getA := func(e ev) int { return e.A }
	setA := func(e *ev, v int) { e.A = v }
	in := []ev{{"k", 3, 1}, {"k", 1, 2}, {"k", 5, 3}, {"k", 1, 4}, {"k", 5, 5}}
	a := window.TumblingEventTimeWindows(10 * time.Second)
	cases := []struct {
		name  string
		build func(ws stream.WindowedStream[ev, string, window.TimeWindow]) stream.DataStream[ev]
		want  ev
	}{
		{"sum", func(ws stream.WindowedStream[ev, string, window.TimeWindow]) stream.DataStream[ev] {
			return stream.WindowSum(ws, getA, setA)
		}, ev{"k", 15, 1}},
		{"min", func(ws stream.WindowedStream[ev, string, window.TimeWindow]) stream.DataStream[ev] {
			return stream.WindowMin(ws, getA, setA)
		}, ev{"k", 1, 1}},
		{"max", func(ws stream.WindowedStream[ev, string, window.TimeWindow]) stream.DataStream[ev] {
			return stream.WindowMax(ws, getA, setA)
		}, ev{"k", 5, 1}},
		{"minBy", func(ws stream.WindowedStream[ev, string, window.TimeWindow]) stream.DataStream[ev] {
			return stream.WindowMinBy(ws, getA)
		}, ev{"k", 1, 2}},
		{"maxBy", func(ws stream.WindowedStream[ev, string, window.TimeWindow]) stream.DataStream[ev] {
			return stream.WindowMaxBy(ws, getA)
		}, ev{"k", 5, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := New(Options{}, func(s stream.DataStream[ev]) stream.DataStream[ev] {
				return c.build(stream.Window(stream.KeyBy(s, func(e ev) string { return e.K }), a))
			})
			must(t, err)
			defer h.Close()
			for i, e := range in {
				must(t, h.ProcessElement(e, int64(i)))
			}
			must(t, h.ProcessWatermark(20000))
			got := h.Records()
			if len(got) != 1 || got[0].Value != c.want || got[0].Timestamp != 9999 {
				t.Fatalf("got %v, want %v at 9999", got, c.want)
			}
		})
	}
}
