package window

import (
	"math"
	"slices"
	"testing"
	"time"
)

func must[V any](t *testing.T) func(V, error) V {
	return func(v V, err error) V {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestGetWindowStartWithOffset follows Flink's TimeWindowTest: starts of
// positive and negative timestamps, with and without offsets.
func TestGetWindowStartWithOffset(t *testing.T) {
	for _, c := range []struct{ ts, offset, size, want int64 }{
		{0, 0, 7, 0}, {1, 0, 7, 0}, {7, 0, 7, 7}, {8, 0, 7, 7},
		{-1, 0, 7, -7}, {-7, 0, 7, -7}, {-8, 0, 7, -14},
		{1, 2, 7, -5}, {2, 2, 7, 2}, {9, 2, 7, 9}, {-1, 2, 7, -5},
		{1, -2, 7, -2}, {5, -2, 7, 5},
	} {
		if got := GetWindowStartWithOffset(c.ts, c.offset, c.size); got != c.want {
			t.Errorf("GetWindowStartWithOffset(%d, %d, %d) = %d, want %d", c.ts, c.offset, c.size, got, c.want)
		}
	}
}

func TestTimeWindow(t *testing.T) {
	a, b, c := TimeWindow{0, 5}, TimeWindow{5, 10}, TimeWindow{6, 8}
	if !a.Intersects(b) || a.Intersects(c) || a.MaxTimestamp() != 4 {
		t.Fatal("touching windows intersect, disjoint ones do not, MaxTimestamp is end - 1")
	}
	if a.Cover(c) != (TimeWindow{0, 8}) {
		t.Fatal(a.Cover(c))
	}
	if (GlobalWindow{}).MaxTimestamp() != math.MaxInt64 {
		t.Fatal("the global window ends at the end of time")
	}
}

// TestTumblingAssigner follows Flink's TumblingEventTimeWindowsTest.
func TestTumblingAssigner(t *testing.T) {
	a := TumblingEventTimeWindows(5000 * time.Millisecond)
	for _, c := range []struct {
		ts   int64
		want TimeWindow
	}{{0, TimeWindow{0, 5000}}, {4999, TimeWindow{0, 5000}}, {5000, TimeWindow{5000, 10000}}, {-1, TimeWindow{-5000, 0}}} {
		got := must[[]TimeWindow](t)(a.AssignWindows(nil, c.ts, nil, nil))
		if !slices.Equal(got, []TimeWindow{c.want}) {
			t.Errorf("%d: %v, want %v", c.ts, got, c.want)
		}
	}
	off := TumblingEventTimeWindows(5000*time.Millisecond, 100*time.Millisecond)
	if got := must[[]TimeWindow](t)(off.AssignWindows(nil, 100, nil, nil)); got[0] != (TimeWindow{100, 5100}) {
		t.Errorf("offset: %v", got)
	}
	if _, err := a.AssignWindows(nil, math.MinInt64, nil, nil); err == nil {
		t.Error("an element without a timestamp must fail an event-time assigner")
	}
	for _, bad := range [][2]time.Duration{{0, 0}, {time.Second, time.Second}, {time.Second, -time.Second}} {
		if TumblingEventTimeWindows(bad[0], bad[1]).Err() == nil {
			t.Errorf("size %v offset %v accepted", bad[0], bad[1])
		}
	}
}

// TestSlidingAssigner follows Flink's SlidingEventTimeWindowsTest: every
// window containing the timestamp, the latest start first.
func TestSlidingAssigner(t *testing.T) {
	a := SlidingEventTimeWindows(5000*time.Millisecond, 1000*time.Millisecond)
	got := must[[]TimeWindow](t)(a.AssignWindows(nil, 0, nil, nil))
	want := []TimeWindow{{0, 5000}, {-1000, 4000}, {-2000, 3000}, {-3000, 2000}, {-4000, 1000}}
	if !slices.Equal(got, want) {
		t.Errorf("0: %v, want %v", got, want)
	}
	got = must[[]TimeWindow](t)(a.AssignWindows(nil, 5000, nil, nil))
	want = []TimeWindow{{5000, 10000}, {4000, 9000}, {3000, 8000}, {2000, 7000}, {1000, 6000}}
	if !slices.Equal(got, want) {
		t.Errorf("5000: %v, want %v", got, want)
	}
	off := SlidingEventTimeWindows(5000*time.Millisecond, 1000*time.Millisecond, 100*time.Millisecond)
	got = must[[]TimeWindow](t)(off.AssignWindows(nil, 100, nil, nil))
	want = []TimeWindow{{100, 5100}, {-900, 4100}, {-1900, 3100}, {-2900, 2100}, {-3900, 1100}}
	if !slices.Equal(got, want) {
		t.Errorf("offset: %v, want %v", got, want)
	}
	if SlidingEventTimeWindows(time.Second, time.Second, time.Second).Err() == nil {
		t.Error("abs(offset) >= slide accepted")
	}
}

// TestDynamicSessionGap: the gap comes from the element; a gap that is not
// positive fails.
func TestDynamicSessionGap(t *testing.T) {
	a := DynamicEventTimeSessionWindows(func(v int) time.Duration { return time.Duration(v) * time.Millisecond })
	v := 30
	got := must[[]TimeWindow](t)(a.AssignWindows(&v, 100, nil, nil))
	if got[0] != (TimeWindow{100, 130}) {
		t.Fatal(got)
	}
	v = 0
	if _, err := a.AssignWindows(&v, 100, nil, nil); err == nil {
		t.Fatal("a zero gap must fail")
	}
	if EventTimeSessionWindows(0).Err() == nil {
		t.Fatal("a zero static gap must fail")
	}
}

// mergeCall records the MergingWindowSet's merge callback, as
// MergingWindowSetTest's TestingMergeFunction.
type mergeCall struct {
	called      bool
	target      TimeWindow
	sources     []TimeWindow
	stateWindow TimeWindow
	mergedState []TimeWindow
}

func (m *mergeCall) fn(result TimeWindow, merged []TimeWindow, st TimeWindow, mergedState []TimeWindow) error {
	*m = mergeCall{true, result, slices.Clone(merged), st, slices.Clone(mergedState)}
	return nil
}

func sessions3(t *testing.T) *MergingWindowSet[TimeWindow] {
	return NewMergingWindowSet[TimeWindow](EventTimeSessionWindows(3*time.Millisecond), nil)
}

func sameSet(a, b []TimeWindow) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	cmp := func(x, y TimeWindow) int { return int(x.Start - y.Start) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}

// TestIncrementalMerging follows Flink's
// MergingWindowSetTest.testIncrementalMerging.
func TestIncrementalMerging(t *testing.T) {
	s := sessions3(t)
	var m mergeCall
	add := func(w TimeWindow, want TimeWindow, merged bool) {
		t.Helper()
		m = mergeCall{}
		got, err := s.AddWindow(w, m.fn)
		if err != nil || got != want || m.called != merged {
			t.Fatalf("add %v: %v (merged %v, %v), want %v (merged %v)", w, got, m.called, err, want, merged)
		}
	}
	state := func(w, want TimeWindow) {
		t.Helper()
		if got, ok := s.StateWindow(w); !ok || got != want {
			t.Fatalf("state window of %v: %v, want %v", w, got, want)
		}
	}
	add(TimeWindow{0, 4}, TimeWindow{0, 4}, false)
	state(TimeWindow{0, 4}, TimeWindow{0, 4})
	add(TimeWindow{0, 4}, TimeWindow{0, 4}, false)
	add(TimeWindow{3, 5}, TimeWindow{0, 5}, true)
	if m.target != (TimeWindow{0, 5}) || m.stateWindow != (TimeWindow{0, 4}) || !sameSet(m.sources, []TimeWindow{{0, 4}}) || len(m.mergedState) != 0 {
		t.Fatalf("merge %+v", m)
	}
	add(TimeWindow{4, 6}, TimeWindow{0, 6}, true)
	if m.target != (TimeWindow{0, 6}) || m.stateWindow != (TimeWindow{0, 4}) || !sameSet(m.sources, []TimeWindow{{0, 5}}) || len(m.mergedState) != 0 {
		t.Fatalf("merge %+v", m)
	}
	state(TimeWindow{0, 6}, TimeWindow{0, 4})
	for _, w := range []TimeWindow{{1, 4}, {0, 4}, {3, 5}, {4, 6}} {
		add(w, TimeWindow{0, 6}, false)
	}
	state(TimeWindow{0, 6}, TimeWindow{0, 4})
	add(TimeWindow{11, 14}, TimeWindow{11, 14}, false)
	state(TimeWindow{11, 14}, TimeWindow{11, 14})
	add(TimeWindow{10, 13}, TimeWindow{10, 14}, true)
	if m.stateWindow != (TimeWindow{11, 14}) || !sameSet(m.sources, []TimeWindow{{11, 14}}) || len(m.mergedState) != 0 {
		t.Fatalf("merge %+v", m)
	}
	add(TimeWindow{12, 15}, TimeWindow{10, 15}, true)
	if !sameSet(m.sources, []TimeWindow{{10, 14}}) {
		t.Fatalf("merge %+v", m)
	}
	add(TimeWindow{11, 14}, TimeWindow{10, 15}, false)
	state(TimeWindow{0, 6}, TimeWindow{0, 4})
	state(TimeWindow{10, 15}, TimeWindow{11, 14})
	if err := s.RetireWindow(TimeWindow{0, 6}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.StateWindow(TimeWindow{0, 6}); ok {
		t.Fatal("retired window still in flight")
	}
	state(TimeWindow{10, 15}, TimeWindow{11, 14})
	if s.RetireWindow(TimeWindow{0, 6}) == nil {
		t.Fatal("retiring a window twice must fail")
	}
}

// TestLateMerging follows Flink's MergingWindowSetTest.testLateMerging: a
// window bridging two windows merges their state windows.
func TestLateMerging(t *testing.T) {
	s := sessions3(t)
	var m mergeCall
	for _, w := range []TimeWindow{{0, 3}, {5, 8}, {10, 13}} {
		if got, _ := s.AddWindow(w, m.fn); got != w || m.called {
			t.Fatalf("add %v: %v", w, got)
		}
	}
	got, _ := s.AddWindow(TimeWindow{8, 10}, m.fn)
	if got != (TimeWindow{5, 13}) || !m.called || !sameSet(m.sources, []TimeWindow{{5, 8}, {10, 13}}) ||
		len(m.mergedState) != 1 || m.mergedState[0] == m.stateWindow {
		t.Fatalf("bridge: %v %+v", got, m)
	}
	m = mergeCall{}
	got, _ = s.AddWindow(TimeWindow{3, 5}, m.fn)
	if got != (TimeWindow{0, 13}) || !sameSet(m.sources, []TimeWindow{{0, 3}, {5, 13}}) || len(m.mergedState) != 1 {
		t.Fatalf("all: %v %+v", got, m)
	}
	if st, _ := s.StateWindow(TimeWindow{0, 13}); st != m.stateWindow {
		t.Fatalf("state window %v, merge target state %v", st, m.stateWindow)
	}
}

// TestMergeLargeWindowCoveringSingleWindow follows Flink's
// MergingWindowSetTest test of that name; TestAddingIdenticalWindows too.
func TestMergeLargeWindowCoveringSingleWindow(t *testing.T) {
	s := sessions3(t)
	var m mergeCall
	s.AddWindow(TimeWindow{1, 2}, m.fn)
	got, _ := s.AddWindow(TimeWindow{0, 3}, m.fn)
	if st, _ := s.StateWindow(TimeWindow{0, 3}); got != (TimeWindow{0, 3}) || !m.called || st != (TimeWindow{1, 2}) {
		t.Fatalf("%v %+v", got, m)
	}
	s = sessions3(t)
	m = mergeCall{}
	s.AddWindow(TimeWindow{1, 2}, m.fn)
	got, _ = s.AddWindow(TimeWindow{1, 2}, m.fn)
	if st, _ := s.StateWindow(TimeWindow{1, 2}); got != (TimeWindow{1, 2}) || m.called || st != (TimeWindow{1, 2}) {
		t.Fatalf("identical: %v %+v", got, m)
	}
}

// TestTumblingAssignEach: AssignEach gives every timestamp the window
// AssignWindows gives it, in event and processing time, with and without an
// offset, negative timestamps included; a record without a timestamp fails
// event-time assignment as AssignWindows does.
func TestTumblingAssignEach(t *testing.T) {
	ctx := newFake[TimeWindow]()
	ctx.now = 12_345
	ts := []int64{0, 1, 999, 1000, 1001, -1, -1000, -1001, 7_654_321, 59_999}
	for _, a := range []*Tumbling{
		TumblingEventTimeWindows(time.Second),
		TumblingEventTimeWindows(time.Second, 300*time.Millisecond),
		TumblingEventTimeWindows(time.Minute, -7*time.Second),
		TumblingProcessingTimeWindows(time.Second),
	} {
		err := a.Err()
		if err != nil {
			t.Fatal(err)
		}
		got := make([]TimeWindow, len(ts))
		if err := a.AssignEach(ts, ctx, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range ts {
			want, err := a.AssignWindows(nil, v, ctx, nil)
			if err != nil || len(want) != 1 || got[i] != want[0] {
				t.Fatalf("%+v: timestamp %d: AssignEach %v, AssignWindows %v %v", *a, v, got[i], want, err)
			}
		}
	}
	a := TumblingEventTimeWindows(time.Second)
	if err := a.AssignEach([]int64{5, noTimestamp}, ctx, make([]TimeWindow, 2)); err == nil {
		t.Error("AssignEach assigned a record without a timestamp")
	}
}
