package window

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"
)

// fakeCtx is a TriggerContext over maps, as Flink's TriggerTestHarness:
// raw state and timers per window.
type fakeCtx[W Window] struct {
	w      W
	wm     int64
	now    int64
	state  map[string][]byte // "window/name"
	event  map[string]bool   // "window@ts"
	proc   map[string]bool
	merged []W
}

func newFake[W Window]() *fakeCtx[W] {
	return &fakeCtx[W]{state: map[string][]byte{}, event: map[string]bool{}, proc: map[string]bool{}}
}

func (c *fakeCtx[W]) at(ts int64) string              { return fmt.Sprintf("%v@%d", c.w, ts) }
func (c *fakeCtx[W]) CurrentWatermark() int64         { return c.wm }
func (c *fakeCtx[W]) CurrentProcessingTime() int64    { return c.now }
func (c *fakeCtx[W]) RegisterEventTimeTimer(ts int64) { c.event[c.at(ts)] = true }
func (c *fakeCtx[W]) RegisterProcessingTimeTimer(ts int64) {
	c.proc[c.at(ts)] = true
}
func (c *fakeCtx[W]) DeleteEventTimeTimer(ts int64)      { delete(c.event, c.at(ts)) }
func (c *fakeCtx[W]) DeleteProcessingTimeTimer(ts int64) { delete(c.proc, c.at(ts)) }
func (c *fakeCtx[W]) RawState(name string) RawState {
	return fakeRaw{c.state, fmt.Sprintf("%v/%s", c.w, name)}
}

func (c *fakeCtx[W]) MergeRawState(name string, merge func(acc, v []byte) ([]byte, error)) error {
	k := fmt.Sprintf("%v/%s", c.w, name)
	acc, have := c.state[k]
	for _, m := range c.merged {
		mk := fmt.Sprintf("%v/%s", m, name)
		v, ok := c.state[mk]
		if !ok {
			continue
		}
		delete(c.state, mk)
		if have {
			var err error
			if v, err = merge(acc, v); err != nil {
				return err
			}
		}
		acc, have = v, true
	}
	if have {
		c.state[k] = acc
	}
	return nil
}

func (c *fakeCtx[W]) Int64State(name string) Int64State {
	return fakeInt{fakeRaw{c.state, fmt.Sprintf("%v/%s", c.w, name)}}
}

func (c *fakeCtx[W]) MergeInt64State(name string, merge func(acc, v int64) int64) {
	c.MergeRawState(name, func(a, b []byte) ([]byte, error) {
		return binary.AppendVarint(nil, merge(dec(a), dec(b))), nil
	})
}

func dec(b []byte) int64 { v, _ := binary.Varint(b); return v }

// fakeInt keeps an int64 as varint bytes in the fake's state map.
type fakeInt struct{ fakeRaw }

func (f fakeInt) Get() (int64, bool) {
	b, ok := f.fakeRaw.Get()
	return dec(b), ok
}
func (f fakeInt) Update(v int64) { f.fakeRaw.Update(binary.AppendVarint(nil, v)) }

type fakeRaw struct {
	m map[string][]byte
	k string
}

func (r fakeRaw) Get() ([]byte, bool) { b, ok := r.m[r.k]; return b, ok }
func (r fakeRaw) Update(b []byte)     { r.m[r.k] = b }
func (r fakeRaw) Clear()              { delete(r.m, r.k) }

func onElement[W Window](t *testing.T, tr Trigger[W], c *fakeCtx[W], w W, ts int64, want TriggerResult) {
	t.Helper()
	c.w = w
	got, err := tr.OnElement(nil, ts, w, c)
	if err != nil || got != want {
		t.Fatalf("OnElement(%v, %d) = %v, %v; want %v", w, ts, got, err, want)
	}
}

// TestCountTriggerSeparationAndFiring follows Flink's
// CountTriggerTest.testWindowSeparationAndFiring and testClear.
func TestCountTriggerSeparationAndFiring(t *testing.T) {
	tr := CountTriggerOf[TimeWindow](3)
	c := newFake[TimeWindow]()
	a, b := TimeWindow{0, 2}, TimeWindow{2, 4}
	onElement[TimeWindow](t, tr, c, a, 0, Continue)
	onElement[TimeWindow](t, tr, c, a, 0, Continue)
	onElement[TimeWindow](t, tr, c, b, 2, Continue)
	onElement[TimeWindow](t, tr, c, b, 2, Continue)
	if len(c.state) != 2 {
		t.Fatalf("state %v", c.state)
	}
	onElement[TimeWindow](t, tr, c, a, 0, Fire)
	if len(c.state) != 1 {
		t.Fatalf("the fired window's count must be cleared: %v", c.state)
	}
	onElement[TimeWindow](t, tr, c, b, 2, Fire)
	if len(c.state) != 0 {
		t.Fatalf("state %v", c.state)
	}
	onElement[TimeWindow](t, tr, c, a, 0, Continue)
	c.w = a
	tr.Clear(a, c)
	if len(c.state) != 0 {
		t.Fatal("Clear leaves the count")
	}
}

// TestCountTriggerMerging follows Flink's CountTriggerTest.testMergingWindows:
// merged windows add up their counts.
func TestCountTriggerMerging(t *testing.T) {
	tr := CountTriggerOf[TimeWindow](3)
	c := newFake[TimeWindow]()
	onElement[TimeWindow](t, tr, c, TimeWindow{0, 2}, 0, Continue)
	onElement[TimeWindow](t, tr, c, TimeWindow{2, 4}, 2, Continue)
	onElement[TimeWindow](t, tr, c, TimeWindow{4, 6}, 4, Continue)
	c.w, c.merged = TimeWindow{0, 4}, []TimeWindow{{0, 2}, {2, 4}}
	if err := tr.OnMerge(TimeWindow{0, 4}, c); err != nil {
		t.Fatal(err)
	}
	if len(c.state) != 2 {
		t.Fatalf("state %v", c.state)
	}
	onElement[TimeWindow](t, tr, c, TimeWindow{0, 4}, 1, Fire)
	onElement[TimeWindow](t, tr, c, TimeWindow{4, 6}, 4, Continue)
}

// TestEventTimeTrigger follows Flink's EventTimeTriggerTest: a timer at the
// window's end, firing at once when the watermark passed it.
func TestEventTimeTrigger(t *testing.T) {
	tr := EventTimeTrigger{}
	c := newFake[TimeWindow]()
	w := TimeWindow{0, 2}
	onElement[TimeWindow](t, tr, c, w, 0, Continue)
	if !c.event["TimeWindow{start=0, end=2}@1"] {
		t.Fatalf("timers %v", c.event)
	}
	if r, _ := tr.OnEventTime(1, w, c); r != Fire {
		t.Fatal(r)
	}
	c.wm = 5
	onElement[TimeWindow](t, tr, c, w, 0, Fire)
	tr.Clear(w, c)
	if len(c.event) != 0 {
		t.Fatalf("Clear leaves %v", c.event)
	}
	c.w, c.wm = TimeWindow{0, 10}, 0
	tr.OnMerge(TimeWindow{0, 10}, c)
	if !c.event["TimeWindow{start=0, end=10}@9"] {
		t.Fatalf("merge timers %v", c.event)
	}
}

// TestContinuousEventTimeTrigger follows Flink's
// ContinuousEventTimeTriggerTest: firings at every interval boundary and at
// the window's end.
func TestContinuousEventTimeTrigger(t *testing.T) {
	tr := ContinuousEventTimeTriggerOf[TimeWindow](5 * time.Millisecond)
	c := newFake[TimeWindow]()
	w := TimeWindow{0, 12}
	onElement[TimeWindow](t, tr, c, w, 2, Continue)
	if !c.event["TimeWindow{start=0, end=12}@5"] || !c.event["TimeWindow{start=0, end=12}@11"] {
		t.Fatalf("timers %v", c.event)
	}
	c.wm = 5
	if r, _ := tr.OnEventTime(5, w, c); r != Fire {
		t.Fatal(r)
	}
	if !c.event["TimeWindow{start=0, end=12}@10"] {
		t.Fatalf("next firing %v", c.event)
	}
	if r, _ := tr.OnEventTime(7, w, c); r != Continue {
		t.Fatal(r)
	}
	if r, _ := tr.OnEventTime(11, w, c); r != Fire {
		t.Fatal(r)
	}
}

// TestPurgingAndDeltaTriggers: PurgingTrigger turns FIRE into
// FIRE_AND_PURGE; DeltaTrigger fires when the delta to the last firing's
// element exceeds the threshold, the first element only becoming the
// reference (Flink's DeltaTrigger).
func TestPurgingAndDeltaTriggers(t *testing.T) {
	delta := DeltaTriggerOf[int, GlobalWindow](50, func(a, b int) float64 { return float64(b - a) })
	if err := delta.Err(); err != nil {
		t.Fatal(err)
	}
	p := PurgingTriggerOf[GlobalWindow](delta)
	c := newFake[GlobalWindow]()
	for _, s := range []struct {
		v    int
		want TriggerResult
	}{{0, Continue}, {50, Continue}, {51, FireAndPurge}, {100, Continue}, {102, FireAndPurge}} {
		v := s.v
		if got, err := p.OnElement(&v, 0, GlobalWindow{}, c); err != nil || got != s.want {
			t.Fatalf("%d: %v, %v; want %v", v, got, err, s.want)
		}
	}
}

// TestEvictors: the count evictor keeps the last elements, the time
// evictor the ones within its size of the newest, the delta evictor the
// ones close to the last.
func TestEvictors(t *testing.T) {
	run := func(e Evictor[GlobalWindow], ts []int64) []int64 {
		el := &sliceElems{ts: ts, evicted: make([]bool, len(ts))}
		e.EvictBefore(el, GlobalWindow{}, nil)
		e.EvictAfter(el, GlobalWindow{}, nil)
		var out []int64
		for i, x := range ts {
			if !el.evicted[i] {
				out = append(out, x)
			}
		}
		return out
	}
	in := []int64{1, 5, 3, 9, 10}
	for _, c := range []struct {
		name string
		e    Evictor[GlobalWindow]
		want string
	}{
		{"count", CountEvictorOf[GlobalWindow](2), "[9 10]"},
		{"count after", CountEvictorOf[GlobalWindow](3, true), "[3 9 10]"},
		{"time", TimeEvictorOf[GlobalWindow](5 * time.Millisecond), "[9 10]"},
		{"delta", DeltaEvictorOf[int64, GlobalWindow](6, func(a, b int64) float64 { return float64(b - a) }), "[5 9 10]"},
	} {
		if got := fmt.Sprint(run(c.e, in)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

type sliceElems struct {
	ts      []int64
	evicted []bool
}

func (s *sliceElems) Len() int              { return len(s.ts) }
func (s *sliceElems) Value(i int) any       { return &s.ts[i] }
func (s *sliceElems) Timestamp(i int) int64 { return s.ts[i] }
func (s *sliceElems) Evict(i int)           { s.evicted[i] = true }
