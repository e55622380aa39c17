package state

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// cowState is a backend with every kind of state in namespaces (kinds), the
// single-value states of the Void namespace (slot tables), a map state with
// TTL and timers, with oracles for all but the TTL state.
type cowState struct {
	b     *Backend[string]
	k     *kinds
	val   *Value[string, Void, int64]
	red   *Reducing[string, Void, int64]
	ttl   *Map[string, Void, int, int]
	tm    *Timers[string, int]
	oVal  map[string]int64
	oRed  map[string]int64
	oTm   map[fired[string, int]]bool
	clock *int64
	wm    int64 // the event time the timers advanced to
}

func newCowState(t testing.TB, clock *int64) *cowState {
	t.Helper()
	b, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, func() int64 { return *clock })
	s := &cowState{b: b, k: newKinds(t, b), oVal: map[string]int64{}, oRed: map[string]int64{}, oTm: map[fired[string, int]]bool{}, clock: clock}
	s.register(t)
	return s
}

// register makes the Void, TTL and timer states of s.b.
func (s *cowState) register(t testing.TB) {
	t.Helper()
	var err error
	if s.val, err = NewValue[string, Void](s.b, ValueDescriptor[int64]{Name: "void-val"}); err != nil {
		t.Fatal(err)
	}
	if s.red, err = NewReducing[string, Void](s.b, ReducingDescriptor[int64]{Name: "void-red", Reduce: sum}); err != nil {
		t.Fatal(err)
	}
	if s.ttl, err = NewMap[string, Void](s.b, MapDescriptor[int, int]{Name: "ttl-map", TTL: TTLConfig{TTL: 50 * time.Millisecond, Update: OnReadAndWrite}}); err != nil {
		t.Fatal(err)
	}
	if s.tm, err = NewTimers[string, int](s.b, "timers", &recorder[string, int]{b: s.b}); err != nil {
		t.Fatal(err)
	}
}

// step applies one random change (or read) to s and its oracles.
func (s *cowState) step(r *rand.Rand, keys int) {
	key, ns := keyName(r.IntN(keys)), r.IntN(4)
	switch r.IntN(6) {
	case 0, 1:
		s.k.step(r, s.b, key, ns)
	case 2:
		s.b.SetCurrentKey(key)
		switch v := int64(r.IntN(100)); r.IntN(4) {
		case 0:
			s.val.Update(v)
			s.oVal[key] = v
		case 1:
			s.val.Clear()
			delete(s.oVal, key)
		case 2:
			s.red.Add(v)
			s.oRed[key] += v
		case 3:
			s.red.Clear()
			delete(s.oRed, key)
		}
	case 3:
		s.b.SetCurrentKey(key)
		uk := r.IntN(4)
		switch r.IntN(3) {
		case 0:
			s.ttl.Put(uk, r.IntN(100))
		case 1:
			s.ttl.Get(uk) // refreshes or expires it
		case 2:
			s.ttl.Remove(uk)
		}
	case 4:
		s.b.SetCurrentKey(key)
		f := fired[string, int]{Timer[string, int]{s.wm + int64(r.IntN(100)), key, ns}, r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			if f.event {
				s.tm.DeleteEventTimeTimer(ns, f.t.Timestamp)
			} else {
				s.tm.DeleteProcessingTimeTimer(ns, f.t.Timestamp)
			}
			delete(s.oTm, f)
		} else {
			switch {
			case f.event && !s.oTm[f] && r.IntN(2) == 0:
				s.tm.RegisterNewEventTimeTimer(ns, f.t.Timestamp)
			case f.event:
				s.tm.RegisterEventTimeTimer(ns, f.t.Timestamp)
			default:
				s.tm.RegisterProcessingTimeTimer(ns, f.t.Timestamp)
			}
			s.oTm[f] = true
		}
	case 5:
		if r.IntN(4) > 0 {
			*s.clock += int64(r.IntN(20))
			return
		}
		// the event-time timers due fire
		s.wm += int64(r.IntN(10))
		if err := s.tm.AdvanceWatermark(s.wm); err != nil {
			panic(err)
		}
		for f := range s.oTm {
			if f.event && f.t.Timestamp <= s.wm {
				delete(s.oTm, f)
			}
		}
	}
}

// oracle is a copy of s's oracles.
type oracle struct {
	k          *kinds
	val, red   map[string]int64
	tm         map[fired[string, int]]bool
	sync       []byte // the synchronous snapshot at the time
	now        int64
	ttlEntries map[string]map[int]int // the TTL state's live entries then
}

func (s *cowState) oracle(t testing.TB, keys int) *oracle {
	o := s.maps()
	o.sync = snapshot(t, s.b, KeyGroupRange{0, 15})
	return o
}

// maps is oracle without the synchronous snapshot, which indexes the
// timers: a capture that follows it finds none registered without an
// index.
func (s *cowState) maps() *oracle {
	o := &oracle{k: &kinds{oVal: maps.Clone(s.k.oVal), oMap: map[okey]map[string]int{}, oRed: maps.Clone(s.k.oRed), oAgg: maps.Clone(s.k.oAgg), oLst: map[okey][]int{}},
		val: maps.Clone(s.oVal), red: maps.Clone(s.oRed), tm: maps.Clone(s.oTm), now: *s.clock}
	for k, v := range s.k.oLst {
		o.k.oLst[k] = slices.Clone(v)
	}
	for k, v := range s.k.oMap {
		o.k.oMap[k] = maps.Clone(v)
	}
	return o
}

// ttlEntries reads the TTL state's live entries of every key, without
// changing them, from a backend restored at the time of the snapshot.
func ttlEntries(s *cowState, keys int) map[string]map[int]int {
	out := map[string]map[int]int{}
	for i := 0; i < keys; i++ {
		s.b.SetCurrentKey(keyName(i))
		for uk := range 4 {
			if v, ok := s.ttl.Get(uk); ok {
				if out[keyName(i)] == nil {
					out[keyName(i)] = map[int]int{}
				}
				out[keyName(i)][uk] = v
			}
		}
	}
	return out
}

// restoreInto restores data into a new backend with s's states and a
// clock fixed at now.
func restoreInto(t testing.TB, data []byte, now int64) *cowState {
	t.Helper()
	clock := now
	s := newCowState(t, &clock)
	if err := s.b.Restore(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return s
}

// verify checks that data, a capture's snapshot, restores to the oracle o
// and has the sections of the synchronous snapshot taken with it.
func verify(t testing.TB, data []byte, o *oracle, keys int) {
	t.Helper()
	got, err := DescribeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := DescribeSnapshot(o.sync)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Sections, want.Sections) {
		t.Fatalf("the capture's sections\n%v\nthe synchronous snapshot's\n%v", got.Sections, want.Sections)
	}
	s := restoreInto(t, data, o.now)
	s.k.oVal, s.k.oLst, s.k.oMap, s.k.oRed, s.k.oAgg = o.k.oVal, o.k.oLst, o.k.oMap, o.k.oRed, o.k.oAgg
	s.k.checkAll(t, s.b, keys)
	for i := 0; i < keys; i++ {
		key := keyName(i)
		s.b.SetCurrentKey(key)
		v, ok := s.val.Value()
		if w, wok := o.val[key]; v != w || ok != wok {
			t.Fatalf("%s: void value %d, %v; want %d, %v", key, v, ok, w, wok)
		}
		v, ok = s.red.Get()
		if w, wok := o.red[key]; v != w || ok != wok {
			t.Fatalf("%s: void reducing %d, %v; want %d, %v", key, v, ok, w, wok)
		}
	}
	syncState := restoreInto(t, o.sync, o.now)
	if g, w := ttlEntries(s, keys), ttlEntries(syncState, keys); !maps.EqualFunc(g, w, maps.Equal) {
		t.Fatalf("TTL state %v, the synchronous snapshot's %v", g, w)
	}
	var wantTm []fired[string, int]
	for f := range o.tm {
		wantTm = append(wantTm, f)
	}
	if got := drain(t, s.b, s.tm); !slices.Equal(sortFired(got), sortFired(wantTm)) {
		t.Fatalf("restored timers fire\n%v\nwant\n%v", sortFired(got), sortFired(wantTm))
	}
	if s.b.Err() != nil {
		t.Fatal(s.b.Err())
	}
}

// inFlight is a capture with the oracle at its time and, once its write
// started on a goroutine, the channel of its result.
type inFlight struct {
	c    *Capture
	o    *oracle
	done chan []byte
}

func (f *inFlight) start(t testing.TB) {
	f.done = make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		if _, err := f.c.WriteTo(&buf); err != nil {
			t.Error(err)
		}
		f.done <- buf.Bytes()
	}()
}

// TestCaptureDifferential changes every kind of state at random (puts,
// clears, adds, removes, namespace merges, TTL expiry, timers registered
// with and without an index, deleted and fired) with up to
// four captures in flight, their writes running on goroutines while the
// changes go on, and released in random order: each capture's snapshot
// restores to what the oracles held at its time and has the sections of
// a synchronous snapshot taken then.
func TestCaptureDifferential(t *testing.T) {
	const keys = 40
	for seed := uint64(1); seed <= 6; seed++ {
		clock := int64(1000)
		s := newCowState(t, &clock)
		r := rand.New(rand.NewPCG(seed, 3))
		var flight []*inFlight
		finish := func(i int) {
			f := flight[i]
			if f.done == nil {
				f.start(t)
			}
			data := <-f.done
			f.c.Release()
			flight = slices.Delete(flight, i, i+1)
			verify(t, data, f.o, keys)
		}
		for i := 0; i < 4000; i++ {
			s.step(r, keys)
			switch r.IntN(60) {
			case 0:
				if len(flight) < 4 {
					o := s.maps()
					c, err := s.b.Capture(KeyGroupRange{0, 15})
					if err != nil {
						t.Fatal(err)
					}
					o.sync = snapshot(t, s.b, KeyGroupRange{0, 15})
					flight = append(flight, &inFlight{c: c, o: o})
				}
			case 1:
				if len(flight) > 0 {
					if f := flight[r.IntN(len(flight))]; f.done == nil {
						f.start(t)
					}
				}
			case 2:
				if len(flight) > 0 {
					finish(r.IntN(len(flight)))
				}
			}
		}
		for len(flight) > 0 {
			finish(r.IntN(len(flight)))
		}
		if s.b.cow.need != 0 || len(s.b.cow.live) != 0 {
			t.Fatalf("copy-on-write still on after every capture was released: %+v", s.b.cow)
		}
		// the live state is the oracles' too
		s.k.checkAll(t, s.b, keys)
		verify(t, snapshot(t, s.b, KeyGroupRange{0, 15}), s.oracle(t, keys), keys)
	}
}

// TestCaptureThenChanges: a capture, then changes of every kind to every
// key, then the write: the snapshot is the state at the capture, and the
// live state has the changes.
func TestCaptureThenChanges(t *testing.T) {
	const keys = 30
	clock := int64(1000)
	s := newCowState(t, &clock)
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 3000; i++ {
		s.step(r, keys)
	}
	o := s.maps()
	c, err := s.b.Capture(KeyGroupRange{0, 15})
	if err != nil {
		t.Fatal(err)
	}
	o.sync = snapshot(t, s.b, KeyGroupRange{0, 15})
	for i := 0; i < keys; i++ {
		// a change of every kind to every key and namespace
		key := keyName(i)
		s.b.SetCurrentKey(key)
		s.val.Update(-1)
		s.oVal[key] = -1
		s.red.Add(5)
		s.oRed[key] += 5
		s.ttl.Put(7, 7)
		s.tm.RegisterEventTimeTimer(0, 5000)
		s.oTm[fired[string, int]{Timer[string, int]{5000, key, 0}, true}] = true
		s.tm.DeleteEventTimeTimer(1, 1)
		delete(s.oTm, fired[string, int]{Timer[string, int]{1, key, 1}, true})
		for ns := 0; ns < 4; ns++ {
			s.k.setNS(ns)
			o := okey{key, ns}
			s.k.val.Update("changed")
			s.k.oVal[o] = "changed"
			s.k.lst.Add(1)
			s.k.oLst[o] = append(s.k.oLst[o], 1)
			s.k.mp.Put("new", 1)
			if s.k.oMap[o] == nil {
				s.k.oMap[o] = map[string]int{}
			}
			s.k.oMap[o]["new"] = 1
			s.k.mp.Remove(keyName(0))
			delete(s.k.oMap[o], keyName(0))
			s.k.red.Clear()
			delete(s.k.oRed, o)
			s.k.agg.Add(3)
			a := s.k.oAgg[o]
			s.k.oAgg[o] = avg{a.Sum + 3, a.N + 1}
		}
		s.k.lst.MergeNamespaces(3, []int{0, 1, 2})
		for ns := 0; ns < 3; ns++ {
			s.k.oLst[okey{key, 3}] = append(s.k.oLst[okey{key, 3}], s.k.oLst[okey{key, ns}]...)
			delete(s.k.oLst, okey{key, ns})
		}
	}
	clock += 1000 // every TTL entry expires
	for i := 0; i < keys; i++ {
		s.b.SetCurrentKey(keyName(i))
		s.ttl.Get(7)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c.Release()
	verify(t, buf.Bytes(), o, keys)
	s.k.checkAll(t, s.b, keys)
	if _, err := c.WriteTo(&buf); err == nil {
		t.Fatal("WriteTo of a released capture did not fail")
	}
}

// TestCaptureOfPendingState: sections restored for states not registered
// are in a capture, and registering the state after the capture leaves the
// capture as it was.
func TestCaptureOfPendingState(t *testing.T) {
	const keys = 20
	clock := int64(1000)
	src := newCowState(t, &clock)
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 2000; i++ {
		src.step(r, keys)
	}
	o := src.oracle(t, keys)

	b, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, func() int64 { return clock })
	if err := b.Restore(bytes.NewReader(o.sync)); err != nil {
		t.Fatal(err)
	}
	c, err := b.Capture(KeyGroupRange{0, 15})
	if err != nil {
		t.Fatal(err)
	}
	late := &cowState{b: b, k: newKinds(t, b), clock: &clock}
	late.register(t)
	late.k.clearAll(b, keys)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c.Release()
	verify(t, buf.Bytes(), o, keys)
}
