package stream

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

type evEl struct {
	K  string
	V  int
	Ts int64
}

// evCount counts a window's elements.
type evCount struct{}

func (evCount) CreateAccumulator() int        { return 0 }
func (evCount) Add(_ evEl, n int) int         { return n + 1 }
func (evCount) GetResult(n int) int           { return n }
func (evCount) Merge(a, b int) int            { return a + b }
func sumEv(acc, v evEl) evEl                  { acc.V += v.V; return acc }
func evWindowOf(ts int64) (start, end int64)  { return ts - ts%10, ts - ts%10 + 10 }
func evLine(k string, v any, ts int64) string { return fmt.Sprintf("%s:%v@%d", k, v, ts) }

var _ state.AggregateFunction[evEl, int, int] = evCount{}

// TestEvictorEmptiesWindow follows Flink's EvictingWindowOperator, whose
// function runs over what the evictor left even when that is nothing:
// ReduceApplyWindowFunction then hands its function one null (here the
// zero value), AggregateApplyWindowFunction the result of a new
// accumulator, and a process function sees no elements. A count evictor
// of 0 before the function empties every window; with a count evictor of
// 1 the function sees the window's last element. The oracle is one result
// per key and 10 ms window of the input, at the window's end - 1.
func TestEvictorEmptiesWindow(t *testing.T) {
	var in []evEl
	for i := range 40 {
		in = append(in, evEl{K: fmt.Sprint("k", i%3), V: i + 1, Ts: int64(i*7) % 53})
	}
	tumbling := window.TumblingEventTimeWindows(10 * time.Millisecond)
	if err := tumbling.Err(); err != nil {
		t.Fatal(err)
	}
	// last holds the last element of each key and window in input order.
	last := map[string]evEl{}
	for _, e := range in {
		s, _ := evWindowOf(e.Ts)
		last[fmt.Sprint(e.K, "/", s)] = e
	}
	oracle := func(f func(e evEl, end int64) string) []string {
		var out []string
		for _, e := range last {
			_, end := evWindowOf(e.Ts)
			out = append(out, f(e, end))
		}
		slices.Sort(out)
		return out
	}
	run := func(t *testing.T, p, keep int, build func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string]) []string {
		t.Helper()
		env := New(Options{Parallelism: p})
		src := FromSource(env, source.FromSlice(in), watermark.NoWatermarks[evEl]().WithTimestampAssigner(func(e evEl, _ int64) int64 { return e.Ts }), "in").SetParallelism(1)
		ws := Window(KeyBy(src, func(e evEl) string { return e.K }), window.Assigner[window.TimeWindow](tumbling)).
			Evictor(window.CountEvictorOf[window.TimeWindow](keep))
		got := Collect(build(ws))
		execute(t, env)
		var out []string
		for _, r := range got.Records() {
			out = append(out, r.Value+fmt.Sprintf("@%d", r.Timestamp))
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		name  string
		keep  int
		build func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string]
		want  func(e evEl, end int64) string
	}{
		{"reduce/empty", 0, func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string] {
			return Map(ws.Reduce(sumEv), func(e evEl) string { return evLine(e.K, e.V, e.Ts) })
		}, func(e evEl, end int64) string { return evLine("", 0, 0) + fmt.Sprintf("@%d", end-1) }},
		{"reduce/last", 1, func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string] {
			return Map(ws.Reduce(sumEv), func(e evEl) string { return evLine(e.K, e.V, e.Ts) })
		}, func(e evEl, end int64) string { return evLine(e.K, e.V, e.Ts) + fmt.Sprintf("@%d", end-1) }},
		{"reduce-process/empty", 0, func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string] {
			return WindowReduceProcess(ws, sumEv, func() ProcessWindowFunction[string, window.TimeWindow, evEl, string] {
				return ProcessWindowFunction[string, window.TimeWindow, evEl, string]{
					Process: func(k string, _ *WindowContext[string, window.TimeWindow], es []evEl, out Collector[string]) error {
						out.Collect(evLine(k, es, 0))
						return nil
					},
				}
			})
		}, func(e evEl, end int64) string { return evLine(e.K, []evEl{{}}, 0) + fmt.Sprintf("@%d", end-1) }},
		{"aggregate/empty", 0, func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string] {
			return Map(WindowAggregate(ws, state.AggregateFunction[evEl, int, int](evCount{})), func(n int) string { return fmt.Sprint(n) })
		}, func(e evEl, end int64) string { return fmt.Sprintf("0@%d", end-1) }},
		{"process/empty", 0, func(ws WindowedStream[evEl, string, window.TimeWindow]) DataStream[string] {
			return WindowProcess(ws, func() ProcessWindowFunction[string, window.TimeWindow, evEl, string] {
				return ProcessWindowFunction[string, window.TimeWindow, evEl, string]{
					Process: func(k string, _ *WindowContext[string, window.TimeWindow], es []evEl, out Collector[string]) error {
						out.Collect(fmt.Sprintf("%s:%d", k, len(es)))
						return nil
					},
				}
			})
		}, func(e evEl, end int64) string { return fmt.Sprintf("%s:0@%d", e.K, end-1) }},
	}
	for _, c := range cases {
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/p%d", c.name, p), func(t *testing.T) {
				got, want := run(t, p, c.keep, c.build), oracle(c.want)
				if !slices.Equal(got, want) {
					t.Fatalf("got\n%v\nwant\n%v", got, want)
				}
			})
		}
	}
}
