package watermark

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestStampObserve: a split of a periodic generator (bounded
// out-of-orderness, ascending timestamps) batches; Stamp and Observe over
// random batches give the timestamps and watermarks that Collect gives one
// event at a time; a failing assigner stops Stamp at the failing event,
// with the error, having stamped those before it. Punctuated and idleness
// generators do not batch.
func TestStampObserve(t *testing.T) {
	for _, s := range []Strategy[event]{
		ForBoundedOutOfOrderness[event](7 * time.Millisecond).WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS }),
		ForMonotonousTimestamps[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS }),
		ForMonotonousTimestamps[event](),
	} {
		one, batch := &testingOutput{}, &testingOutput{}
		so, _ := NewSplits(s, Context{}, one)
		sb, _ := NewSplits(s, Context{}, batch)
		a, _ := so.Split("a")
		b, _ := sb.Split("a")
		if !b.Batches() {
			t.Fatal("a periodic generator's split does not batch")
		}
		r := rand.New(rand.NewPCG(1, 2))
		var want, got []int64
		var ts []int64
		for range 50 {
			evs := make([]event, r.IntN(40))
			for i := range evs {
				evs[i] = event{"e", int64(r.IntN(1000))}
			}
			carried := int64(r.IntN(1000))
			for _, e := range evs {
				if err := a.Collect(e, carried, func(_ event, ts int64) { want = append(want, ts) }); err != nil {
					t.Fatal(err)
				}
			}
			ts = append(ts[:0], make([]int64, len(evs))...)
			n, err := b.Stamp(evs, carried, ts)
			if err != nil || n != len(evs) {
				t.Fatal(n, err)
			}
			got = append(got, ts...)
			b.Observe(ts)
			so.EmitPeriodic()
			sb.EmitPeriodic()
		}
		if !slices.Equal(got, want) || !slices.Equal(batch.calls, one.calls) {
			t.Fatalf("stamped %v watermarks %v, want %v %v", got, batch.calls, want, one.calls)
		}
	}

	bad := errors.New("bad")
	s := ForBoundedOutOfOrderness[event](0).WithTimestampAssignerErr(func(e event, _ int64) (int64, error) {
		if e.Name == "x" {
			return 0, bad
		}
		return e.TS, nil
	})
	sp, _ := NewSplits(s, Context{}, &testingOutput{})
	x, _ := sp.Split("x")
	ts := make([]int64, 3)
	n, err := x.Stamp([]event{{"a", 5}, {"x", 6}, {"b", 7}}, Min, ts)
	if n != 1 || ts[0] != 5 || !errors.Is(err, bad) {
		t.Fatalf("Stamp = %d %v %v, want 1 [5 ...] and the assigner's error", n, ts, err)
	}

	for _, s := range []Strategy[event]{
		ForBoundedOutOfOrderness[event](0).WithIdleness(time.Second),
		ForGenerator(func(Context) Generator[event] {
			return Punctuated(func(e event, ts int64) (int64, bool) { return ts, true })
		}),
	} {
		sp, err := NewSplits(s, Context{}, &testingOutput{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := sp.Split("p")
		if err != nil {
			t.Fatal(err)
		}
		if p.Batches() {
			t.Error("a generator that is not a TimestampGenerator batches")
		}
	}
}
