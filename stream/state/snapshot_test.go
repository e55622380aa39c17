package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// statesOf returns the states of b under k's oracle.
func (k *kinds) statesOf(t testing.TB, b *Backend[string]) *kinds {
	n := newKinds(t, b)
	n.oVal, n.oLst, n.oMap, n.oRed, n.oAgg = k.oVal, k.oLst, k.oMap, k.oRed, k.oAgg
	return n
}

// filled returns a backend over all 16 groups with random state of every
// kind and random timers, and its oracle.
func filled(t testing.TB, seed uint64, keys int) (*Backend[string], *kinds, *Timers[string, int]) {
	b, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	k := newKinds(t, b)
	tm, err := NewTimers[string, int](b, "timers", &recorder[string, int]{b: b})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 11))
	for i := 0; i < 2000; i++ {
		key, ns := keyName(r.IntN(keys)), r.IntN(4)
		k.step(r, b, key, ns)
		switch r.IntN(4) {
		case 0:
			tm.RegisterEventTimeTimer(ns, int64(r.IntN(1000)))
		case 1:
			tm.RegisterProcessingTimeTimer(ns, int64(r.IntN(1000)))
		}
	}
	return b, k, tm
}

// drain fires every timer and returns them in firing order.
func drain(t testing.TB, b *Backend[string], tm *Timers[string, int]) []fired[string, int] {
	t.Helper()
	rec := &recorder[string, int]{b: b}
	tm.target = rec
	if err := tm.AdvanceWatermark(math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if err := tm.AdvanceProcessingTime(math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if rec.bad != "" {
		t.Fatal(rec.bad)
	}
	return rec.fired
}

func snapshot(t testing.TB, b *Backend[string], groups KeyGroupRange) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := b.Snapshot(&buf, groups); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortFired(f []fired[string, int]) []fired[string, int] {
	f = slices.Clone(f)
	slices.SortFunc(f, func(a, b fired[string, int]) int {
		switch {
		case a.t.Timestamp != b.t.Timestamp:
			return int(a.t.Timestamp - b.t.Timestamp)
		case a.event != b.event:
			if a.event {
				return -1
			}
			return 1
		case a.t.Key != b.t.Key:
			return strings.Compare(a.t.Key, b.t.Key)
		}
		return a.t.Namespace - b.t.Namespace
	})
	return f
}

// TestSnapshotRoundTrip: a full snapshot restored into one backend, and into
// two backends that split the key groups (one registering its states before
// the restore, one after), gives back every state and every timer.
func TestSnapshotRoundTrip(t *testing.T) {
	const keys = 40
	for seed := uint64(1); seed <= 3; seed++ {
		src, k, tm := filled(t, seed, keys)
		data := snapshot(t, src, KeyGroupRange{0, 15})

		// one backend, states registered first
		one, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
		k1 := k.statesOf(t, one)
		tm1, _ := NewTimers[string, int](one, "timers", &recorder[string, int]{b: one})
		if err := one.Restore(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		k1.checkAll(t, one, keys)
		if one.MemoryUsed() != src.MemoryUsed() {
			t.Errorf("restored state holds %d bytes, the original %d", one.MemoryUsed(), src.MemoryUsed())
		}

		// two backends of split ranges: the low one restores the full
		// snapshot before registering its states, the high one reads a
		// snapshot of its groups only, registered first.
		lo, _ := newBackend[string](t, 16, KeyGroupRange{0, 6}, 0, nil)
		hi, _ := newBackend[string](t, 16, KeyGroupRange{7, 15}, 0, nil)
		if err := lo.Restore(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		kl := k.statesOf(t, lo)
		tml, _ := NewTimers[string, int](lo, "timers", &recorder[string, int]{b: lo})
		kh := k.statesOf(t, hi)
		tmh, _ := NewTimers[string, int](hi, "timers", &recorder[string, int]{b: hi})
		if err := hi.Restore(bytes.NewReader(snapshot(t, src, KeyGroupRange{7, 15}))); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < keys; i++ {
			key := keyName(i)
			for ns := 0; ns < 4; ns++ {
				if lo.KeyGroup(key) <= 6 {
					kl.check(t, lo, key, ns)
				} else {
					kh.check(t, hi, key, ns)
				}
			}
		}
		if lo.MemoryUsed()+hi.MemoryUsed() != src.MemoryUsed() {
			t.Errorf("split state holds %d + %d bytes, the original %d", lo.MemoryUsed(), hi.MemoryUsed(), src.MemoryUsed())
		}

		want := drain(t, src, tm)
		if got := drain(t, one, tm1); !slices.Equal(sortFired(got), sortFired(want)) {
			t.Fatalf("restored timers fire\n%v\nwant\n%v", got, want)
		}
		split := append(drain(t, lo, tml), drain(t, hi, tmh)...)
		if !slices.Equal(sortFired(split), sortFired(want)) {
			t.Fatalf("split timers fire\n%v\nwant\n%v", split, want)
		}
		for _, b := range []*Backend[string]{src, one, lo, hi} {
			if b.Err() != nil {
				t.Fatal(b.Err())
			}
		}
	}
}

// TestSnapshotOfPendingState: sections restored for states never registered
// are written again by the next snapshot, so they survive a checkpoint taken
// before the operator asks for them.
func TestSnapshotOfPendingState(t *testing.T) {
	src, k, _ := filled(t, 5, 20)
	mid, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	if err := mid.Restore(bytes.NewReader(snapshot(t, src, KeyGroupRange{0, 15}))); err != nil {
		t.Fatal(err)
	}
	if mid.MemoryUsed() == 0 {
		t.Fatal("pending sections are not counted")
	}
	again := snapshot(t, mid, KeyGroupRange{0, 15})
	dst, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	kd := k.statesOf(t, dst)
	if err := dst.Restore(bytes.NewReader(again)); err != nil {
		t.Fatal(err)
	}
	kd.checkAll(t, dst, 20)
	if err := mid.Dispose(); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotLeavesOutExpired: Flink's full-snapshot cleanup.
func TestSnapshotLeavesOutExpired(t *testing.T) {
	c := &clock{}
	b, _ := newBackend[int64](t, 8, KeyGroupRange{0, 7}, 0, c.read)
	cfg := TTLConfig{TTL: 10 * time.Millisecond}
	v, _ := GetValueState(b, ValueDescriptor[string]{Name: "v", TTL: cfg})
	l, _ := GetListState(b, ListDescriptor[int]{Name: "l", TTL: cfg})
	b.SetCurrentKey(1)
	v.Update("old")
	l.Add(1)
	c.now = 5
	b.SetCurrentKey(2)
	v.Update("new")
	l.Add(2)
	b.SetCurrentKey(1)
	l.Add(3)
	c.now = 12
	var buf bytes.Buffer
	if err := b.Snapshot(&buf, KeyGroupRange{0, 7}); err != nil {
		t.Fatal(err)
	}
	c2 := &clock{now: 12}
	r, _ := newBackend[int64](t, 8, KeyGroupRange{0, 7}, 0, c2.read)
	rv, _ := GetValueState(r, ValueDescriptor[string]{Name: "v", TTL: cfg})
	rl, _ := GetListState(r, ListDescriptor[int]{Name: "l", TTL: cfg})
	if err := r.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	r.SetCurrentKey(1)
	if got, ok := rv.Value(); ok {
		t.Errorf("expired value restored: %q", got)
	}
	if got := rl.Get(); !slices.Equal(got, []int{3}) {
		t.Errorf("list of key 1: %v, want [3]", got)
	}
	r.SetCurrentKey(2)
	if got, _ := rv.Value(); got != "new" {
		t.Errorf("value of key 2: %q", got)
	}
	// the TTL timestamps travel: what was written at 5 expires at 15
	c2.now = 15
	if got := rl.Get(); got != nil {
		t.Errorf("list of key 2 at 15: %v", got)
	}
}

// TestRestoreErrors: every truncation and every flipped byte of a snapshot
// is an error (never a panic); a snapshot of another max parallelism or of a
// state of another kind is refused with a message saying so.
func TestRestoreErrors(t *testing.T) {
	src, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	v, _ := GetValueState(src, ValueDescriptor[string]{Name: "v"})
	m, _ := GetMapState(src, MapDescriptor[string, int]{Name: "m"})
	tm, _ := NewTimers[string, Void](src, "t", &recorder[string, Void]{b: src})
	for i := 0; i < 5; i++ {
		src.SetCurrentKey(keyName(i))
		v.Update(keyName(i * 7))
		m.Put("x", i)
		tm.RegisterEventTimeTimer(Void{}, int64(i))
	}
	data := snapshot(t, src, KeyGroupRange{0, 15})
	restore := func(data []byte) error {
		b, err := NewBackend[string](Options{MaxParallelism: 16, Groups: KeyGroupRange{0, 15}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Dispose()
		GetValueState(b, ValueDescriptor[string]{Name: "v"})
		GetMapState(b, MapDescriptor[string, int]{Name: "m"})
		NewTimers[string, Void](b, "t", &recorder[string, Void]{b: b})
		return b.Restore(bytes.NewReader(data))
	}
	if err := restore(data); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n++ {
		if err := restore(data[:n]); !errors.Is(err, ErrCorruptSnapshot) {
			t.Fatalf("truncated at %d of %d: %v", n, len(data), err)
		}
	}
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x5a
		if err := restore(bad); err == nil {
			t.Fatalf("byte %d flipped: no error", i)
		}
	}
	if err := restore(append(slices.Clone(data), 0)); !errors.Is(err, ErrCorruptSnapshot) {
		t.Fatalf("trailing byte: %v", err)
	}
	other, _ := newBackend[string](t, 32, KeyGroupRange{0, 31}, 0, nil)
	if err := other.Restore(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "max parallelism") {
		t.Fatalf("max parallelism 32 from 16: %v", err)
	}
	kind, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	GetListState(kind, ListDescriptor[string]{Name: "v"})
	if err := kind.Restore(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "ValueState") {
		t.Fatalf("list restored from a value: %v", err)
	}
	late, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	if err := late.Restore(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if _, err := GetListState(late, ListDescriptor[string]{Name: "v"}); err == nil || !strings.Contains(err.Error(), "ValueState") {
		t.Fatalf("list registered over a restored value: %v", err)
	}
}

// FuzzRestore feeds arbitrary bytes to Restore into a backend with every kind
// of state registered, and into one that registers the migration tests'
// states after the restore (schema frames, migrations at registration): it
// must return (an error or not), never panic. DescribeSnapshot must accept
// what Restore does.
//
//	go test ./stream/state -run '^$' -fuzz FuzzRestore
func FuzzRestore(f *testing.F) {
	// small seeds: the fuzzer minimizes what it finds byte by byte
	src, _ := newBackend[string](f, 16, KeyGroupRange{0, 15}, 0, nil)
	k := newKinds(f, src)
	tm, _ := NewTimers[string, int](src, "timers", &recorder[string, int]{b: src})
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 12; i++ {
		k.step(r, src, keyName(i%3), i%2)
		tm.RegisterEventTimeTimer(i%2, int64(i))
	}
	f.Add(snapshot(f, src, KeyGroupRange{0, 15}))
	f.Add(snapshot(f, src, KeyGroupRange{3, 4}))
	f.Add([]byte{})
	mig, _ := newBackend[string](f, 16, KeyGroupRange{0, 15}, 0, nil)
	fillV1(f, mig, 3)
	f.Add(snapshot(f, mig, KeyGroupRange{0, 15}))
	if v1, err := os.ReadFile("testdata/keyed-v1.snap"); err == nil {
		f.Add(v1)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, fixChecksums(data)} {
			b, err := NewBackend[string](Options{MaxParallelism: 16, Groups: KeyGroupRange{0, 15}})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Restore(bytes.NewReader(in)); err == nil {
				if _, err := DescribeSnapshot(in); err != nil && !IsIncremental(in) {
					t.Fatalf("restored what DescribeSnapshot refuses: %v", err)
				}
				_, _ = GetValueState(b, ValueDescriptor[rowV2]{Name: "val"})
				_, _ = NewValue[string, int](b, ValueDescriptor[rowV2]{Name: "valns"})
				_, _ = GetListState(b, ListDescriptor[rowV2]{Name: "lst"})
				_, _ = GetMapState(b, MapDescriptor[string, rowV2]{Name: "map"})
				_, _ = GetReducingState(b, ReducingDescriptor[rowV2]{Name: "red", Reduce: reduceV2})
				_, _ = GetAggregatingState(b, AggregatingDescriptor[int64, rowV2, int64]{Name: "agg", Func: accV2{}})
				_, _ = NewTimers[string, int](b, "timers", &recorder[string, int]{b: b})
			}
			if err := b.Dispose(); err != nil {
				t.Fatal(err)
			}
		}
		b, err := NewBackend[string](Options{MaxParallelism: 16, Groups: KeyGroupRange{0, 15}})
		if err != nil {
			t.Fatal(err)
		}
		newKinds(t, b)
		NewTimers[string, int](b, "timers", &recorder[string, int]{b: b})
		_ = b.Restore(bytes.NewReader(data))
		// again with the checksums repaired, so that the mutations reach the
		// sections' decoding
		_ = b.Restore(bytes.NewReader(fixChecksums(data)))
		if err := b.Dispose(); err != nil {
			t.Fatal(err)
		}
	})
}

// fixChecksums rewrites the checksum of every whole frame of data.
func fixChecksums(data []byte) []byte {
	data = slices.Clone(data)
	for pos := 0; pos < len(data); {
		n, w := binary.Uvarint(data[pos+1:])
		if w <= 0 || n > uint64(len(data)) {
			break
		}
		end := pos + 1 + w + int(n)
		if end+4 > len(data) {
			break
		}
		crc := crc32.Update(0, castagnoli, data[pos:pos+1])
		crc = crc32.Update(crc, castagnoli, data[pos+1+w:end])
		binary.LittleEndian.PutUint32(data[end:], crc)
		pos = end + 4
	}
	return data
}

type userKey struct {
	User   string
	Region int32
}

type window struct{ Start, End int64 }

// TestWindowStateRescale keeps window contents as a window operator will: a
// list per (struct key, window) and an event-time timer per window at its
// end - 1; sessions merge their windows. A snapshot restored at parallelism
// 2 and 3 fires the same windows with the same contents.
func TestWindowStateRescale(t *testing.T) {
	const maxP = 16
	src, _ := newBackend[userKey](t, maxP, KeyGroupRange{0, maxP - 1}, 0, nil)
	contents, err := NewList[userKey, window](src, ListDescriptor[string]{Name: "window-contents"})
	if err != nil {
		t.Fatal(err)
	}
	timers, _ := NewTimers[userKey, window](src, "window-timers", &recorder[userKey, window]{b: src})
	r := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 500; i++ {
		k := userKey{keyName(r.IntN(12)), int32(r.IntN(3))}
		start := int64(r.IntN(20)) * 10
		w := window{start, start + 10}
		src.SetCurrentKey(k)
		contents.SetNamespace(w)
		contents.Add(fmt.Sprintf("e%d", i))
		timers.RegisterEventTimeTimer(w, w.End-1)
		if r.IntN(10) == 0 { // a session merges the next window into w
			next := window{w.End, w.End + 10}
			merged := window{w.Start, next.End}
			contents.MergeNamespaces(merged, []window{w, next})
			timers.DeleteEventTimeTimer(w, w.End-1)
			timers.DeleteEventTimeTimer(next, next.End-1)
			timers.RegisterEventTimeTimer(merged, merged.End-1)
		}
	}
	data := snapshot2(t, src)
	// emit fires every window and returns "key window: contents" lines.
	emit := func(b *Backend[userKey], l *List[userKey, window, string], tm *Timers[userKey, window]) []string {
		var out []string
		rec := &recorder[userKey, window]{b: b}
		rec.more = func(tmr Timer[userKey, window], _ bool) {
			l.SetNamespace(tmr.Namespace)
			out = append(out, fmt.Sprint(tmr.Key, tmr.Namespace, l.Get()))
			l.Clear()
		}
		tm.target = rec
		if err := tm.AdvanceWatermark(math.MaxInt64); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	var restored []string
	for _, p := range []int{2, 3} {
		var lines []string
		for i := 0; i < p; i++ {
			rng, _ := RangeForOperatorIndex(maxP, p, i)
			b, _ := newBackend[userKey](t, maxP, rng, 0, nil)
			if err := b.Restore(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			l, err := NewList[userKey, window](b, ListDescriptor[string]{Name: "window-contents"})
			if err != nil {
				t.Fatal(err)
			}
			tm, _ := NewTimers[userKey, window](b, "window-timers", nil2[userKey, window]())
			lines = append(lines, emit(b, l, tm)...)
			if b.MemoryUsed() != 0 {
				t.Fatalf("p %d op %d: %d bytes after every window fired and cleared", p, i, b.MemoryUsed())
			}
		}
		slices.Sort(lines)
		if restored == nil {
			restored = lines
		} else if !slices.Equal(lines, restored) {
			t.Fatalf("parallelism %d fires other windows than parallelism 2", p)
		}
	}
	if want := emit(src, contents, timers); !slices.Equal(restored, want) || len(want) == 0 {
		t.Fatalf("restored windows\n%v\nwant\n%v", restored, want)
	}
}

func snapshot2(t *testing.T, b *Backend[userKey]) []byte {
	var buf bytes.Buffer
	if err := b.Snapshot(&buf, b.Groups()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// nil2 is a target replaced before anything fires.
func nil2[K, N comparable]() Triggerable[K, N] { return &recorder[K, N]{} }
