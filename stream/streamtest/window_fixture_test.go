package streamtest

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/window"
)

// tuple2 is Flink's Tuple2<String, Integer> of WindowOperatorTest.
type tuple2 struct {
	F0 string
	F1 int
}

// tuple3 is Flink's Tuple3<String, Long, Long>.
type tuple3 struct {
	F0     string
	F1, F2 int64
}

func key0(t tuple2) string { return t.F0 }

// sumReducer is WindowOperatorTest's SumReducer.
func sumReducer(a, b tuple2) tuple2 { return tuple2{b.F0, a.F1 + b.F1} }

// richSum is WindowOperatorTest's RichSumReducer: (key, sum of the window).
func richSum[W window.Window]() stream.ProcessWindowFunction[string, W, tuple2, tuple2] {
	return stream.ProcessWindowFunction[string, W, tuple2, tuple2]{
		Process: func(k string, _ *stream.WindowContext[string, W], elems []tuple2, out stream.Collector[tuple2]) error {
			s := 0
			for _, e := range elems {
				s += e.F1
			}
			out.Collect(tuple2{k, s})
			return nil
		},
	}
}

// sessionFn is SessionWindowFunction: ("key-sum", start, end).
func sessionFn() stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, tuple3] {
	return stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, tuple3]{
		Process: func(k string, ctx *stream.WindowContext[string, window.TimeWindow], elems []tuple2, out stream.Collector[tuple3]) error {
			s := 0
			for _, e := range elems {
				s += e.F1
			}
			w := ctx.Window()
			out.Collect(tuple3{fmt.Sprintf("%s-%d", k, s), w.Start, w.End})
			return nil
		},
	}
}

// reducedSessionFn is ReducedSessionWindowFunction: ("key-value", start,
// end) per value.
func reducedSessionFn() stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, tuple3] {
	return stream.ProcessWindowFunction[string, window.TimeWindow, tuple2, tuple3]{
		Process: func(k string, ctx *stream.WindowContext[string, window.TimeWindow], elems []tuple2, out stream.Collector[tuple3]) error {
			w := ctx.Window()
			for _, e := range elems {
				out.Collect(tuple3{fmt.Sprintf("%s-%d", k, e.F1), w.Start, w.End})
			}
			return nil
		},
	}
}

// ok returns v, panicking on err (window constructors given valid
// arguments).
func ok[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// fixture drives a window harness as Flink's tests drive theirs: the
// output accumulates across snapshot-and-restore, as Flink's harness keeps
// its output queue when it is closed and restored.
type fixture[O comparable] struct {
	t     *testing.T
	build func(in stream.DataStream[tuple2]) stream.DataStream[O]
	h     *Harness[tuple2, O]
	out   []Item[O]
	late  []stream.Record[tuple2] // of the harnesses before h
	now   int64
}

var lateTag = stream.NewOutputTag[tuple2]("late-data")

func newFixture[O comparable](t *testing.T, build func(in stream.DataStream[tuple2]) stream.DataStream[O]) *fixture[O] {
	f := &fixture[O]{t: t, build: build}
	h, err := New(Options{}, build)
	must(t, err)
	f.h = h
	t.Cleanup(func() { _ = f.h.Close() })
	return f
}

func (f *fixture[O]) el(k string, n int, ts int64) {
	f.t.Helper()
	must(f.t, f.h.ProcessElement(tuple2{k, n}, ts))
}

func (f *fixture[O]) wm(w int64) {
	f.t.Helper()
	must(f.t, f.h.ProcessWatermark(w))
}

func (f *fixture[O]) proc(ms int64) {
	f.t.Helper()
	f.now = ms
	must(f.t, f.h.SetProcessingTime(ms))
}

// restore snapshots the harness, closes it and opens a new one from the
// snapshot (Flink's snapshot, close, setup, restore, open).
func (f *fixture[O]) restore() {
	f.t.Helper()
	snap, err := f.h.Snapshot()
	must(f.t, err)
	f.collect()
	f.late = append(f.late, mustSide(f.t, f.h, lateTag)...)
	must(f.t, f.h.Close())
	f.h, err = New(Options{ProcessingTime: f.now}, f.build)
	must(f.t, err)
	must(f.t, f.h.Restore(snap))
	f.t.Cleanup(func() { _ = f.h.Close() })
}

func (f *fixture[O]) collect() {
	f.out = append(f.out, f.h.Output()...)
	f.h.ClearOutput()
}

// check compares the output so far with want as Flink's
// assertOutputEqualsSorted does, and stricter: the watermarks in order,
// and between two watermarks the same records in any order.
func (f *fixture[O]) check(cmpv func(a, b O) int, want ...Item[O]) {
	f.t.Helper()
	f.collect()
	norm := func(items []Item[O]) []Item[O] {
		out := slices.Clone(items)
		start := 0
		for i := 0; i <= len(out); i++ {
			if i == len(out) || out[i].IsWatermark {
				slices.SortFunc(out[start:i], func(a, b Item[O]) int {
					if c := cmp.Compare(a.Record.Timestamp, b.Record.Timestamp); c != 0 {
						return c
					}
					return cmpv(a.Record.Value, b.Record.Value)
				})
				start = i + 1
			}
		}
		return out
	}
	got, exp := norm(f.out), norm(want)
	if !slices.Equal(got, exp) {
		f.t.Fatalf("output\n got %v\nwant %v", got, exp)
	}
}

// checkLate compares the late side output so far with want, in order.
func (f *fixture[O]) checkLate(want ...stream.Record[tuple2]) {
	f.t.Helper()
	got := append(slices.Clone(f.late), mustSide(f.t, f.h, lateTag)...)
	if !slices.Equal(got, want) {
		f.t.Fatalf("late side output\n got %v\nwant %v", got, want)
	}
}

func cmp2(a, b tuple2) int {
	if c := cmp.Compare(a.F0, b.F0); c != 0 {
		return c
	}
	return cmp.Compare(a.F1, b.F1)
}

func cmp3(a, b tuple3) int {
	if c := cmp.Compare(a.F0, b.F0); c != 0 {
		return c
	}
	if c := cmp.Compare(a.F1, b.F1); c != 0 {
		return c
	}
	return cmp.Compare(a.F2, b.F2)
}

func r2(k string, n int, ts int64) Item[tuple2] {
	return Item[tuple2]{Record: stream.Record[tuple2]{Value: tuple2{k, n}, Timestamp: ts}}
}

func r3(k string, s, e int64, ts int64) Item[tuple3] {
	return Item[tuple3]{Record: stream.Record[tuple3]{Value: tuple3{k, s, e}, Timestamp: ts}}
}

func w2(w int64) Item[tuple2] { return Item[tuple2]{Watermark: w, IsWatermark: true} }
func w3(w int64) Item[tuple3] { return Item[tuple3]{Watermark: w, IsWatermark: true} }

func lr(k string, n int, ts int64) stream.Record[tuple2] {
	return stream.Record[tuple2]{Value: tuple2{k, n}, Timestamp: ts}
}

func itoa(n int) string { return fmt.Sprint(n) }

func compareStrings(a, b string) int { return cmp.Compare(a, b) }
