package streamtest

import (
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/window"
)

// The tests below follow Flink's WindowOperatorContractTest cases that
// count keyed state entries and timers to check the cleanup of a window:
// testStateAndTimerCleanupAtEventTimeGC and its purging and
// processing-time variants. The mocks are written out: an assigner giving
// every element the window [0, 20), and a trigger that on each element
// registers a timer at 1000 and writes its own state, and deletes both on
// Clear. Allowed lateness is 20, so the window's cleanup is at 19 + 20.

// fixedAssigner assigns every element the window [0, 20).
type fixedAssigner struct{ eventTime bool }

func (a fixedAssigner) AssignWindows(_ any, _ int64, _ window.AssignerContext, dst []window.TimeWindow) ([]window.TimeWindow, error) {
	return append(dst[:0], window.TimeWindow{Start: 0, End: 20}), nil
}

func (a fixedAssigner) DefaultTrigger() window.Trigger[window.TimeWindow] {
	return window.EventTimeTrigger{}
}
func (a fixedAssigner) IsEventTime() bool { return a.eventTime }

// stateTrigger is the tests' mock trigger.
type stateTrigger struct {
	eventTime bool
	onElement window.TriggerResult
	cleared   *int
}

func (t stateTrigger) OnElement(_ any, _ int64, _ window.TimeWindow, ctx window.TriggerContext) (window.TriggerResult, error) {
	if t.eventTime {
		ctx.RegisterEventTimeTimer(1000)
	} else {
		ctx.RegisterProcessingTimeTimer(1000)
	}
	ctx.RawState("trigger").Update([]byte("hello"))
	return t.onElement, nil
}

func (stateTrigger) OnEventTime(int64, window.TimeWindow, window.TriggerContext) (window.TriggerResult, error) {
	return window.Continue, nil
}

func (stateTrigger) OnProcessingTime(int64, window.TimeWindow, window.TriggerContext) (window.TriggerResult, error) {
	return window.Continue, nil
}
func (stateTrigger) CanMerge() bool                                         { return false }
func (stateTrigger) OnMerge(window.TimeWindow, window.OnMergeContext) error { return nil }

func (t stateTrigger) Clear(_ window.TimeWindow, ctx window.TriggerContext) error {
	*t.cleared++
	if t.eventTime {
		ctx.DeleteEventTimeTimer(1000)
	} else {
		ctx.DeleteProcessingTimeTimer(1000)
	}
	ctx.RawState("trigger").Clear()
	return nil
}

func TestStateAndTimerCleanupAtGC(t *testing.T) {
	for _, c := range []struct {
		name      string
		eventTime bool
		onElement window.TriggerResult
		entries   int // after the element: window contents and trigger state
	}{
		{"event time", true, window.Continue, 2},
		{"event time, purging trigger", true, window.Purge, 1},
		{"processing time", false, window.Continue, 2},
		{"processing time, purging trigger", false, window.Purge, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cleared := 0
			trig := stateTrigger{eventTime: c.eventTime, onElement: c.onElement, cleared: &cleared}
			h, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[int] {
				ws := stream.Window(stream.KeyBy(in, func(v int) int { return v }), window.Assigner[window.TimeWindow](fixedAssigner{c.eventTime})).
					Trigger(trig).AllowedLateness(20 * time.Millisecond)
				return stream.WindowProcess(ws, func() stream.ProcessWindowFunction[int, window.TimeWindow, int, int] {
					return stream.ProcessWindowFunction[int, window.TimeWindow, int, int]{
						Process: func(_ int, _ *stream.WindowContext[int, window.TimeWindow], vs []int, out stream.Collector[int]) error {
							out.Collect(len(vs))
							return nil
						},
					}
				})
			})
			must(t, err)
			defer h.Close()
			if n := h.NumKeyedStateEntries(); n != 0 || len(h.Output()) != 0 {
				t.Fatalf("before any element: %d entries, output %v", n, h.Output())
			}
			must(t, h.ProcessElement(0, 0))
			if cleared != 0 {
				t.Fatalf("Clear called %d times before the cleanup time", cleared)
			}
			timers, other := h.NumEventTimeTimers(), h.NumProcessingTimeTimers()
			if !c.eventTime {
				timers, other = other, timers
			}
			if n := h.NumKeyedStateEntries(); n != c.entries || timers != 2 || other != 0 {
				t.Fatalf("after the element: %d entries (want %d), %d timers of its time (want 2: the trigger's and the cleanup), %d of the other", n, c.entries, timers, other)
			}
			if c.eventTime {
				must(t, h.ProcessWatermark(19+20))
			} else {
				must(t, h.SetProcessingTime(19+20))
			}
			if cleared != 1 {
				t.Fatalf("Clear called %d times at the cleanup time, want 1", cleared)
			}
			if n, e, p := h.NumKeyedStateEntries(), h.NumEventTimeTimers(), h.NumProcessingTimeTimers(); n != 0 || e != 0 || p != 0 {
				t.Fatalf("after the cleanup: %d entries, %d event-time and %d processing-time timers, want none", n, e, p)
			}
		})
	}
}

// TestAssertOutputEqualsSorted: records between watermarks compare in any
// order, watermarks must stay where they are.
func TestAssertOutputEqualsSorted(t *testing.T) {
	byValue := func(a, b stream.Record[int]) int { return a.Value - b.Value }
	got := []Item[int]{rec(2, 2), rec(1, 1), wm(5), rec(3, 3)}
	if err := OutputEqualsSorted(got, []Item[int]{rec(1, 1), rec(2, 2), wm(5), rec(3, 3)}, byValue); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]Item[int]{
		{rec(1, 1), rec(2, 2), rec(3, 3), wm(5)}, // the watermark moved
		{rec(1, 1), rec(2, 2), wm(5), rec(4, 4)}, // another record
		{rec(1, 1), rec(2, 9), wm(5), rec(3, 3)}, // another timestamp
		{rec(1, 1), wm(5), rec(3, 3)},            // one item fewer
	} {
		if err := OutputEqualsSorted(got, want, byValue); err == nil {
			t.Errorf("%v equals %v sorted", got, want)
		}
	}
}
