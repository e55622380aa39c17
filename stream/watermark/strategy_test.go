package watermark

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type event struct {
	Name string
	TS   int64
}

// TestStrategy follows Flink's WatermarkStrategyTest: the default assigner
// keeps the record's timestamp, a function assigner replaces it, and
// WithIdleness wraps the generator while keeping the assigner.
func TestStrategy(t *testing.T) {
	t.Run("testDefaultTimeStampAssigner", func(t *testing.T) {
		s := ForMonotonousTimestamps[event]()
		if ts, err := s.Assigner().Extract(event{}, 13); err != nil || ts != 13 {
			t.Fatalf("got %d %v, want the record's timestamp 13", ts, err)
		}
	})
	t.Run("testLambdaTimestampAssigner", func(t *testing.T) {
		s := ForMonotonousTimestamps[event]().WithTimestampAssigner(func(event, int64) int64 { return 42 })
		if ts, err := s.Assigner().Extract(event{}, 13); err != nil || ts != 42 {
			t.Fatalf("got %d %v, want 42", ts, err)
		}
	})
	t.Run("testWithIdlenessHelper", func(t *testing.T) {
		s := ForMonotonousTimestamps[event]().WithIdleness(7 * 24 * time.Hour)
		if ts, _ := s.Assigner().Extract(event{}, 13); ts != 13 {
			t.Fatalf("the assigner changed: %d", ts)
		}
		g, err := s.NewGenerator(Context{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := g.(*Idleness[event]); !ok {
			t.Fatalf("generator %T, want *Idleness", g)
		}
	})
	t.Run("generators", func(t *testing.T) {
		for _, c := range []struct {
			name string
			s    Strategy[event]
			want string
		}{
			{"bounded", ForBoundedOutOfOrderness[event](100 * time.Millisecond), "899"},
			{"monotonous", ForMonotonousTimestamps[event](), "999"},
			{"none", NoWatermarks[event](), ""},
			{"zero", Strategy[event]{}, ""},
			{"generator", ForGenerator(func(Context) Generator[event] {
				return Punctuated(func(e event, ts int64) (int64, bool) { return ts, e.Name == "mark" })
			}), "1000"},
		} {
			g, err := c.s.NewGenerator(Context{})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			out := &testingOutput{}
			g.OnEvent(event{Name: "mark"}, 1000, out)
			g.OnPeriodicEmit(out)
			if got := strings.Join(out.calls, " "); got != c.want {
				t.Errorf("%s: reported %q, want %q", c.name, got, c.want)
			}
		}
	})
	t.Run("idlenessUsesTheContextClock", func(t *testing.T) {
		c := newManualClock()
		g, err := ForMonotonousTimestamps[event]().WithIdleness(10 * time.Millisecond).NewGenerator(Context{Clock: c})
		if err != nil {
			t.Fatal(err)
		}
		out := &testingOutput{}
		g.OnPeriodicEmit(out) // starts the countdown
		c.Advance(11 * time.Millisecond)
		g.OnPeriodicEmit(out)
		if got := strings.Join(out.calls, " "); got != "-9223372036854775808 idle" {
			t.Fatalf("reported %q", got)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for name, s := range map[string]Strategy[event]{
			"negative bound":   ForBoundedOutOfOrderness[event](-time.Second),
			"zero idleness":    ForMonotonousTimestamps[event]().WithIdleness(0),
			"negative idle":    NoWatermarks[event]().WithIdleness(-time.Second),
			"no generator fn":  ForGenerator[event](nil),
			"kept by builders": ForBoundedOutOfOrderness[event](-time.Second).WithIdleness(time.Second).WithTimestampAssigner(func(event, int64) int64 { return 0 }),
		} {
			if s.Err() == nil {
				t.Errorf("%s: no error", name)
			}
			if _, err := s.NewGenerator(Context{}); err == nil || err != s.Err() {
				t.Errorf("%s: NewGenerator returned %v, want %v", name, err, s.Err())
			}
		}
	})
	t.Run("buildersLeaveTheReceiver", func(t *testing.T) {
		base := ForMonotonousTimestamps[event]()
		_ = base.WithIdleness(time.Second).WithTimestampAssigner(func(event, int64) int64 { return 1 })
		g, _ := base.NewGenerator(Context{})
		if _, ok := g.(*Idleness[event]); ok {
			t.Error("WithIdleness changed its receiver")
		}
		if ts, _ := base.Assigner().Extract(event{}, 5); ts != 5 {
			t.Error("WithTimestampAssigner changed its receiver")
		}
	})
}

// TestAssignerError: a failing extractor is reported naming the record,
// wrapping the extractor's error.
func TestAssignerError(t *testing.T) {
	bad := errors.New("no time field")
	s := ForMonotonousTimestamps[event]().WithTimestampAssignerErr(func(e event, _ int64) (int64, error) {
		if e.TS < 0 {
			return 0, bad
		}
		return e.TS, nil
	})
	if ts, err := s.Assigner().Extract(event{"ok", 7}, Min); err != nil || ts != 7 {
		t.Fatalf("got %d %v", ts, err)
	}
	_, err := s.Assigner().Extract(event{"broken", -1}, Min)
	var te *TimestampError
	if !errors.As(err, &te) || !errors.Is(err, bad) {
		t.Fatalf("got %v, want a TimestampError wrapping the extractor's error", err)
	}
	if te.Record.(event).Name != "broken" || !strings.Contains(err.Error(), "{Name:broken TS:-1}") || !strings.HasPrefix(err.Error(), "watermark: ") {
		t.Fatalf("error %q does not name the record", err)
	}
}
