package state

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// The state of the migration tests: every kind of keyed state of a struct
// that loses field B and gains field C between two programs.
type rowV1 struct {
	A int64
	B string
}

type rowV2 struct {
	A int64
	C float64
}

// accV1 and accV2 aggregate int64s into a row.
type accV1 struct{}

func (accV1) CreateAccumulator() rowV1   { return rowV1{} }
func (accV1) Add(v int64, a rowV1) rowV1 { return rowV1{a.A + v, a.B + "x"} }
func (accV1) GetResult(a rowV1) int64    { return a.A }
func (accV1) Merge(a, b rowV1) rowV1     { return rowV1{a.A + b.A, a.B + b.B} }
func reduceV1(a, b rowV1) rowV1          { return rowV1{a.A + b.A, a.B + b.B} }

type accV2 struct{}

func (accV2) CreateAccumulator() rowV2   { return rowV2{} }
func (accV2) Add(v int64, a rowV2) rowV2 { return rowV2{a.A + v, a.C + 1} }
func (accV2) GetResult(a rowV2) int64    { return a.A }
func (accV2) Merge(a, b rowV2) rowV2     { return rowV2{a.A + b.A, a.C + b.C} }
func reduceV2(a, b rowV2) rowV2          { return rowV2{a.A + b.A, a.C + b.C} }

// What the first program writes for key i.
func migKey(i int) string            { return fmt.Sprintf("k%d", i) }
func migValue1(i int) rowV1          { return rowV1{int64(i), fmt.Sprint("b", i)} }
func migNSValue1(i int) (int, rowV1) { return i % 3, rowV1{int64(3 * i), "ns"} }
func migList1(i int) []rowV1         { return []rowV1{{int64(i), "x"}, {int64(10 * i), "y"}} }
func migMap1(i int) map[string]rowV1 {
	return map[string]rowV1{fmt.Sprint("u", i): {int64(i), "m"}, "w": {int64(-i), "n"}}
}
func migRed1(i int) []rowV1       { return []rowV1{{int64(i), "p"}, {1, "q"}} }
func migAgg(i int) []int64        { return []int64{int64(i), 2} }
func migTimer(i int) (int, int64) { return i % 2, int64(100 + i) }

// v1states are the states of the first program.
type v1states struct {
	val   ValueState[rowV1]
	valNS *Value[string, int, rowV1]
	lst   ListState[rowV1]
	mp    MapState[string, rowV1]
	red   ReducingState[rowV1]
	agg   AggregatingState[int64, int64]
	tm    *Timers[string, int]
}

func registerV1(t testing.TB, b *Backend[string]) *v1states {
	t.Helper()
	var s v1states
	var err error
	check := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	s.val, err = GetValueState(b, ValueDescriptor[rowV1]{Name: "val"})
	var e error
	s.valNS, e = NewValue[string, int](b, ValueDescriptor[rowV1]{Name: "valns"})
	check(e)
	s.lst, e = GetListState(b, ListDescriptor[rowV1]{Name: "lst"})
	check(e)
	s.mp, e = GetMapState(b, MapDescriptor[string, rowV1]{Name: "map"})
	check(e)
	s.red, e = GetReducingState(b, ReducingDescriptor[rowV1]{Name: "red", Reduce: reduceV1})
	check(e)
	s.agg, e = GetAggregatingState(b, AggregatingDescriptor[int64, rowV1, int64]{Name: "agg", Func: accV1{}})
	check(e)
	s.tm, e = NewTimers[string, int](b, "timers", &recorder[string, int]{b: b})
	check(e)
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

// fillV1 writes keys 0..n-1 of the first program's state, those of b's key
// groups.
func fillV1(t testing.TB, b *Backend[string], n int) *v1states {
	s := registerV1(t, b)
	for i := range n {
		k := migKey(i)
		if !b.Groups().Contains(b.KeyGroup(k)) {
			continue
		}
		b.SetCurrentKey(k)
		s.val.Update(migValue1(i))
		ns, v := migNSValue1(i)
		s.valNS.SetNamespace(ns)
		s.valNS.Update(v)
		s.lst.AddAll(migList1(i))
		s.mp.PutAll(migMap1(i))
		for _, r := range migRed1(i) {
			s.red.Add(r)
		}
		for _, a := range migAgg(i) {
			s.agg.Add(a)
		}
		tns, ts := migTimer(i)
		s.tm.RegisterEventTimeTimer(tns, ts)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkV1 checks keys 0..n-1 of b's groups against fillV1.
func checkV1(t testing.TB, b *Backend[string], s *v1states, n int) {
	t.Helper()
	for i := range n {
		k := migKey(i)
		if !b.Groups().Contains(b.KeyGroup(k)) {
			continue
		}
		b.SetCurrentKey(k)
		if v, ok := s.val.Value(); !ok || v != migValue1(i) {
			t.Fatalf("%s: value %v %v, want %v", k, v, ok, migValue1(i))
		}
		ns, want := migNSValue1(i)
		s.valNS.SetNamespace(ns)
		if v, ok := s.valNS.Value(); !ok || v != want {
			t.Fatalf("%s: value in namespace %d: %v %v, want %v", k, ns, v, ok, want)
		}
		if l := s.lst.Get(); !slices.Equal(l, migList1(i)) {
			t.Fatalf("%s: list %v, want %v", k, l, migList1(i))
		}
		got := map[string]rowV1{}
		for uk, uv := range s.mp.All() {
			got[uk] = uv
		}
		if !maps.Equal(got, migMap1(i)) {
			t.Fatalf("%s: map %v, want %v", k, got, migMap1(i))
		}
		if r, ok := s.red.Get(); !ok || r != reduceV1(migRed1(i)[0], migRed1(i)[1]) {
			t.Fatalf("%s: reduced %v %v", k, r, ok)
		}
		if a, ok := s.agg.Get(); !ok || a != int64(i+2) {
			t.Fatalf("%s: aggregated %v %v, want %d", k, a, ok, i+2)
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// v2states are the states of the second program: the same names, rows of
// rowV2.
type v2states struct {
	val   ValueState[rowV2]
	valNS *Value[string, int, rowV2]
	lst   ListState[rowV2]
	mp    MapState[string, rowV2]
	red   ReducingState[rowV2]
	agg   AggregatingState[int64, int64]
	tm    *Timers[string, int]
	rec   *recorder[string, int]
}

func registerV2(t testing.TB, b *Backend[string]) *v2states {
	t.Helper()
	s := &v2states{rec: &recorder[string, int]{b: b}}
	var errs []error
	var err error
	s.val, err = GetValueState(b, ValueDescriptor[rowV2]{Name: "val"})
	errs = append(errs, err)
	s.valNS, err = NewValue[string, int](b, ValueDescriptor[rowV2]{Name: "valns"})
	errs = append(errs, err)
	s.lst, err = GetListState(b, ListDescriptor[rowV2]{Name: "lst"})
	errs = append(errs, err)
	s.mp, err = GetMapState(b, MapDescriptor[string, rowV2]{Name: "map"})
	errs = append(errs, err)
	s.red, err = GetReducingState(b, ReducingDescriptor[rowV2]{Name: "red", Reduce: reduceV2})
	errs = append(errs, err)
	s.agg, err = GetAggregatingState(b, AggregatingDescriptor[int64, rowV2, int64]{Name: "agg", Func: accV2{}})
	errs = append(errs, err)
	s.tm, err = NewTimers[string, int](b, "timers", s.rec)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return s
}

// v2of is a first program's row as the second program reads it: A kept,
// B dropped, C zero.
func v2of(r rowV1) rowV2 { return rowV2{A: r.A} }

// checkV2 checks keys 0..n-1 of b's groups against what fillV1 wrote, read
// by the second program; it returns the number of keys checked.
func checkV2(t testing.TB, b *Backend[string], s *v2states, n int) int {
	t.Helper()
	checked := 0
	for i := range n {
		k := migKey(i)
		if !b.Groups().Contains(b.KeyGroup(k)) {
			continue
		}
		checked++
		b.SetCurrentKey(k)
		if v, ok := s.val.Value(); !ok || v != v2of(migValue1(i)) {
			t.Fatalf("%s: value %v %v, want %v", k, v, ok, v2of(migValue1(i)))
		}
		ns, want := migNSValue1(i)
		s.valNS.SetNamespace(ns)
		if v, ok := s.valNS.Value(); !ok || v != v2of(want) {
			t.Fatalf("%s: value in namespace %d: %v %v, want %v", k, ns, v, ok, v2of(want))
		}
		var wantList []rowV2
		for _, r := range migList1(i) {
			wantList = append(wantList, v2of(r))
		}
		if l := s.lst.Get(); !slices.Equal(l, wantList) {
			t.Fatalf("%s: list %v, want %v", k, l, wantList)
		}
		got, wantMap := map[string]rowV2{}, map[string]rowV2{}
		for uk, uv := range s.mp.All() {
			got[uk] = uv
		}
		for uk, uv := range migMap1(i) {
			wantMap[uk] = v2of(uv)
		}
		if !maps.Equal(got, wantMap) {
			t.Fatalf("%s: map %v, want %v", k, got, wantMap)
		}
		if r, ok := s.red.Get(); !ok || r != v2of(reduceV1(migRed1(i)[0], migRed1(i)[1])) {
			t.Fatalf("%s: reduced %v %v", k, r, ok)
		}
		if a, ok := s.agg.Get(); !ok || a != int64(i+2) {
			t.Fatalf("%s: aggregated %v %v, want %d", k, a, ok, i+2)
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	return checked
}
