package state

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type fired[K, N comparable] struct {
	t     Timer[K, N]
	event bool
}

// recorder is a Triggerable that records what fires and checks that the
// timer's key is the current key; then it calls more.
type recorder[K, N comparable] struct {
	b     *Backend[K]
	fired []fired[K, N]
	bad   string
	more  func(Timer[K, N], bool)
}

func (r *recorder[K, N]) on(t Timer[K, N], event bool) error {
	if r.b.CurrentKey() != t.Key && r.bad == "" {
		r.bad = fmt.Sprintf("timer %v fired with current key %v", t, r.b.CurrentKey())
	}
	r.fired = append(r.fired, fired[K, N]{t, event})
	if r.more != nil {
		r.more(t, event)
	}
	return nil
}

func (r *recorder[K, N]) OnEventTime(t Timer[K, N]) error      { return r.on(t, true) }
func (r *recorder[K, N]) OnProcessingTime(t Timer[K, N]) error { return r.on(t, false) }

// TestSetAndDeleteTimers follows Flink's InternalTimerServiceImplTest
// testSetAndFireEventTimeTimers, testDeleteEventTimeTimers and their
// processing-time twins: timers of two keys and two namespaces fire once
// each, deleted ones never.
func TestSetAndDeleteTimers(t *testing.T) {
	for _, event := range []bool{true, false} {
		b, _ := newBackend[int32](t, 128, KeyGroupRange{0, 127}, 0, nil)
		rec := &recorder[int32, string]{b: b}
		ts, err := NewTimers[int32, string](b, "timers", rec)
		if err != nil {
			t.Fatal(err)
		}
		reg, del, num := ts.RegisterEventTimeTimer, ts.DeleteEventTimeTimer, ts.NumEventTimeTimers
		advance := ts.AdvanceWatermark
		if !event {
			reg, del, num = ts.RegisterProcessingTimeTimer, ts.DeleteProcessingTimeTimer, ts.NumProcessingTimeTimers
			advance = ts.AdvanceProcessingTime
		}
		for _, k := range []int32{1, 2} {
			b.SetCurrentKey(k)
			reg("ciao", 10)
			reg("hello", 10)
			reg("hello", 10) // a duplicate keeps one timer
		}
		if num() != 4 {
			t.Fatalf("%d timers, want 4", num())
		}
		b.SetCurrentKey(1)
		del("hello", 10)
		b.SetCurrentKey(2)
		del("ciao", 10)
		del("ciao", 11) // absent: nothing happens
		if num() != 2 {
			t.Fatalf("%d timers after deleting, want 2", num())
		}
		if err := advance(9); err != nil || len(rec.fired) != 0 {
			t.Fatalf("advance(9): %v, fired %v", err, rec.fired)
		}
		if err := advance(10); err != nil {
			t.Fatal(err)
		}
		want := []fired[int32, string]{{Timer[int32, string]{10, 1, "ciao"}, event}, {Timer[int32, string]{10, 2, "hello"}, event}}
		if !slices.Equal(rec.fired, want) || rec.bad != "" {
			t.Fatalf("fired %v (%s), want %v", rec.fired, rec.bad, want)
		}
		if num() != 0 || b.MemoryUsed() != 0 {
			t.Fatalf("%d timers, %d bytes left", num(), b.MemoryUsed())
		}
	}
}

// TestNextProcessingTime follows Flink's
// testRegisterEarlierProcessingTimerMovesPhysicalProcessingTimer: the
// deadline the task waits for moves to an earlier timer.
func TestNextProcessingTime(t *testing.T) {
	b, _ := newBackend[int32](t, 128, KeyGroupRange{0, 127}, 0, nil)
	ts, _ := NewTimers[int32, string](b, "timers", &recorder[int32, string]{b: b})
	if _, ok := ts.NextProcessingTime(); ok {
		t.Fatal("a deadline without timers")
	}
	b.SetCurrentKey(7)
	ts.RegisterProcessingTimeTimer("ciao", 20)
	if next, _ := ts.NextProcessingTime(); next != 20 {
		t.Fatalf("next %d, want 20", next)
	}
	ts.RegisterProcessingTimeTimer("ciao", 10)
	if next, _ := ts.NextProcessingTime(); next != 10 {
		t.Fatalf("next %d, want 10", next)
	}
	ts.AdvanceProcessingTime(15)
	if next, _ := ts.NextProcessingTime(); next != 20 {
		t.Fatalf("next %d after 15, want 20", next)
	}
}

// otimer is the oracle's timer: a registration number orders equal times.
type otimer struct {
	t   Timer[string, int]
	seq int
}

// TestTimersAgainstOracle registers, deletes and fires random event- and
// processing-time timers and compares the order of firing with a sorted
// slice. Callbacks register timers too, some for times already passed, which
// fire in the same advance, as in Flink's loop.
func TestTimersAgainstOracle(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		b, _ := newBackend[string](t, 32, KeyGroupRange{0, 31}, 0, nil)
		rec := &recorder[string, int]{b: b}
		ts, _ := NewTimers[string, int](b, "timers", rec)
		oracle := [2][]otimer{} // event, processing
		seq := 0
		add := func(q int, tm Timer[string, int]) {
			for _, o := range oracle[q] {
				if o.t == tm {
					return
				}
			}
			seq++
			oracle[q] = append(oracle[q], otimer{tm, seq})
		}
		remove := func(q int, tm Timer[string, int]) {
			oracle[q] = slices.DeleteFunc(oracle[q], func(o otimer) bool { return o.t == tm })
		}
		// rule is what a callback registers when tm fires: a timer of its own
		// key at or before tm's time (so due in the same advance), sometimes.
		rule := func(tm Timer[string, int]) (Timer[string, int], bool) {
			if tm.Namespace >= 3 || tm.Timestamp%3 != 0 {
				return tm, false
			}
			return Timer[string, int]{tm.Timestamp - int64(tm.Namespace), tm.Key, tm.Namespace + 1}, true
		}
		rec.more = func(tm Timer[string, int], event bool) {
			if nt, ok := rule(tm); ok && event {
				ts.RegisterEventTimeTimer(nt.Namespace, nt.Timestamp)
			} else if ok {
				ts.RegisterProcessingTimeTimer(nt.Namespace, nt.Timestamp)
			}
		}
		var pending []fired[string, int]
		// fire pops the oracle's earliest due timer, applies the rule, and
		// goes on while timers are due.
		fire := func(q int, upTo int64, event bool) {
			for {
				slices.SortFunc(oracle[q], func(a, b otimer) int {
					return cmp.Or(cmp.Compare(a.t.Timestamp, b.t.Timestamp), cmp.Compare(a.seq, b.seq))
				})
				if len(oracle[q]) == 0 || oracle[q][0].t.Timestamp > upTo {
					return
				}
				tm := oracle[q][0].t
				pending = append(pending, fired[string, int]{tm, event})
				oracle[q] = oracle[q][1:]
				if nt, ok := rule(tm); ok {
					add(q, nt)
				}
			}
		}
		wm, now := int64(0), int64(0)
		for i := 0; i < 2000; i++ {
			key := keyName(r.IntN(20))
			ns := r.IntN(3)
			tsv := wm + int64(r.IntN(60)) - 5
			b.SetCurrentKey(key)
			tm := Timer[string, int]{tsv, key, ns}
			switch r.IntN(8) {
			case 0, 1, 2:
				ts.RegisterEventTimeTimer(ns, tsv)
				add(0, tm)
			case 3:
				ts.DeleteEventTimeTimer(ns, tsv)
				remove(0, tm)
			case 4:
				ptm := Timer[string, int]{now + tsv - wm, key, ns}
				ts.RegisterProcessingTimeTimer(ns, ptm.Timestamp)
				add(1, ptm)
			case 5:
				ptm := Timer[string, int]{now + tsv - wm, key, ns}
				ts.DeleteProcessingTimeTimer(ns, ptm.Timestamp)
				remove(1, ptm)
			case 6:
				wm += int64(r.IntN(20))
				rec.fired = rec.fired[:0]
				pending = pending[:0]
				if err := ts.AdvanceWatermark(wm); err != nil {
					t.Fatal(err)
				}
				fire(0, wm, true)
				compareFired(t, rec.fired, pending)
			case 7:
				now += int64(r.IntN(20))
				rec.fired = rec.fired[:0]
				pending = pending[:0]
				if err := ts.AdvanceProcessingTime(now); err != nil {
					t.Fatal(err)
				}
				fire(1, now, false)
				compareFired(t, rec.fired, pending)
			}
			if ts.NumEventTimeTimers() != len(oracle[0]) || ts.NumProcessingTimeTimers() != len(oracle[1]) {
				t.Fatalf("seed %d step %d: %d/%d timers, oracle %d/%d", seed, i, ts.NumEventTimeTimers(), ts.NumProcessingTimeTimers(), len(oracle[0]), len(oracle[1]))
			}
			if rec.bad != "" {
				t.Fatal(rec.bad)
			}
		}
		if ts.CurrentWatermark() != wm {
			t.Fatalf("watermark %d, want %d", ts.CurrentWatermark(), wm)
		}
		if b.Err() != nil {
			t.Fatal(b.Err())
		}
	}
}

func compareFired(t *testing.T, got, want []fired[string, int]) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("fired\n%v\nwant\n%v", got, want)
	}
}

// TestTimerBehindWatermark follows Flink's advanceWatermark loop, which peeks
// the queue again after every timer: a timer registered by a callback at or
// before the watermark fires in the same advance, after the timers due before
// it; one registered outside an advance for a time already passed waits for
// the next watermark.
func TestTimerBehindWatermark(t *testing.T) {
	b, _ := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 0, nil)
	rec := &recorder[int64, Void]{b: b}
	ts, _ := NewTimers[int64, Void](b, "t", rec)
	rec.more = func(tm Timer[int64, Void], _ bool) {
		if tm.Timestamp == 10 {
			ts.RegisterEventTimeTimer(Void{}, 5) // behind the watermark: fires now
			ts.RegisterEventTimeTimer(Void{}, 30)
		}
	}
	b.SetCurrentKey(1)
	ts.RegisterEventTimeTimer(Void{}, 10)
	ts.RegisterEventTimeTimer(Void{}, 20)
	if err := ts.AdvanceWatermark(25); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, f := range rec.fired {
		got = append(got, f.t.Timestamp)
	}
	if !slices.Equal(got, []int64{10, 5, 20}) {
		t.Fatalf("fired %v, want [10 5 20]", got)
	}
	rec.fired = nil
	b.SetCurrentKey(2)
	ts.RegisterEventTimeTimer(Void{}, 1)
	if len(rec.fired) != 0 {
		t.Fatal("a registration fired a timer")
	}
	if err := ts.AdvanceWatermark(25); err != nil || len(rec.fired) != 1 || rec.fired[0].t.Key != 2 {
		t.Fatalf("next advance: %v, fired %v", err, rec.fired)
	}
	if ts.NumEventTimeTimers() != 1 {
		t.Fatalf("%d timers, want the one at 30", ts.NumEventTimeTimers())
	}
}

func BenchmarkTimers(b *testing.B) {
	be, _ := newBackend[int64](b, 128, KeyGroupRange{0, 127}, 0, nil)
	ts, _ := NewTimers[int64, Void](be, "t", &recorder[int64, Void]{b: be})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		be.SetCurrentKey(int64(i % 10000))
		ts.RegisterEventTimeTimer(Void{}, int64(i/10))
		if i%1000 == 999 {
			ts.target.(*recorder[int64, Void]).fired = nil
			if err := ts.AdvanceWatermark(int64(i/10) - 50); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestTimerWindowsAllocs: the window operator's pattern, each key's timer at
// the end of the current window registered again for every element and the
// windows fired by a rising watermark, allocates nothing once the queue has
// seen a few windows, and fires every key's timer once per window.
func TestTimerWindowsAllocs(t *testing.T) {
	b, _ := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 0, nil)
	n := 0
	rec := &recorder[int64, int64]{b: b, more: func(Timer[int64, int64], bool) { n++ }}
	ts, _ := NewTimers[int64, int64](b, "timers", rec)
	const keys = 500
	end := int64(0)
	window := func() {
		end += 1000
		for i := 0; i < 4*keys; i++ {
			b.SetCurrentKey(int64(i % keys))
			ts.RegisterEventTimeTimer(end, end-1)
			ts.RegisterEventTimeTimer(end, end-1)
		}
		if ts.NumEventTimeTimers() != keys {
			t.Fatalf("%d timers queued, want %d", ts.NumEventTimeTimers(), keys)
		}
		rec.fired = rec.fired[:0]
		if err := ts.AdvanceWatermark(end - 1); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 8; i++ {
		window()
	}
	n = 0
	if allocs := testing.AllocsPerRun(10, window); allocs != 0 {
		t.Errorf("%v allocs per window", allocs)
	}
	if n != 11*keys { // AllocsPerRun runs once more to warm up
		t.Errorf("%d timers fired, want %d", n, 11*keys)
	}
}
