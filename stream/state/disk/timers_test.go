package disk_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/state/disk"
)

// fired is a timer as a target saw it fire.
type fired struct {
	event bool
	t     state.Timer[string, int]
}

func (f fired) String() string {
	return fmt.Sprintf("%v@%d/%s/%d", f.event, f.t.Timestamp, f.t.Key, f.t.Namespace)
}

// tside is a backend with a timer service whose target logs the timers
// that fire and, as a function of the timer alone, registers and deletes
// timers of its key while firing.
type tside struct {
	b   *state.Backend[string]
	tm  *state.Timers[string, int]
	log []fired
}

func (s *tside) OnEventTime(t state.Timer[string, int]) error {
	s.log = append(s.log, fired{true, t})
	s.react(t, s.tm.RegisterEventTimeTimer, s.tm.DeleteEventTimeTimer)
	return nil
}

func (s *tside) OnProcessingTime(t state.Timer[string, int]) error {
	s.log = append(s.log, fired{false, t})
	s.react(t, s.tm.RegisterProcessingTimeTimer, s.tm.DeleteProcessingTimeTimer)
	return nil
}

// react registers or deletes timers of the fired one's key: at its own
// time (fires in the same advance), before it (fires next), after it, or
// deletes a later one. The timers it registers, in namespaces 4 to 7, do
// not react in turn.
func (s *tside) react(t state.Timer[string, int], reg, del func(int, int64)) {
	if t.Namespace >= 4 {
		return
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d/%d", t.Key, t.Namespace, t.Timestamp)
	switch h.Sum32() % 6 {
	case 0:
		reg(t.Namespace+4, t.Timestamp)
	case 1:
		reg(t.Namespace+4, t.Timestamp-1)
	case 2:
		reg(t.Namespace+4, t.Timestamp+3)
	case 3:
		del((t.Namespace+2)%4, t.Timestamp+1)
	}
}

// timerBackend makes a backend for the timer tests: on disk with cache
// timers per queue, or on the heap.
func (e *env) timerBackend(onDisk bool, groups state.KeyGroupRange, cache int) *state.Backend[string] {
	e.t.Helper()
	o := state.Options{Name: "op", MaxParallelism: e.maxP, Groups: groups, Memory: e.mem, Clock: func() int64 { return e.now },
		Shared: e.shared, TimerCache: cache}
	if onDisk {
		st, err := disk.Open(disk.Options{Name: "op", Dir: e.dir, Memory: e.mem})
		if err != nil {
			e.t.Fatal(err)
		}
		o.Store = st
	}
	b, err := state.NewBackend[string](o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = b.Dispose() })
	return b
}

func (e *env) timerSide(b *state.Backend[string]) *tside {
	e.t.Helper()
	s := &tside{b: b}
	tm, err := state.NewTimers[string, int](b, "timers", s)
	if err != nil {
		e.t.Fatal(err)
	}
	s.tm = tm
	return s
}

// restoreSide restores snaps into a new backend and registers its timer
// service, before the restore when first.
func (e *env) restoreSide(onDisk bool, groups state.KeyGroupRange, cache int, first bool, snaps ...[]byte) *tside {
	e.t.Helper()
	b := e.timerBackend(onDisk, groups, cache)
	var s *tside
	if first {
		s = e.timerSide(b)
	}
	for _, snap := range snaps {
		if err := b.Restore(bytes.NewReader(snap)); err != nil {
			e.t.Fatal(err)
		}
	}
	if !first {
		s = e.timerSide(b)
	}
	return s
}

func fullSnapshot(t *testing.T, b *state.Backend[string]) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := b.Snapshot(&buf, b.Groups()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func incrementalSnapshot(t *testing.T, b *state.Backend[string]) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := b.SnapshotIncremental(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func captured(t *testing.T, b *state.Backend[string]) []byte {
	t.Helper()
	c, err := b.Capture(b.Groups())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameTimers checks that two sides fired the same timers in the same order
// and hold the same timers.
func sameTimers(t *testing.T, what string, want, got *tside) {
	t.Helper()
	if !slices.Equal(want.log, got.log) {
		for i := range min(len(want.log), len(got.log)) {
			if want.log[i] != got.log[i] {
				t.Fatalf("%s: fired %d: %v, want %v (of %d and %d)", what, i, got.log[i], want.log[i], len(got.log), len(want.log))
			}
		}
		t.Fatalf("%s: fired %d timers, want %d", what, len(got.log), len(want.log))
	}
	if a, b := want.tm.NumEventTimeTimers(), got.tm.NumEventTimeTimers(); a != b {
		t.Fatalf("%s: %d event-time timers, want %d", what, b, a)
	}
	if a, b := want.tm.NumProcessingTimeTimers(), got.tm.NumProcessingTimeTimers(); a != b {
		t.Fatalf("%s: %d processing-time timers, want %d", what, b, a)
	}
	wt, wok := want.tm.NextProcessingTime()
	gt, gok := got.tm.NextProcessingTime()
	if wt != gt || wok != gok {
		t.Fatalf("%s: next processing time %d %v, want %d %v", what, gt, gok, wt, wok)
	}
	for _, s := range []*tside{want, got} {
		if err := s.b.Err(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// TestTimersDifferential runs random registrations, deletions and advances
// of event and processing time on a heap and a disk timer service, with
// caches small enough that the disk path reads the store all the time, and
// snapshots and restores both at random points (the disk one by an
// incremental snapshot, its full one, a capture or the heap's snapshot; the
// heap one from its own or the disk's). The heap service is the oracle:
// the same timers fire in the same order, and full snapshots are equal
// byte for byte.
func TestTimersDifferential(t *testing.T) {
	seeds, steps := uint64(12), 5000
	if testing.Short() { // the race run: every max parallelism and cache size once
		seeds, steps = 4, 2000
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			maxP := []int{1, 8, 16}[seed%3]
			cache := []int{1, 8, 40, 0}[seed%4]
			e := newEnv(t, maxP, 0)
			e.shared = openDir(t, 1)
			all := state.KeyGroupRange{Start: 0, End: maxP - 1}
			heap := e.timerSide(e.timerBackend(false, all, 0))
			dsk := e.timerSide(e.timerBackend(true, all, cache))
			rng := rand.New(rand.NewPCG(seed, 3))
			ks := keys(30)
			wm, now := int64(0), int64(0)
			live := map[state.Timer[string, int]]bool{} // the event-time timers registered and not deleted since the last advance
			for step := range steps {
				key, ns := ks[rng.IntN(len(ks))], rng.IntN(4)
				ts := wm + int64(rng.IntN(30)) - 3
				switch op := rng.IntN(20); {
				case op < 6:
					for _, s := range []*tside{heap, dsk} {
						s.b.SetCurrentKey(key)
						s.tm.RegisterEventTimeTimer(ns, ts)
					}
					live[state.Timer[string, int]{Timestamp: ts, Key: key, Namespace: ns}] = true
				case op < 8:
					tm := state.Timer[string, int]{Timestamp: ts, Key: key, Namespace: ns}
					if live[tm] {
						break
					}
					for _, s := range []*tside{heap, dsk} {
						s.b.SetCurrentKey(key)
						s.tm.RegisterNewEventTimeTimer(ns, ts)
					}
					live[tm] = true
				case op < 10:
					pt := now + int64(rng.IntN(30))
					for _, s := range []*tside{heap, dsk} {
						s.b.SetCurrentKey(key)
						s.tm.RegisterProcessingTimeTimer(ns, pt)
					}
				case op < 12:
					for _, s := range []*tside{heap, dsk} {
						s.b.SetCurrentKey(key)
						s.tm.DeleteEventTimeTimer(ns, ts)
					}
					delete(live, state.Timer[string, int]{Timestamp: ts, Key: key, Namespace: ns})
				case op < 13:
					pt := now + int64(rng.IntN(30))
					for _, s := range []*tside{heap, dsk} {
						s.b.SetCurrentKey(key)
						s.tm.DeleteProcessingTimeTimer(ns, pt)
					}
				case op < 16:
					wm += int64(rng.IntN(12))
					for _, s := range []*tside{heap, dsk} {
						if err := s.tm.AdvanceWatermark(wm); err != nil {
							t.Fatal(err)
						}
					}
					clear(live) // timers registered by the callbacks are not tracked
				case op < 18:
					now += int64(rng.IntN(12))
					for _, s := range []*tside{heap, dsk} {
						if err := s.tm.AdvanceProcessingTime(now); err != nil {
							t.Fatal(err)
						}
					}
				case op < 19:
					if rng.IntN(8) != 0 {
						break
					}
					first := rng.IntN(2) == 0
					hs, ds := fullSnapshot(t, heap.b), fullSnapshot(t, dsk.b)
					if !bytes.Equal(hs, ds) {
						t.Fatalf("step %d: the disk backend's full snapshot (%d bytes) differs from the heap's (%d)", step, len(ds), len(hs))
					}
					var snap []byte
					how := rng.IntN(4)
					switch how {
					case 0:
						snap = incrementalSnapshot(t, dsk.b)
					case 1:
						snap = ds
					case 2:
						snap = captured(t, dsk.b)
					case 3:
						snap = hs
					}
					hsnap := hs
					if rng.IntN(2) == 0 {
						hsnap = ds
					}
					nh := e.restoreSide(false, all, 0, first, hsnap)
					nd := e.restoreSide(true, all, cache, first, snap)
					for _, s := range []*tside{nh, nd} {
						s.tm.RestoreWatermark(wm)
						s.log = slices.Clone(heap.log)
					}
					heap, dsk = nh, nd
					sameTimers(t, fmt.Sprintf("step %d: restored (%d, first %v)", step, how, first), heap, dsk)
				default:
					// the watermark at the end of input fires everything
					for _, s := range []*tside{heap, dsk} {
						if err := s.tm.AdvanceWatermark(math.MaxInt64 - 1); err != nil {
							t.Fatal(err)
						}
					}
				}
				sameTimers(t, fmt.Sprintf("step %d", step), heap, dsk)
			}
			if len(heap.log) < steps*2/5 {
				t.Fatalf("only %d timers fired", len(heap.log))
			}
		})
	}
}

// TestTimersRescale restores the timers of two subtasks at parallelism 1,
// 2 and 3: disk subtasks from their incremental snapshots (the whole store
// or its key groups clipped out), disk subtasks from the full snapshot of
// a heap backend, and heap subtasks from the disk subtasks' full
// snapshots. The oracle is a heap backend of every key group restored from
// its own snapshot: each new subtask fires exactly the oracle's timers of
// its key groups, in the oracle's order.
func TestTimersRescale(t *testing.T) {
	const maxP = 16
	for _, p := range []int{1, 2, 3} {
		for how, name := range []string{"incremental", "heap to disk", "disk to heap"} {
			t.Run(fmt.Sprintf("%d/%s", p, name), func(t *testing.T) {
				e := newEnv(t, maxP, 0)
				e.shared = openDir(t, 1)
				all := state.KeyGroupRange{Start: 0, End: maxP - 1}
				oracle := e.timerSide(e.timerBackend(false, all, 0))
				var subs []*tside
				for i := range 2 {
					subs = append(subs, e.timerSide(e.timerBackend(true, groupsOf(t, maxP, 2, i), 8)))
				}
				ownerOf := func(subs []*tside, key string) *tside {
					for _, s := range subs {
						if s.b.Groups().Contains(s.b.KeyGroup(key)) {
							return s
						}
					}
					t.Fatalf("no subtask owns %q", key)
					return nil
				}
				rng := rand.New(rand.NewPCG(uint64(p), uint64(how)))
				ks := keys(60)
				register := func(subs []*tside, n int, wm, now int64) {
					for range n {
						key, ns, ts := ks[rng.IntN(len(ks))], rng.IntN(4), wm+int64(rng.IntN(40))
						event := rng.IntN(3) != 0
						for _, s := range []*tside{oracle, ownerOf(subs, key)} {
							s.b.SetCurrentKey(key)
							if event {
								s.tm.RegisterEventTimeTimer(ns, ts)
							} else {
								s.tm.RegisterProcessingTimeTimer(ns, now+ts)
							}
						}
					}
				}
				register(subs, 3000, 0, 0)
				if err := oracle.tm.AdvanceWatermark(10); err != nil {
					t.Fatal(err)
				}
				for _, s := range subs {
					if err := s.tm.AdvanceWatermark(10); err != nil {
						t.Fatal(err)
					}
				}
				// the snapshots, and the new subtasks restored from them
				osnap := fullSnapshot(t, oracle.b)
				var snaps [][]byte
				for _, s := range subs {
					if how == 0 {
						snaps = append(snaps, incrementalSnapshot(t, s.b))
					} else {
						snaps = append(snaps, fullSnapshot(t, s.b))
					}
				}
				oracle = e.restoreSide(false, all, 0, false, osnap)
				var restored []*tside
				for i := range p {
					mine := groupsOf(t, maxP, p, i)
					var from [][]byte
					switch how {
					case 1:
						from = [][]byte{osnap}
					default:
						for o, snap := range snaps {
							if groupsOf(t, maxP, 2, o).Intersect(mine).Len() > 0 {
								from = append(from, snap)
							}
						}
					}
					restored = append(restored, e.restoreSide(how != 2, mine, 8, i%2 == 1, from...))
				}
				n := 0
				for _, s := range restored {
					n += s.tm.NumEventTimeTimers()
				}
				if want := oracle.tm.NumEventTimeTimers(); n != want || n == 0 {
					t.Fatalf("restored %d event-time timers, want %d", n, want)
				}
				register(restored, 500, 10, 0)
				for _, s := range append([]*tside{oracle}, restored...) {
					if err := s.tm.AdvanceWatermark(math.MaxInt64 - 1); err != nil {
						t.Fatal(err)
					}
					if err := s.tm.AdvanceProcessingTime(math.MaxInt64 - 1); err != nil {
						t.Fatal(err)
					}
					if err := s.b.Err(); err != nil {
						t.Fatal(err)
					}
				}
				total := 0
				for i, s := range restored {
					var want []fired
					for _, f := range oracle.log {
						if s.b.Groups().Contains(s.b.KeyGroup(f.t.Key)) {
							want = append(want, f)
						}
					}
					total += len(s.log)
					sameTimers(t, fmt.Sprintf("subtask %d", i), &tside{b: oracle.b, tm: s.tm, log: want}, s)
				}
				if total != len(oracle.log) || total < 2000 {
					t.Fatalf("the subtasks fired %d timers, the oracle %d", total, len(oracle.log))
				}
			})
		}
	}
}

// TestTimersMemoryBounded registers many timers on a disk backend under a
// small budget: the timers live in the store, the backend's memory stays
// within the cache's bound whatever their number (while a heap backend's
// exceeds the budget), and they fire in (time, registration) order, the
// order of a naive sort.
func TestTimersMemoryBounded(t *testing.T) {
	const cache = 256
	n, budget := 100000, int64(16<<20)
	if testing.Short() { // the race run: a quarter of the timers under a quarter of the budget
		n, budget = 25000, 4<<20
	}
	e := newEnv(t, 128, budget)
	all := state.KeyGroupRange{Start: 0, End: 127}
	dsk := e.timerSide(e.timerBackend(true, all, cache))
	heap := e.timerSide(e.timerBackend(false, all, 0))
	rng := rand.New(rand.NewPCG(1, 1))
	ks := keys(5000)
	type reg struct {
		t state.Timer[string, int]
		i int
	}
	var regs []reg
	seen := map[state.Timer[string, int]]bool{}
	// the bound: the per-group structures and cache timers of at most 200
	// bytes each (the key and namespace codecs' bytes included)
	bound := int64(2*128*64 + 2*(cache+128)*200)
	var peak int64
	for i := range n {
		tm := state.Timer[string, int]{Timestamp: int64(rng.IntN(20000)), Key: ks[rng.IntN(len(ks))], Namespace: 4 + rng.IntN(4)}
		for _, s := range []*tside{dsk, heap} {
			s.b.SetCurrentKey(tm.Key)
			if i < n/2 && !seen[tm] { // the window operator's registrations, then the general ones
				s.tm.RegisterNewEventTimeTimer(tm.Namespace, tm.Timestamp)
			} else {
				s.tm.RegisterEventTimeTimer(tm.Namespace, tm.Timestamp)
			}
		}
		if !seen[tm] {
			seen[tm] = true
			regs = append(regs, reg{tm, i})
		}
		peak = max(peak, dsk.b.MemoryUsed())
	}
	if err := dsk.b.Err(); err != nil {
		t.Fatalf("disk backend: %v", err)
	}
	if err := heap.b.Err(); err == nil || !errors.Is(err, memory.ErrBudgetExceeded) {
		t.Fatalf("heap backend of %d timers under a budget of %d bytes: %v", len(regs), e.mem.Budget(), err)
	}
	if got := dsk.tm.NumEventTimeTimers(); got != len(regs) {
		t.Fatalf("%d timers, want %d", got, len(regs))
	}
	if err := dsk.tm.AdvanceWatermark(math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	peak = max(peak, dsk.b.MemoryUsed())
	if peak > bound {
		t.Fatalf("the disk backend held %d bytes for %d timers, more than the bound of %d", peak, len(regs), bound)
	}
	slices.SortStableFunc(regs, func(a, b reg) int { return cmp.Compare(a.t.Timestamp, b.t.Timestamp) })
	if len(dsk.log) != len(regs) {
		t.Fatalf("fired %d timers, want %d", len(dsk.log), len(regs))
	}
	for i, r := range regs {
		if got := dsk.log[i]; !got.event || got.t != r.t {
			t.Fatalf("fired %d: %v, want %v", i, got, r.t)
		}
	}
	if dsk.tm.NumEventTimeTimers() != 0 {
		t.Fatalf("%d timers left", dsk.tm.NumEventTimeTimers())
	}
}

// TestDescribeIncrementalTimers: an incremental snapshot names its timer
// services among the store's contents, and its heap part holds no timers.
func TestDescribeIncrementalTimers(t *testing.T) {
	e := newEnv(t, 8, 0)
	e.shared = openDir(t, 1)
	s := e.timerSide(e.timerBackend(true, state.KeyGroupRange{Start: 0, End: 7}, 0))
	for i, k := range keys(20) {
		s.b.SetCurrentKey(k)
		s.tm.RegisterEventTimeTimer(i%4, int64(i))
	}
	info, err := state.DescribeSnapshot(incrementalSnapshot(t, s.b))
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, st := range info.Stored {
		stored = append(stored, st.Name+" "+st.Kind)
	}
	if !slices.Equal(stored, []string{"timers timers"}) || len(info.Sections) != 0 || len(info.Schemas) != 1 || info.Schemas[0].Key == "" {
		t.Fatalf("described stored %v, sections %v, schemas %v", stored, info.Sections, info.Schemas)
	}
}

// TestIncrementalTimersSchema: a timer service restored from an
// incremental snapshot and registered with another namespace type is
// refused, as a full snapshot's is.
func TestIncrementalTimersSchema(t *testing.T) {
	e := newEnv(t, 8, 0)
	e.shared = openDir(t, 1)
	all := state.KeyGroupRange{Start: 0, End: 7}
	s := e.timerSide(e.timerBackend(true, all, 0))
	s.b.SetCurrentKey("a")
	s.tm.RegisterEventTimeTimer(1, 5)
	snap := incrementalSnapshot(t, s.b)
	b := e.timerBackend(true, all, 0)
	if err := b.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	_, err := state.NewTimers[string, string](b, "timers", nopTimers{})
	if !errors.Is(err, state.ErrMigration) {
		t.Fatalf("registered with another namespace: %v", err)
	}
}

type nopTimers struct{}

func (nopTimers) OnEventTime(state.Timer[string, string]) error      { return nil }
func (nopTimers) OnProcessingTime(state.Timer[string, string]) error { return nil }
