package watermark

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestSplits: each split has its own generator; a periodic round combines
// the splits' watermarks into their minimum, once; a released split stops
// holding the watermark back; events are emitted with their assigned
// timestamps before the watermarks they cause.
func TestSplits(t *testing.T) {
	out := &testingOutput{}
	s := ForBoundedOutOfOrderness[event](10 * time.Millisecond).WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
	sp, err := NewSplits(s, Context{}, out)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := sp.Split("a")
	b, _ := sp.Split("b")
	if again, _ := sp.Split("a"); again != a {
		t.Fatal("Split returned a new split for a known id")
	}
	var log []string
	emit := func(e event, ts int64) { log = append(log, fmt.Sprint(e.Name, "@", ts)) }
	for _, e := range []event{{"a1", 100}, {"a2", 300}} {
		if err := a.Collect(e, Min, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Collect(event{"b1", 200}, Min, emit); err != nil {
		t.Fatal(err)
	}
	if len(out.calls) != 0 {
		t.Fatalf("events reported %v before a periodic emission", out.calls)
	}
	sp.EmitPeriodic()
	sp.Release("b")
	sp.EmitPeriodic()
	if got, want := strings.Join(out.calls, " "), "189 289"; got != want {
		t.Fatalf("reported %q, want %q", got, want)
	}
	if got, want := strings.Join(log, " "), "a1@100 a2@300 b1@200"; got != want {
		t.Fatalf("emitted %q, want %q", got, want)
	}
}

// TestSplitsPunctuatedOrder: a watermark an event causes follows the event.
func TestSplitsPunctuatedOrder(t *testing.T) {
	var log []string
	out := &funcOutput{emit: func(wm int64) { log = append(log, fmt.Sprint("wm ", wm)) }}
	s := ForGenerator(func(Context) Generator[event] {
		return Punctuated(func(e event, ts int64) (int64, bool) { return ts, e.Name == "mark" })
	})
	sp, err := NewSplits(s, Context{}, out)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := sp.Split("x")
	for _, e := range []event{{"e", 0}, {"mark", 0}} {
		if err := x.Collect(e, 50, func(e event, ts int64) { log = append(log, fmt.Sprint(e.Name, "@", ts)) }); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(log, ", "), "e@50, mark@50, wm 50"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestSplitsErrors: an invalid strategy fails NewSplits; a failing assigner
// fails Collect naming the record and emits nothing.
func TestSplitsErrors(t *testing.T) {
	if _, err := NewSplits(ForBoundedOutOfOrderness[event](-1), Context{}, &testingOutput{}); err == nil {
		t.Fatal("NewSplits accepted an invalid strategy")
	}
	bad := errors.New("bad")
	s := NoWatermarks[event]().WithTimestampAssignerErr(func(event, int64) (int64, error) { return 0, bad })
	sp, _ := NewSplits(s, Context{}, &testingOutput{})
	x, _ := sp.Split("x")
	emitted := false
	err := x.Collect(event{"r", 1}, Min, func(event, int64) { emitted = true })
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "r") || emitted {
		t.Fatalf("got %v (emitted %v)", err, emitted)
	}
}

// TestSplitsRandom: random events over random splits, with random periodic
// rounds and releases, against a naive model: after a round, the combined
// watermark is the largest so far of the minimum over the live splits of
// (their largest timestamp - bound - 1, Min before any event).
func TestSplitsRandom(t *testing.T) {
	const bound = 5
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 4))
		out := &testingOutput{}
		sp, err := NewSplits(ForBoundedOutOfOrderness[event](bound*time.Millisecond), Context{}, out)
		if err != nil {
			t.Fatal(err)
		}
		largest := map[string]int64{} // per live split; absent: no event yet
		live := map[string]bool{}
		combined := Min
		for step := range 200 {
			id := fmt.Sprint(rng.IntN(4))
			switch rng.IntN(6) {
			case 0:
				if live[id] {
					sp.Release(id)
					delete(live, id)
					delete(largest, id)
				}
			case 1:
				sp.EmitPeriodic()
				if len(live) == 0 {
					continue
				}
				lowest := Max
				for l := range live {
					wm := Min
					if ts, ok := largest[l]; ok {
						wm = ts - bound - 1
					}
					lowest = min(lowest, wm)
				}
				combined = max(combined, lowest)
				if got := sp.Multiplexer().Combined(); got != combined {
					t.Fatalf("seed %d step %d: combined %d, want %d", seed, step, got, combined)
				}
				if wm, ok := out.lastWatermark(); combined != Min && (!ok || wm != combined) {
					t.Fatalf("seed %d step %d: last emitted %d, want %d", seed, step, wm, combined)
				}
			default:
				x, err := sp.Split(id)
				if err != nil {
					t.Fatal(err)
				}
				live[id] = true
				ts := rng.Int64N(1000)
				if err := x.Collect(event{}, ts, func(event, int64) {}); err != nil {
					t.Fatal(err)
				}
				if l, ok := largest[id]; !ok || ts > l {
					largest[id] = ts
				}
			}
		}
	}
}

// funcOutput is an Output of functions.
type funcOutput struct{ emit func(int64) }

func (o *funcOutput) EmitWatermark(wm int64) { o.emit(wm) }
func (o *funcOutput) MarkIdle()              {}
func (o *funcOutput) MarkActive()            {}
