package streamtest

import (
	"slices"
	"strconv"
	"testing"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
)

// TestCoMapHarness follows Flink's CoStreamMapTest: each input's records
// are mapped by their own function and keep their timestamps; the
// watermark passes once.
func TestCoMapHarness(t *testing.T) {
	h, err := New2(Options{}, func(a stream.DataStream[int], b stream.DataStream[float64]) stream.DataStream[string] {
		return stream.CoMap(stream.Connect(a, b),
			func(v int) string { return strconv.Itoa(v) },
			func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) })
	})
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement1(1, 1))
	must(t, h.ProcessElement2(1.5, 2))
	must(t, h.ProcessElement1(2, 3))
	must(t, h.ProcessWatermark(3))
	want := []Item[string]{
		{Record: stream.Record[string]{Value: "1", Timestamp: 1}},
		{Record: stream.Record[string]{Value: "1.5", Timestamp: 2}},
		{Record: stream.Record[string]{Value: "2", Timestamp: 3}},
		{Watermark: 3, IsWatermark: true},
	}
	if got := h.Output(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestKeyedCoProcessHarness: a keyed two-input function shares keyed state
// between its inputs and fires event-time timers; a snapshot restores
// into a new harness.
func TestKeyedCoProcessHarness(t *testing.T) {
	build := func(a stream.DataStream[int], b stream.DataStream[string]) stream.DataStream[string] {
		return stream.KeyedCoProcess(stream.ConnectKeyed(stream.KeyBy(a, func(v int) int { return v % 10 }), stream.KeyBy(b, func(s string) int { return len(s) })),
			func() stream.KeyedCoProcessFunction[int, int, string, string] {
				var sum state.ValueState[int]
				return stream.KeyedCoProcessFunction[int, int, string, string]{
					Open: func(rc *stream.KeyedRuntimeContext[int]) (err error) {
						sum, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "sum"})
						return err
					},
					ProcessElement1: func(v int, ctx *stream.KeyedContext[int], _ stream.Collector[string]) error {
						s, _ := sum.Value()
						sum.Update(s + v)
						return nil
					},
					ProcessElement2: func(v string, ctx *stream.KeyedContext[int], _ stream.Collector[string]) error {
						ctx.RegisterEventTimeTimer(10)
						return nil
					},
					OnTimer: func(ts int64, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
						s, _ := sum.Value()
						out.Collect(strconv.Itoa(ctx.CurrentKey()) + "=" + strconv.Itoa(s))
						return nil
					},
				}
			})
	}
	h, err := New2(Options{}, build)
	must(t, err)
	must(t, h.ProcessElement1(3, 1))
	must(t, h.ProcessElement1(13, 1))
	must(t, h.ProcessElement1(2, 1))
	must(t, h.ProcessElement2("abc", 2)) // key 3: timer at 10
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.Close())

	h2, err := New2(Options{}, build)
	must(t, err)
	defer h2.Close()
	must(t, h2.Restore(snap))
	must(t, h2.ProcessElement2("xy", 3)) // key 2
	must(t, h2.ProcessWatermark(10))
	var got []string
	for _, r := range h2.Records() {
		got = append(got, r.Value)
	}
	slices.Sort(got)
	if want := []string{"2=2", "3=16"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
