package streamtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

func identity(v int) int { return v }

// triggering is Flink's TriggeringFlatMapFunction of KeyedProcessOperatorTest:
// it emits every element and registers a timer at 5 in its domain; the
// timer emits 1777.
func triggering(domain stream.TimeDomain) func() stream.KeyedProcessFunction[int, int, int] {
	return func() stream.KeyedProcessFunction[int, int, int] {
		return stream.KeyedProcessFunction[int, int, int]{
			ProcessElement: func(v int, ctx *stream.KeyedContext[int], out stream.Collector[int]) error {
				out.Collect(v)
				if domain == stream.EventTime {
					ctx.RegisterEventTimeTimer(5)
				} else {
					ctx.RegisterProcessingTimeTimer(5)
				}
				return nil
			},
			OnTimer: func(ts int64, ctx *stream.KeyedContext[int], out stream.Collector[int]) error {
				if ctx.TimeDomain() != domain {
					return fmt.Errorf("timer in domain %d, want %d", ctx.TimeDomain(), domain)
				}
				out.Collect(1777)
				return nil
			},
		}
	}
}

func rec(v int, ts int64) Item[int] {
	return Item[int]{Record: stream.Record[int]{Value: v, Timestamp: ts}}
}
func wm(w int64) Item[int] { return Item[int]{Watermark: w, IsWatermark: true} }

func expect(t *testing.T, h *Harness[int, int], want ...Item[int]) {
	t.Helper()
	if got := h.Output(); !slices.Equal(got, want) {
		t.Fatalf("output\ngot  %v\nwant %v", got, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEventTimeTimers follows Flink's KeyedProcessOperatorTest.testEventTimeTimers:
// the timer's output carries the timer's timestamp and comes before the
// watermark that fired it.
func TestEventTimeTimers(t *testing.T) {
	h, err := Keyed(Options{}, identity, triggering(stream.EventTime))
	must(t, err)
	defer h.Close()
	must(t, h.ProcessWatermark(0))
	must(t, h.ProcessElement(17, 42))
	must(t, h.ProcessWatermark(5))
	expect(t, h, wm(0), rec(17, 42), rec(1777, 5), wm(5))
}

// TestProcessingTimeTimers follows Flink's
// KeyedProcessOperatorTest.testProcessingTimeTimers: records without
// timestamps; the processing-time timer's output has none.
func TestProcessingTimeTimers(t *testing.T) {
	h, err := Keyed(Options{}, identity, triggering(stream.ProcessingTime))
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement(17, watermark.Min))
	must(t, h.SetProcessingTime(4))
	expect(t, h, rec(17, watermark.Min))
	must(t, h.SetProcessingTime(5))
	expect(t, h, rec(17, watermark.Min), rec(1777, watermark.Min))
}

// TestTimestampAndWatermarkQuerying follows Flink's
// KeyedProcessOperatorTest.testTimestampAndWatermarkQuerying: the function
// sees the record's timestamp and the current watermark.
func TestTimestampAndWatermarkQuerying(t *testing.T) {
	h, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[string] {
		return stream.KeyedProcess(stream.KeyBy(in, identity), func() stream.KeyedProcessFunction[int, int, string] {
			return stream.KeyedProcessFunction[int, int, string]{
				ProcessElement: func(v int, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
					ts, _ := ctx.Timestamp()
					out.Collect(fmt.Sprintf("%dTIME:%d %d", v, ctx.CurrentWatermark(), ts))
					return nil
				},
			}
		})
	})
	must(t, err)
	defer h.Close()
	must(t, h.ProcessWatermark(17))
	must(t, h.ProcessElement(17, 12))
	must(t, h.ProcessWatermark(42))
	must(t, h.ProcessElement(6, 13))
	got := h.Output()
	want := []Item[string]{
		{Watermark: 17, IsWatermark: true},
		{Record: stream.Record[string]{Value: "17TIME:17 12", Timestamp: 12}},
		{Watermark: 42, IsWatermark: true},
		{Record: stream.Record[string]{Value: "6TIME:42 13", Timestamp: 13}},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// counting keeps a count per key in value state and registers an
// event-time timer at 10 that emits key*100+count; late elements (at or
// below the watermark) go to the side output "late".
var late = stream.NewOutputTag[int]("late")

func counting() stream.KeyedProcessFunction[int, int, int] {
	var count state.ValueState[int]
	return stream.KeyedProcessFunction[int, int, int]{
		Open: func(rc *stream.KeyedRuntimeContext[int]) (err error) {
			count, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "count"})
			return err
		},
		ProcessElement: func(v int, ctx *stream.KeyedContext[int], _ stream.Collector[int]) error {
			if ts, _ := ctx.Timestamp(); ts <= ctx.CurrentWatermark() {
				stream.Output(ctx, late, v)
				return nil
			}
			c, _ := count.Value()
			count.Update(c + 1)
			ctx.RegisterEventTimeTimer(10)
			return nil
		},
		OnTimer: func(ts int64, ctx *stream.KeyedContext[int], out stream.Collector[int]) error {
			c, _ := count.Value()
			out.Collect(ctx.CurrentKey()*100 + c)
			return nil
		},
	}
}

// TestSnapshotRestore takes a snapshot of keyed state and timers after
// some records and restores it into one harness, and into the two subtasks
// of parallelism 2 (each keeps its key groups), as Flink's
// testSnapshotAndRebalancingRestore: the timers fire with the restored
// counts either way.
func TestSnapshotRestore(t *testing.T) {
	h, err := Keyed(Options{}, identity, counting)
	must(t, err)
	for _, v := range []int{1, 2, 3, 1, 1, 2, 4} {
		must(t, h.ProcessElement(v, 3))
	}
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.Close())
	want := []int{103, 202, 301, 401}

	h1, err := Keyed(Options{}, identity, counting)
	must(t, err)
	must(t, h1.Restore(snap))
	must(t, h1.ProcessElement(5, 2))
	must(t, h1.ProcessWatermark(10))
	must(t, h1.ProcessElement(6, 9)) // late
	var got []int
	for _, r := range h1.Records() {
		got = append(got, r.Value)
	}
	slices.Sort(got)
	if w := append(slices.Clone(want), 501); !slices.Equal(got, w) {
		t.Errorf("restored at parallelism 1: %v, want %v", got, w)
	}
	if side, err := SideOutput(h1, late); err != nil || len(side) != 1 || side[0] != (stream.Record[int]{Value: 6, Timestamp: 9}) {
		t.Errorf("late side output %v", side)
	}
	must(t, h1.Close())

	got = got[:0]
	for sub := 0; sub < 2; sub++ {
		hs, err := Keyed(Options{Parallelism: 2, Subtask: sub, MaxParallelism: 128}, identity, counting)
		must(t, err)
		must(t, hs.Restore(snap))
		must(t, hs.ProcessWatermark(10))
		for _, r := range hs.Records() {
			got = append(got, r.Value)
		}
		must(t, hs.Close())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("restored at parallelism 2: %v, want %v", got, want)
	}
}

// TestDeleteTimers follows Flink's InternalTimerService contract: a
// deleted timer does not fire; timers of one key and time fire once.
func TestDeleteTimers(t *testing.T) {
	h, err := Keyed(Options{}, identity, func() stream.KeyedProcessFunction[int, int, int] {
		return stream.KeyedProcessFunction[int, int, int]{
			ProcessElement: func(v int, ctx *stream.KeyedContext[int], _ stream.Collector[int]) error {
				ctx.RegisterEventTimeTimer(10)
				ctx.RegisterEventTimeTimer(10)
				ctx.RegisterEventTimeTimer(20)
				ctx.RegisterProcessingTimeTimer(30)
				if v%2 == 0 {
					ctx.DeleteEventTimeTimer(10)
					ctx.DeleteProcessingTimeTimer(30)
				}
				return nil
			},
			OnTimer: func(ts int64, ctx *stream.KeyedContext[int], out stream.Collector[int]) error {
				out.Collect(ctx.CurrentKey()*100 + int(ts))
				return nil
			},
		}
	})
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement(1, 1))
	must(t, h.ProcessElement(2, 1))
	must(t, h.ProcessWatermark(25))
	must(t, h.SetProcessingTime(30))
	var got []int
	for _, r := range h.Records() {
		got = append(got, r.Value)
	}
	if want := []int{110, 120, 220, 130}; !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}

// TestOpenClose: the function's Open runs once before the first record and
// Close once at the end.
func TestOpenClose(t *testing.T) {
	var opened, closed int
	h, err := Keyed(Options{}, identity, func() stream.KeyedProcessFunction[int, int, int] {
		return stream.KeyedProcessFunction[int, int, int]{
			Open: func(*stream.KeyedRuntimeContext[int]) error { opened++; return nil },
			ProcessElement: func(v int, _ *stream.KeyedContext[int], out stream.Collector[int]) error {
				if opened != 1 || closed != 0 {
					t.Errorf("record %d with %d opens and %d closes", v, opened, closed)
				}
				return nil
			},
			Close: func() error { closed++; return nil },
		}
	})
	must(t, err)
	must(t, h.ProcessElement(1, 1))
	must(t, h.ProcessElement(2, 2))
	must(t, h.Close())
	must(t, h.Close())
	if opened != 1 || closed != 1 {
		t.Fatalf("%d opens, %d closes", opened, closed)
	}
}

// mustSide is SideOutput failing t on an error.
func mustSide[X any](t testing.TB, h AnyHarness, tag stream.OutputTag[X]) []stream.Record[X] {
	t.Helper()
	r, err := SideOutput(h, tag)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
