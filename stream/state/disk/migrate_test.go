package disk_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream/state"
)

// A row that loses field B and gains field C between two programs.
type rowV1 struct {
	A int64
	B string
}

type rowV2 struct {
	A int64
	C float64
}

type accV1 struct{}

func (accV1) CreateAccumulator() rowV1   { return rowV1{} }
func (accV1) Add(v int64, a rowV1) rowV1 { return rowV1{a.A + v, a.B + "x"} }
func (accV1) GetResult(a rowV1) int64    { return a.A }
func (accV1) Merge(a, b rowV1) rowV1     { return rowV1{a.A + b.A, a.B + b.B} }

type accV2 struct{}

func (accV2) CreateAccumulator() rowV2   { return rowV2{} }
func (accV2) Add(v int64, a rowV2) rowV2 { return rowV2{a.A + v, a.C + 1} }
func (accV2) GetResult(a rowV2) int64    { return a.A }
func (accV2) Merge(a, b rowV2) rowV2     { return rowV2{a.A + b.A, a.C + b.C} }

// rows are the states of one program, of row type R and accumulator ACC.
type rows[R any] struct {
	b   *state.Backend[string]
	val state.ValueState[R]
	ns  *state.Value[string, int, R]
	lst state.ListState[R]
	mp  state.MapState[string, R]
	red state.ReducingState[R]
	agg state.AggregatingState[int64, int64]
}

func registerRows[R, ACC any](t testing.TB, b *state.Backend[string], reduce func(a, b R) R, agg state.AggregateFunction[int64, ACC, int64]) (*rows[R], error) {
	s := &rows[R]{b: b}
	var errs [6]error
	s.val, errs[0] = state.GetValueState(b, state.ValueDescriptor[R]{Name: "val"})
	s.ns, errs[1] = state.NewValue[string, int](b, state.ValueDescriptor[R]{Name: "ns"})
	s.lst, errs[2] = state.GetListState(b, state.ListDescriptor[R]{Name: "lst"})
	s.mp, errs[3] = state.GetMapState(b, state.MapDescriptor[string, R]{Name: "map"})
	s.red, errs[4] = state.GetReducingState(b, state.ReducingDescriptor[R]{Name: "red", Reduce: reduce})
	s.agg, errs[5] = state.GetAggregatingState(b, state.AggregatingDescriptor[int64, ACC, int64]{Name: "agg", Func: agg})
	return s, errors.Join(errs[:]...)
}

func v1Rows(t testing.TB, b *state.Backend[string]) *rows[rowV1] {
	s, err := registerRows(t, b, func(a, b rowV1) rowV1 { return rowV1{a.A + b.A, a.B + b.B} }, state.AggregateFunction[int64, rowV1, int64](accV1{}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func v2Rows(t testing.TB, b *state.Backend[string]) (*rows[rowV2], error) {
	return registerRows(t, b, func(a, b rowV2) rowV2 { return rowV2{a.A + b.A, a.C + b.C} }, state.AggregateFunction[int64, rowV2, int64](accV2{}))
}

// fill writes key i's state of the first program.
func (s *rows[R]) fill(t testing.TB, n int, row func(a int64) R) {
	for i, k := range keys(n) {
		if !s.b.Groups().Contains(s.b.KeyGroup(k)) {
			continue
		}
		s.b.SetCurrentKey(k)
		s.val.Update(row(int64(i)))
		s.ns.SetNamespace(i % 3)
		s.ns.Update(row(int64(3 * i)))
		s.lst.AddAll([]R{row(int64(i)), row(int64(10 * i))})
		s.mp.Put("u", row(int64(-i)))
		s.mp.Put(fmt.Sprint("w", i), row(int64(i)))
		s.red.Add(row(int64(i)))
		s.red.Add(row(1))
		s.agg.Add(int64(i))
		s.agg.Add(2)
	}
	if err := s.b.Err(); err != nil {
		t.Fatal(err)
	}
}

// check reads key i's state as fill wrote it, through want, and returns
// the number of keys of the backend's groups.
func (s *rows[R]) check(t testing.TB, n int, want func(a int64) R) int {
	t.Helper()
	checked := 0
	for i, k := range keys(n) {
		if !s.b.Groups().Contains(s.b.KeyGroup(k)) {
			continue
		}
		checked++
		s.b.SetCurrentKey(k)
		a := int64(i)
		s.ns.SetNamespace(i % 3)
		got := []any{}
		v, _ := s.val.Value()
		nv, _ := s.ns.Value()
		r, _ := s.red.Get()
		g, _ := s.agg.Get()
		m := map[string]R{}
		for uk, uv := range s.mp.All() {
			m[uk] = uv
		}
		got = append(got, v, nv, s.lst.Get(), m, r, g)
		exp := []any{want(a), want(3 * a), []R{want(a), want(10 * a)},
			map[string]R{"u": want(-a), fmt.Sprint("w", i): want(a)}, want(a + 1), a + 2}
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Fatalf("%s: %v, want %v", k, got, exp)
		}
	}
	if err := s.b.Err(); err != nil {
		t.Fatal(err)
	}
	return checked
}

// TestMigrateRescale: state of rowV1 on a heap or a disk backend, in a full
// snapshot (a savepoint's), restores as rowV2 into heap and disk backends
// at parallelism 2, registered before or after the restore: every value
// reads as rowV2{A: old A}, and the disk backend's store holds them in the
// new schema (a second full snapshot restores with no migration).
func TestMigrateRescale(t *testing.T) {
	const n = 50
	row1 := func(a int64) rowV1 { return rowV1{a, fmt.Sprint("b", a)} }
	row2 := func(a int64) rowV2 { return rowV2{A: a} }
	for _, fromDisk := range []bool{false, true} {
		for _, toDisk := range []bool{false, true} {
			t.Run(fmt.Sprintf("disk %v to disk %v", fromDisk, toDisk), func(t *testing.T) {
				e := newEnv(t, 8, 0)
				src := v1Rows(t, e.backend(fromDisk, state.KeyGroupRange{Start: 0, End: 7}))
				src.fill(t, n, row1)
				var snap bytes.Buffer
				if err := src.b.Snapshot(&snap, src.b.Groups()); err != nil {
					t.Fatal(err)
				}
				total := 0
				for i := range 2 {
					b := e.backend(toDisk, groupsOf(t, 8, 2, i))
					var s *rows[rowV2]
					var err error
					if i == 0 {
						if s, err = v2Rows(t, b); err != nil {
							t.Fatal(err)
						}
					}
					if err := b.Restore(bytes.NewReader(snap.Bytes())); err != nil {
						t.Fatal(err)
					}
					if i == 1 {
						if s, err = v2Rows(t, b); err != nil {
							t.Fatal(err)
						}
					}
					total += s.check(t, n, row2)
					var again bytes.Buffer
					if err := b.Snapshot(&again, b.Groups()); err != nil {
						t.Fatal(err)
					}
					info, err := state.DescribeSnapshot(again.Bytes())
					if err != nil || !slices.ContainsFunc(info.Schemas, func(s state.SchemaInfo) bool {
						return s.Name == "lst" && s.Value == "struct { A int64; C float64 }"
					}) {
						t.Fatalf("schemas after the migration: %+v, %v", info, err)
					}
					b2 := e.backend(!toDisk, b.Groups())
					s2, err := v2Rows(t, b2)
					if err != nil {
						t.Fatal(err)
					}
					if err := b2.Restore(bytes.NewReader(again.Bytes())); err != nil {
						t.Fatal(err)
					}
					s2.check(t, n, row2)
				}
				if total != n {
					t.Fatalf("checked %d keys of %d", total, n)
				}
			})
		}
	}
}

// TestIncrementalRefusesMigration: an incremental snapshot holds the disk
// store's files, which cannot be migrated: restoring one whose value
// schema changed fails, whether the state is registered before or after
// the restore, and says to restore from a savepoint; a changed key schema
// fails in Flink's words. The same schema restores.
func TestIncrementalRefusesMigration(t *testing.T) {
	e := newEnv(t, 8, 0)
	e.shared = openDir(t, 1)
	all := state.KeyGroupRange{Start: 0, End: 7}
	src := v1Rows(t, e.backend(true, all))
	src.fill(t, 20, func(a int64) rowV1 { return rowV1{A: a} })
	var snap bytes.Buffer
	if _, err := src.b.SnapshotIncremental(&snap); err != nil {
		t.Fatal(err)
	}
	info, err := state.DescribeSnapshot(snap.Bytes())
	if err != nil || len(info.Schemas) != 6 {
		t.Fatalf("incremental snapshot's schemas: %+v, %v", info, err)
	}
	for _, before := range []bool{true, false} {
		b := e.backend(true, all)
		var err error
		if before {
			if _, err = v2Rows(t, b); err != nil {
				t.Fatal(err)
			}
			err = b.Restore(bytes.NewReader(snap.Bytes()))
		} else {
			if err := b.Restore(bytes.NewReader(snap.Bytes())); err != nil {
				t.Fatal(err)
			}
			_, err = v2Rows(t, b)
		}
		if !errors.Is(err, state.ErrMigration) || !strings.Contains(err.Error(), "restore from a savepoint") ||
			!strings.Contains(err.Error(), "struct { A int64; B string } in the snapshot, struct { A int64; C float64 } now") {
			t.Fatalf("registered before the restore %v: %v", before, err)
		}
	}
	b := e.backend(true, state.KeyGroupRange{Start: 0, End: 3})
	if err := b.Restore(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if _, err := state.GetListState(b, state.ListDescriptor[rowV1]{Name: "lst"}); err != nil {
		t.Fatal(err)
	}
	_, err = state.NewValue[string, string](b, state.ValueDescriptor[rowV1]{Name: "ns"})
	if !errors.Is(err, state.ErrMigration) || !strings.Contains(err.Error(), "the new namespace serializer (string) must be compatible with the old namespace serializer (int)") {
		t.Fatalf("namespace changed: %v", err)
	}
	same := e.backend(true, all)
	if err := same.Restore(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if n := v1Rows(t, same).check(t, 20, func(a int64) rowV1 { return rowV1{A: a} }); n != 20 {
		t.Fatalf("checked %d keys", n)
	}
}
