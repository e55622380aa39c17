package watermark

import (
	"strings"
	"testing"
)

// TestPeriodic: a custom periodic generator folds events into its state and
// emits at every periodic emission only.
func TestPeriodic(t *testing.T) {
	var count int64
	g := Periodic(func(_ event, _ int64) { count++ }, func() (int64, bool) { return count * 10, count > 0 })
	out := &testingOutput{}
	g.OnPeriodicEmit(out) // nothing yet
	g.OnEvent(event{}, 1, out)
	g.OnEvent(event{}, 2, out)
	g.OnPeriodicEmit(out)
	g.OnEvent(event{}, 3, out)
	g.OnPeriodicEmit(out)
	if got := strings.Join(out.calls, " "); got != "20 30" {
		t.Fatalf("reported %q, want %q", got, "20 30")
	}
}

// TestPunctuated: a punctuated generator emits on the marked events only,
// never periodically; Funcs with nil functions does nothing.
func TestPunctuated(t *testing.T) {
	g := Punctuated(func(e event, ts int64) (int64, bool) { return ts - 1, strings.HasPrefix(e.Name, "wm") })
	out := &testingOutput{}
	for i, name := range []string{"a", "wm1", "b", "wm2"} {
		g.OnEvent(event{Name: name}, int64(10*(i+1)), out)
		g.OnPeriodicEmit(out)
	}
	if got := strings.Join(out.calls, " "); got != "19 39" {
		t.Fatalf("reported %q, want %q", got, "19 39")
	}
	var f Funcs[event]
	f.OnEvent(event{}, 1, out)
	f.OnPeriodicEmit(out)
	if len(out.calls) != 2 {
		t.Fatalf("empty Funcs reported %v", out.calls[2:])
	}
}
