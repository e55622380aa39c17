package watermark

import (
	"strings"
	"testing"
	"time"
)

// TestWithWatermarkAlignment: the builder records Flink's
// WatermarkAlignmentParams (group, drift, update interval: one second by
// default), keeps them through the other builders in either order, and
// refuses an empty group, a negative drift and an interval under a
// millisecond.
func TestWithWatermarkAlignment(t *testing.T) {
	if a := ForMonotonousTimestamps[event]().Alignment(); a.Enabled() || a != (Alignment{}) {
		t.Fatalf("a strategy without alignment has %+v", a)
	}
	want := Alignment{Group: "g", MaxDrift: 100 * time.Millisecond, UpdateInterval: time.Second}
	assign := func(e event, _ int64) int64 { return e.TS }
	for name, s := range map[string]Strategy[event]{
		"alignment last": ForMonotonousTimestamps[event]().WithTimestampAssigner(assign).WithIdleness(time.Second).
			WithWatermarkAlignment("g", 100*time.Millisecond, 0),
		"alignment first": ForMonotonousTimestamps[event]().WithWatermarkAlignment("g", 100*time.Millisecond, time.Second).
			WithIdleness(time.Second).WithTimestampAssigner(assign),
	} {
		if err := s.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := s.Alignment(); got != want || !got.Enabled() {
			t.Fatalf("%s: alignment %+v, want %+v", name, got, want)
		}
		if ts, _ := s.Assigner().Extract(event{TS: 7}, 1); ts != 7 {
			t.Fatalf("%s: the assigner was lost: %d", name, ts)
		}
		g, err := s.NewGenerator(Context{Clock: newManualClock()})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := g.(*Idleness[event]); !ok {
			t.Fatalf("%s: generator %T, want *Idleness", name, g)
		}
	}
	for _, c := range []struct {
		group           string
		drift, interval time.Duration
		want            string
	}{
		{"", time.Second, time.Second, "without a group"},
		{"g", -time.Millisecond, time.Second, "is negative"},
		{"g", time.Second, time.Microsecond, "under a millisecond"},
		{"g", time.Second, -time.Second, "under a millisecond"},
	} {
		s := ForMonotonousTimestamps[event]().WithWatermarkAlignment(c.group, c.drift, c.interval)
		if err := s.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c, err, c.want)
		}
		if _, err := s.NewGenerator(Context{}); err == nil {
			t.Errorf("%+v: NewGenerator of an invalid strategy succeeded", c)
		}
	}
}

// TestPausedSplitDoesNotGoIdle follows Flink's
// SourceOperatorSplitWatermarkAlignmentTest
// (testMultiSplitWatermarkAlignmentAndIdleness): the time a split spends
// paused by watermark alignment does not count towards its idleness, so a
// paused split keeps holding the combined watermark; once resumed, the
// countdown goes on from where the pause stopped it.
func TestPausedSplitDoesNotGoIdle(t *testing.T) {
	c := newManualClock()
	out := &testingOutput{}
	s := ForMonotonousTimestamps[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS }).
		WithIdleness(100 * time.Millisecond)
	sp, err := NewSplits(s, Context{Clock: c}, out)
	if err != nil {
		t.Fatal(err)
	}
	emit := func(event, int64) {}
	ahead, _ := sp.Split("ahead")
	behind, _ := sp.Split("behind")
	if err := ahead.Collect(event{TS: 5}, Min, emit); err != nil {
		t.Fatal(err)
	}
	sp.SetPaused("ahead", true)
	sp.EmitPeriodic() // the countdown of "ahead" would start here
	for range 10 {
		c.Advance(99 * time.Millisecond)
		if err := behind.Collect(event{TS: 3}, Min, emit); err != nil {
			t.Fatal(err)
		}
		sp.EmitPeriodic()
	}
	if sp.Idle("ahead") {
		t.Fatal("the paused split went idle")
	}
	if wm, _ := out.lastWatermark(); wm != 2 {
		t.Fatalf("combined watermark %d, want 2: the paused split released the others", wm)
	}
	// resumed, the 990 ms paused do not count: idle only 100 ms of
	// running time after the countdown started
	sp.SetPaused("ahead", false)
	c.Advance(60 * time.Millisecond)
	sp.EmitPeriodic()
	if sp.Idle("ahead") {
		t.Fatal("idle 60 ms after the pause ended")
	}
	c.Advance(60 * time.Millisecond)
	sp.EmitPeriodic()
	if !sp.Idle("ahead") {
		t.Fatal("not idle 120 ms after the pause ended")
	}
	// SetPaused on a split without idleness, or unknown, does nothing
	sp.SetPaused("nobody", true)
}
