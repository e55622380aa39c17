package state

import (
	"bytes"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
)

const migKeys = 60

// checkTimers fires every timer of s and compares them with fillV1's of
// the backend's groups.
func checkTimers(t *testing.T, b *Backend[string], s *v2states) {
	t.Helper()
	var want []Timer[string, int]
	for i := range migKeys {
		if k := migKey(i); b.Groups().Contains(b.KeyGroup(k)) {
			ns, ts := migTimer(i)
			want = append(want, Timer[string, int]{ts, k, ns})
		}
	}
	s.rec.fired = nil
	if err := s.tm.AdvanceWatermark(math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	var got []Timer[string, int]
	for _, f := range s.rec.fired {
		got = append(got, f.t)
	}
	if !slices.Equal(got, want) { // both in timestamp order
		t.Fatalf("timers fired %v, want %v", got, want)
	}
}

// TestMigrateRescale: the state of every kind of a program on rowV1,
// snapshotted, restores into a program on rowV2 (B dropped, C added) at
// parallelism 2, one backend registering its states before the restore and
// one after (the restored sections kept pending until then): every value
// reads as rowV2{A: old A}; the migrated state then works and snapshots
// in the new schema, which restores with no migration.
func TestMigrateRescale(t *testing.T) {
	src, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	fillV1(t, src, migKeys)
	snap := snapshot(t, src, KeyGroupRange{0, 15})

	lo, _ := newBackend[string](t, 16, KeyGroupRange{0, 6}, 0, nil)
	hi, _ := newBackend[string](t, 16, KeyGroupRange{7, 15}, 0, nil)
	los := registerV2(t, lo)
	if err := lo.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if err := hi.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	his := registerV2(t, hi)
	if n := checkV2(t, lo, los, migKeys) + checkV2(t, hi, his, migKeys); n != migKeys {
		t.Fatalf("checked %d keys of %d", n, migKeys)
	}

	// The migrated state runs with the new type.
	key := migKey(0)
	for i := 0; !hi.Groups().Contains(hi.KeyGroup(key)); i++ {
		key = migKey(i)
	}
	hi.SetCurrentKey(key)
	his.red.Add(rowV2{A: 1, C: 0.5})
	before, _ := his.red.Get()
	reSnap := snapshot(t, hi, KeyGroupRange{7, 15})
	if info, err := DescribeSnapshot(reSnap); err != nil || !slices.ContainsFunc(info.Schemas, func(s SchemaInfo) bool {
		return s.Name == "red" && s.Value == "struct { A int64; C float64 }"
	}) {
		t.Fatalf("schemas of the snapshot after migration: %+v, %v", info, err)
	}
	again, _ := newBackend[string](t, 16, KeyGroupRange{7, 15}, 0, nil)
	as := registerV2(t, again)
	if err := again.Restore(bytes.NewReader(reSnap)); err != nil {
		t.Fatal(err)
	}
	again.SetCurrentKey(key)
	if r, ok := as.red.Get(); !ok || r != before || r.C != 0.5 {
		t.Fatalf("reduced %v %v after a second restore, want %v", r, ok, before)
	}
	checkTimers(t, lo, los)
	checkTimers(t, hi, his)
}

// TestMigratePendingSnapshot: a restored state not registered is written
// again by the next snapshot under the schema it was read with, and
// migrates when a later program registers it.
func TestMigratePendingSnapshot(t *testing.T) {
	src, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	fillV1(t, src, migKeys)
	mid, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	if err := mid.Restore(bytes.NewReader(snapshot(t, src, KeyGroupRange{0, 15}))); err != nil {
		t.Fatal(err)
	}
	// the middle program registers only the list, as rowV2
	lst, err := GetListState(mid, ListDescriptor[rowV2]{Name: "lst"})
	if err != nil {
		t.Fatal(err)
	}
	mid.SetCurrentKey(migKey(3))
	if got := lst.Get(); !slices.Equal(got, []rowV2{{A: 3}, {A: 30}}) {
		t.Fatalf("list %v", got)
	}
	snap := snapshot(t, mid, KeyGroupRange{0, 15})
	info, err := DescribeSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for _, s := range info.Schemas {
		values[s.Name] = s.Value
	}
	if values["lst"] != "struct { A int64; C float64 }" || values["val"] != "struct { A int64; B string }" {
		t.Fatalf("schemas %v: the list's is the new type's, the pending value's the old one's", values)
	}
	last, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	if err := last.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if n := checkV2(t, last, registerV2(t, last), migKeys); n != migKeys {
		t.Fatalf("checked %d keys", n)
	}
}

type rowBad struct {
	A int64
	B float64
}

// TestMigrateRefused: a changed key, namespace or map user key schema fails
// the restore in Flink's words, and so does a field whose kind changed,
// naming the state, the field and both kinds; registered before or after
// the restore.
func TestMigrateRefused(t *testing.T) {
	src, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	fillV1(t, src, migKeys)
	snap := snapshot(t, src, KeyGroupRange{0, 15})
	all := KeyGroupRange{0, 15}
	cases := []struct {
		name     string
		register func(t *testing.T) (func() error, func() error)
		want     []string
	}{
		{"key", func(t *testing.T) (func() error, func() error) {
			b, _ := newBackend[int64](t, 16, all, 0, nil)
			return func() error { return b.Restore(bytes.NewReader(snap)) },
				func() error { _, err := GetValueState(b, ValueDescriptor[rowV1]{Name: "val"}); return err }
		}, []string{`ValueState "val": the new key serializer (int64) must be compatible with the previous key serializer (string)`}},
		{"namespace", func(t *testing.T) (func() error, func() error) {
			b, _ := newBackend[string](t, 16, all, 0, nil)
			return func() error { return b.Restore(bytes.NewReader(snap)) },
				func() error { _, err := NewValue[string, int32](b, ValueDescriptor[rowV1]{Name: "valns"}); return err }
		}, []string{`ValueState "valns": for heap backends, the new namespace serializer (int32) must be compatible with the old namespace serializer (int)`}},
		{"user key", func(t *testing.T) (func() error, func() error) {
			b, _ := newBackend[string](t, 16, all, 0, nil)
			return func() error { return b.Restore(bytes.NewReader(snap)) },
				func() error { _, err := GetMapState(b, MapDescriptor[int64, rowV1]{Name: "map"}); return err }
		}, []string{`MapState "map": the new serializer for a MapState requires state migration`, "user key int64, previously string",
			"migration for MapState currently only allows value schema evolutions"}},
		{"field kind", func(t *testing.T) (func() error, func() error) {
			b, _ := newBackend[string](t, 16, all, 0, nil)
			return func() error { return b.Restore(bytes.NewReader(snap)) },
				func() error { _, err := GetListState(b, ListDescriptor[rowBad]{Name: "lst"}); return err }
		}, []string{`ListState "lst": for heap backends, the new state serializer (struct { A int64; B float64 }) must not be incompatible with the old state serializer (struct { A int64; B string })`,
			"field B: string in the snapshot, float64 now"}},
	}
	for _, c := range cases {
		for _, first := range []string{"restore", "register"} {
			t.Run(c.name+"/"+first, func(t *testing.T) {
				restore, register := c.register(t)
				var err error
				if first == "restore" {
					if err = restore(); err != nil {
						t.Fatalf("restore before registering: %v", err)
					}
					err = register()
				} else {
					if err = register(); err != nil {
						t.Fatal(err)
					}
					err = restore()
				}
				if !errors.Is(err, ErrMigration) {
					t.Fatalf("error %v, want ErrMigration", err)
				}
				if c.name == "field kind" && !errors.Is(err, memory.ErrIncompatible) {
					t.Fatalf("error %v, want memory.ErrIncompatible", err)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error\n%v\nwants\n%s", err, w)
					}
				}
			})
		}
	}
}

// TestRestoreVersion1: snapshots written in format version 1, without
// schemas (testdata, written by weir before version 2), restore into the
// program that wrote them.
func TestRestoreVersion1(t *testing.T) {
	data, err := os.ReadFile("testdata/keyed-v1.snap")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := DescribeSnapshot(data); err != nil || len(info.Schemas) != 0 || len(info.Sections) == 0 {
		t.Fatalf("describe version 1: %+v, %v", info, err)
	}
	for _, groups := range []KeyGroupRange{{0, 15}, {0, 6}, {7, 15}} {
		b, _ := newBackend[string](t, 16, groups, 0, nil)
		if err := b.Restore(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		checkV1(t, b, registerV1(t, b), 40)
	}

	op, err := os.ReadFile("testdata/operator-v1.snap")
	if err != nil {
		t.Fatal(err)
	}
	s := NewOperatorStore(OperatorOptions{})
	defer s.Dispose()
	if err := s.Restore(bytes.NewReader(op)); err != nil {
		t.Fatal(err)
	}
	l, u, bc := registerOpV1(t, s)
	var wantL, wantU []rowV1
	for i := range 5 {
		wantL, wantU = append(wantL, migValue1(i)), append(wantU, migValue1(10+i))
		if v, ok := bc.Get(migKey(i)); !ok || v != migValue1(20+i) {
			t.Fatalf("broadcast %s: %v %v", migKey(i), v, ok)
		}
	}
	if !slices.Equal(l.Get(), wantL) || !slices.Equal(u.Get(), wantU) || bc.Len() != 5 {
		t.Fatalf("lists %v %v, broadcast %d entries", l.Get(), u.Get(), bc.Len())
	}
}

func registerOpV1(t testing.TB, s *OperatorStore) (ListState[rowV1], ListState[rowV1], *BroadcastState[string, rowV1]) {
	t.Helper()
	l, err1 := GetOperatorListState(s, ListDescriptor[rowV1]{Name: "ol"})
	u, err2 := GetUnionListState(s, ListDescriptor[rowV1]{Name: "ou"})
	bc, err3 := GetBroadcastState(s, MapDescriptor[string, rowV1]{Name: "ob"})
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	return l, u, bc
}

// TestMigrateOperatorState: split, union and broadcast state of rowV1 from
// two subtasks repartition to three and restore as rowV2, registered before
// or after the restore; a broadcast key of another schema and a field of
// another kind are refused.
func TestMigrateOperatorState(t *testing.T) {
	var old [][]byte
	var wantSplit, wantUnion []rowV2
	for sub := range 2 {
		s := NewOperatorStore(OperatorOptions{})
		l, u, bc := registerOpV1(t, s)
		for i := range 5 {
			r := rowV1{int64(100*sub + i), "gone"}
			l.Add(r)
			u.Add(r)
			wantSplit, wantUnion = append(wantSplit, v2of(r)), append(wantUnion, v2of(r))
			bc.Put(migKey(i), migValue1(i))
		}
		old = append(old, opSnap(t, s))
		s.Dispose()
	}
	parts, err := RepartitionOperatorState(old, 3)
	if err != nil {
		t.Fatal(err)
	}
	var gotSplit []rowV2
	for i, p := range parts {
		s := NewOperatorStore(OperatorOptions{})
		defer s.Dispose()
		register := func() (ListState[rowV2], ListState[rowV2], *BroadcastState[string, rowV2]) {
			l, err1 := GetOperatorListState(s, ListDescriptor[rowV2]{Name: "ol"})
			u, err2 := GetUnionListState(s, ListDescriptor[rowV2]{Name: "ou"})
			bc, err3 := GetBroadcastState(s, MapDescriptor[string, rowV2]{Name: "ob"})
			if err := errors.Join(err1, err2, err3); err != nil {
				t.Fatal(err)
			}
			return l, u, bc
		}
		var l, u ListState[rowV2]
		var bc *BroadcastState[string, rowV2]
		if i%2 == 0 {
			l, u, bc = register()
		}
		if err := s.Restore(bytes.NewReader(p)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			l, u, bc = register()
		}
		gotSplit = append(gotSplit, l.Get()...)
		if !slices.Equal(u.Get(), wantUnion) {
			t.Fatalf("subtask %d: union %v, want %v", i, u.Get(), wantUnion)
		}
		for j := range 5 {
			if v, ok := bc.Get(migKey(j)); !ok || v != v2of(migValue1(j)) || bc.Len() != 5 {
				t.Fatalf("subtask %d: broadcast %s: %v %v", i, migKey(j), v, ok)
			}
		}
	}
	if !slices.Equal(gotSplit, wantSplit) {
		t.Fatalf("split lists %v, want %v", gotSplit, wantSplit)
	}

	s := NewOperatorStore(OperatorOptions{})
	defer s.Dispose()
	if err := s.Restore(bytes.NewReader(parts[0])); err != nil {
		t.Fatal(err)
	}
	_, err = GetBroadcastState(s, MapDescriptor[int64, rowV2]{Name: "ob"})
	if !errors.Is(err, ErrMigration) || !strings.Contains(err.Error(), "the new key serializer (int64) must be compatible with the previous key serializer (string)") {
		t.Fatalf("broadcast key changed: %v", err)
	}
	_, err = GetUnionListState(s, ListDescriptor[rowBad]{Name: "ou"})
	if !errors.Is(err, memory.ErrIncompatible) || !strings.Contains(err.Error(), `union list state "ou"`) || !strings.Contains(err.Error(), "field B: string in the snapshot, float64 now") {
		t.Fatalf("field kind changed: %v", err)
	}
}

// BenchmarkRestoreMigrate restores 10,000 keys of a ValueState of rowV1 as
// rowV1 (read by the codec) and as rowV2 (read through a migration).
func BenchmarkRestoreMigrate(b *testing.B) {
	src, _ := newBackend[string](b, 16, KeyGroupRange{0, 15}, 0, nil)
	v, err := GetValueState(src, ValueDescriptor[rowV1]{Name: "val"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		src.SetCurrentKey(migKey(i))
		v.Update(migValue1(i))
	}
	snap := snapshot(b, src, KeyGroupRange{0, 15})
	run := func(b *testing.B, register func(*Backend[string]) error) {
		for b.Loop() {
			dst, err := NewBackend[string](Options{MaxParallelism: 16, Groups: KeyGroupRange{0, 15}})
			if err != nil {
				b.Fatal(err)
			}
			if err := register(dst); err != nil {
				b.Fatal(err)
			}
			if err := dst.Restore(bytes.NewReader(snap)); err != nil {
				b.Fatal(err)
			}
			dst.Dispose()
		}
	}
	b.Run("same", func(b *testing.B) {
		run(b, func(d *Backend[string]) error {
			_, err := GetValueState(d, ValueDescriptor[rowV1]{Name: "val"})
			return err
		})
	})
	b.Run("migrated", func(b *testing.B) {
		run(b, func(d *Backend[string]) error {
			_, err := GetValueState(d, ValueDescriptor[rowV2]{Name: "val"})
			return err
		})
	})
}

// TestCaptureMigrates: a capture (the asynchronous snapshot) records the
// schemas as Snapshot does: its bytes restore migrated.
func TestCaptureMigrates(t *testing.T) {
	src, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	s := fillV1(t, src, migKeys)
	c, err := src.Capture(KeyGroupRange{0, 15})
	if err != nil {
		t.Fatal(err)
	}
	src.SetCurrentKey(migKey(1)) // a write after the capture is not in it
	s.val.Update(rowV1{A: -1})
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c.Release()
	dst, _ := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
	if err := dst.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if n := checkV2(t, dst, registerV2(t, dst), migKeys); n != migKeys {
		t.Fatalf("checked %d keys", n)
	}
}
