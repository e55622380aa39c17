package state

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRegisterNewTimers runs the same random registrations, deletions,
// advances and snapshot restores against two timer services: one registers
// every timer with RegisterEventTimeTimer, the other with
// RegisterNewEventTimeTimer whenever the timer is not queued (what the
// window operator guarantees), so that its timers stay unindexed until a
// deletion, a deduplicating registration or a snapshot indexes them. Both
// fire the same timers in the same order, hold the same number, and count
// the same bytes.
func TestRegisterNewTimers(t *testing.T) {
	type side struct {
		b   *Backend[string]
		ts  *Timers[string, int]
		rec *recorder[string, int]
	}
	mk := func() side {
		b, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
		rec := &recorder[string, int]{b: b}
		ts, err := NewTimers[string, int](b, "timers", rec)
		if err != nil {
			t.Fatal(err)
		}
		return side{b, ts, rec}
	}
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		plain, fresh := mk(), mk()
		queued := map[Timer[string, int]]bool{} // the event-time timers queued
		for _, s := range []*side{&plain, &fresh} {
			s.rec.more = nil
		}
		drop := func(fired []fired[string, int]) {
			for _, f := range fired {
				delete(queued, f.t)
			}
		}
		wm := int64(0)
		for i := 0; i < 3000; i++ {
			key, ns := keyName(r.IntN(25)), r.IntN(3)
			tsv := wm + int64(r.IntN(40))
			tm := Timer[string, int]{tsv, key, ns}
			plain.b.SetCurrentKey(key)
			fresh.b.SetCurrentKey(key)
			switch op := r.IntN(20); {
			case op < 12:
				plain.ts.RegisterEventTimeTimer(ns, tsv)
				if queued[tm] {
					fresh.ts.RegisterEventTimeTimer(ns, tsv)
				} else {
					fresh.ts.RegisterNewEventTimeTimer(ns, tsv)
				}
				queued[tm] = true
			case op < 14:
				plain.ts.DeleteEventTimeTimer(ns, tsv)
				fresh.ts.DeleteEventTimeTimer(ns, tsv)
				delete(queued, tm)
			case op < 18:
				wm += int64(r.IntN(15))
				plain.rec.fired, fresh.rec.fired = nil, nil
				if err := plain.ts.AdvanceWatermark(wm); err != nil {
					t.Fatal(err)
				}
				if err := fresh.ts.AdvanceWatermark(wm); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(plain.rec.fired, fresh.rec.fired) {
					t.Fatalf("seed %d step %d: fired\n%v\nwant\n%v", seed, i, fresh.rec.fired, plain.rec.fired)
				}
				drop(plain.rec.fired)
			default:
				// snapshot both and restore each into a new backend at the
				// watermark, which fires what was registered at it since
				var f [2][]fired[string, int]
				for j, s := range []*side{&plain, &fresh} {
					data := snapshot(t, s.b, KeyGroupRange{0, 15})
					n := mk()
					if err := n.b.Restore(bytes.NewReader(data)); err != nil {
						t.Fatal(err)
					}
					if err := n.ts.AdvanceWatermark(wm); err != nil {
						t.Fatal(err)
					}
					*s, f[j] = n, n.rec.fired
				}
				if !slices.Equal(f[0], f[1]) {
					t.Fatalf("seed %d step %d: restored fired\n%v\nwant\n%v", seed, i, f[1], f[0])
				}
				drop(f[0])
			}
			if plain.ts.NumEventTimeTimers() != len(queued) || fresh.ts.NumEventTimeTimers() != len(queued) {
				t.Fatalf("seed %d step %d: %d and %d timers, want %d", seed, i, plain.ts.NumEventTimeTimers(), fresh.ts.NumEventTimeTimers(), len(queued))
			}
			if plain.b.MemoryUsed() != fresh.b.MemoryUsed() {
				t.Fatalf("seed %d step %d: %d bytes, want %d", seed, i, fresh.b.MemoryUsed(), plain.b.MemoryUsed())
			}
		}
		for _, s := range []*side{&plain, &fresh} {
			if s.rec.bad != "" || s.b.Err() != nil {
				t.Fatal(s.rec.bad, s.b.Err())
			}
		}
	}
}

// TestCaptureOfUnindexedTimers: timers registered without an index, a
// capture, then every timer fires before the capture is written: the
// capture still holds them all, and the live service none. (Indexing them
// for the capture must not leave the index it shares with the capture
// writable.)
func TestCaptureOfUnindexedTimers(t *testing.T) {
	clock := int64(1000)
	s := newCowState(t, &clock)
	want := map[fired[string, int]]bool{}
	for i := range 200 {
		key, ns, ts := keyName(i%40), i%3, int64(10+i%7)
		s.b.SetCurrentKey(key)
		f := fired[string, int]{Timer[string, int]{ts, key, ns}, true}
		if want[f] {
			continue
		}
		s.tm.RegisterNewEventTimeTimer(ns, ts)
		want[f] = true
	}
	c, err := s.b.Capture(KeyGroupRange{0, 15})
	if err != nil {
		t.Fatal(err)
	}
	if got := drain(t, s.b, s.tm); len(got) != len(want) {
		t.Fatalf("%d timers fired, want %d", len(got), len(want))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c.Release()
	r := restoreInto(t, buf.Bytes(), clock)
	got := drain(t, r.b, r.tm)
	var wantList []fired[string, int]
	for f := range want {
		wantList = append(wantList, f)
	}
	if !slices.Equal(sortFired(got), sortFired(wantList)) {
		t.Fatalf("the capture restores %d timers, want the %d registered before it", len(got), len(wantList))
	}
}
