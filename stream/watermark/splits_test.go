package watermark

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

// heldBack is a BeforeEventGenerator that computes the watermark ts - 1
// after each event but emits it only ahead of an event at or below it + 1.
type heldBack struct{ pending, emitted int64 }

func (g *heldBack) OnEvent(_ event, ts int64, _ Output) { g.pending = max(g.pending, ts-1) }
func (g *heldBack) OnPeriodicEmit(Output)               {}
func (g *heldBack) OnTimestamps([]int64)                { panic("a BeforeEventGenerator was given a batch") }
func (g *heldBack) OnBeforeEvent(_ event, ts int64, out Output) {
	if g.pending > g.emitted && g.pending >= ts-1 {
		out.EmitWatermark(g.pending)
		g.emitted = g.pending
	}
}

// heldBackBatch is heldBack taking a batch's timestamps at once.
type heldBackBatch struct{ heldBack }

func (g *heldBackBatch) OnTimestamps(ts []int64) {
	for _, t := range ts {
		g.pending = max(g.pending, t-1)
	}
}

func (g *heldBackBatch) OnBeforeTimestamps(ts []int64, out Output) int {
	g.OnBeforeEvent(event{}, ts[0], out)
	p := g.pending
	for j := 1; j < len(ts); j++ {
		p = max(p, ts[j-1]-1)
		if p > g.emitted && p >= ts[j]-1 {
			return j
		}
	}
	return len(ts)
}

// TestSplitsBeforeTimestamps: a BeforeTimestampsGenerator's split takes
// batches, and the loop a source runs over a batch (Stamp, then Ahead, emit,
// Observe until none is left) gives the events and watermarks in the order
// Collect gives them one at a time.
func TestSplitsBeforeTimestamps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var events []event
	for i := range 500 {
		events = append(events, event{fmt.Sprint("e", i), int64(i*3 - r.IntN(10))})
	}
	run := func(batch bool) string {
		var log []string
		out := &funcOutput{emit: func(wm int64) { log = append(log, fmt.Sprint("wm ", wm)) }}
		s := ForGenerator(func(Context) Generator[event] { return &heldBackBatch{heldBack{pending: Min, emitted: Min}} }).
			WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
		sp, err := NewSplits(s, Context{}, out)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := sp.Split("x")
		if !x.Batches() {
			t.Fatal("a BeforeTimestampsGenerator's split takes no batches")
		}
		emit := func(e event, ts int64) { log = append(log, fmt.Sprint(e.Name, "@", ts)) }
		for b := range slices.Chunk(events, 64) {
			if !batch {
				for _, e := range b {
					if err := x.Collect(e, Min, emit); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			ts := make([]int64, len(b))
			n, err := x.Stamp(b, Min, ts)
			if err != nil {
				t.Fatal(err)
			}
			for lo := 0; lo < n; {
				hi := lo + x.Ahead(ts[lo:n])
				for i := lo; i < hi; i++ {
					emit(b[i], ts[i])
				}
				x.Observe(ts[lo:hi])
				lo = hi
			}
		}
		return strings.Join(log, ", ")
	}
	one, batched := run(false), run(true)
	if one != batched || strings.Count(one, "wm") < 20 {
		t.Fatalf("%d watermarks one at a time, batched:\n%s\n%s", strings.Count(one, "wm"), one, batched)
	}
}

// TestSplitsBeforeEvent: a watermark OnBeforeEvent emits goes ahead of the
// event, and such a split is not handed batches even when its generator is
// a TimestampGenerator; WithIdleness passes OnBeforeEvent on.
func TestSplitsBeforeEvent(t *testing.T) {
	for _, idle := range []bool{false, true} {
		var log []string
		out := &funcOutput{emit: func(wm int64) { log = append(log, fmt.Sprint("wm ", wm)) }}
		s := ForGenerator(func(Context) Generator[event] { return &heldBack{pending: Min, emitted: Min} }).
			WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
		if idle {
			s = s.WithIdleness(time.Hour)
		}
		sp, err := NewSplits(s, Context{}, out)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := sp.Split("x")
		if x.Batches() {
			t.Fatal("a BeforeEventGenerator's split takes batches")
		}
		for _, e := range []event{{"a", 10}, {"b", 20}, {"c", 15}, {"d", 30}, {"e", 29}} {
			if err := x.Collect(e, Min, func(e event, ts int64) { log = append(log, fmt.Sprint(e.Name, "@", ts)) }); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := strings.Join(log, ", "), "a@10, b@20, wm 19, c@15, d@30, wm 29, e@29"; got != want {
			t.Fatalf("idleness %v: got %q, want %q", idle, got, want)
		}
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

// TestSplitPassthrough: only a split without a timestamp assigner whose
// generator ignores events (NoWatermarks) may skip Collect.
func TestSplitPassthrough(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Strategy[event]
		want bool
	}{
		{"NoWatermarks", NoWatermarks[event](), true},
		{"NoWatermarks with an assigner", NoWatermarks[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS }), false},
		{"NoWatermarks with idleness", NoWatermarks[event]().WithIdleness(time.Second), false},
		{"monotonous", ForMonotonousTimestamps[event](), false},
	} {
		sp, err := NewSplits(c.s, Context{}, &testingOutput{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sp.Split("a")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Passthrough(); got != c.want {
			t.Errorf("%s: Passthrough() = %v, want %v", c.name, got, c.want)
		}
	}
}
