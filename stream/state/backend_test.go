package state

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
)

// newBackend returns a backend over groups of maxP key groups on a manager of
// the given budget (0: unlimited). The cleanup disposes the backend unless the
// test did, and asserts the manager holds nothing after: a reservation left
// unreleased fails the test.
func newBackend[K comparable](t testing.TB, maxP int, groups KeyGroupRange, budget int64, clock func() int64) (*Backend[K], *memory.Manager) {
	t.Helper()
	m := memory.MustNewManager(memory.Options{Budget: budget})
	b, err := NewBackend[K](Options{Name: "op", MaxParallelism: maxP, Groups: groups, Memory: m, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !b.disposed {
			if err := b.Dispose(); err != nil {
				t.Error(err)
			}
		}
		if err := m.Close(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return b, m
}

type okey struct {
	k  string
	ns int
}

// oracleKeys returns the sorted keys of an oracle's entries in ns.
func oracleKeys[V any](m map[okey]V, ns int) []string {
	var out []string
	for o := range m {
		if o.ns == ns {
			out = append(out, o.k)
		}
	}
	slices.Sort(out)
	return out
}

type avg struct{ Sum, N int64 }

type avgFunc struct{}

func (avgFunc) CreateAccumulator() avg  { return avg{} }
func (avgFunc) Add(v int64, a avg) avg  { return avg{a.Sum + v, a.N + 1} }
func (avgFunc) GetResult(a avg) float64 { return float64(a.Sum) / float64(a.N) }
func (avgFunc) Merge(a, b avg) avg      { return avg{a.Sum + b.Sum, a.N + b.N} }
func sum(a, b int64) int64              { return a + b }
func keyName(i int) string              { return fmt.Sprintf("key-%d", i) }

// kinds holds one state of every kind in namespaces int, and the oracle.
type kinds struct {
	val *Value[string, int, string]
	lst *List[string, int, int]
	mp  *Map[string, int, string, int]
	red *Reducing[string, int, int64]
	agg *Aggregating[string, int, int64, avg, float64]

	oVal map[okey]string
	oLst map[okey][]int
	oMap map[okey]map[string]int
	oRed map[okey]int64
	oAgg map[okey]avg
}

func newKinds(t testing.TB, b *Backend[string]) *kinds {
	t.Helper()
	k := &kinds{
		oVal: map[okey]string{}, oLst: map[okey][]int{}, oMap: map[okey]map[string]int{},
		oRed: map[okey]int64{}, oAgg: map[okey]avg{},
	}
	var err error
	if k.val, err = NewValue[string, int](b, ValueDescriptor[string]{Name: "val"}); err != nil {
		t.Fatal(err)
	}
	if k.lst, err = NewList[string, int](b, ListDescriptor[int]{Name: "lst"}); err != nil {
		t.Fatal(err)
	}
	if k.mp, err = NewMap[string, int](b, MapDescriptor[string, int]{Name: "map"}); err != nil {
		t.Fatal(err)
	}
	if k.red, err = NewReducing[string, int](b, ReducingDescriptor[int64]{Name: "red", Reduce: sum}); err != nil {
		t.Fatal(err)
	}
	if k.agg, err = NewAggregating[string, int](b, AggregatingDescriptor[int64, avg, float64]{Name: "agg", Func: avgFunc{}}); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *kinds) setNS(ns int) {
	k.val.SetNamespace(ns)
	k.lst.SetNamespace(ns)
	k.mp.SetNamespace(ns)
	k.red.SetNamespace(ns)
	k.agg.SetNamespace(ns)
}

// step applies one random operation to the states and the oracle.
func (k *kinds) step(r *rand.Rand, b *Backend[string], key string, ns int) {
	b.SetCurrentKey(key)
	k.setNS(ns)
	o := okey{key, ns}
	switch r.IntN(17) {
	case 0:
		v := strings.Repeat("v", r.IntN(40))
		k.val.Update(v)
		k.oVal[o] = v
	case 1:
		k.val.Clear()
		delete(k.oVal, o)
	case 2:
		v := r.IntN(100)
		k.lst.Add(v)
		k.oLst[o] = append(k.oLst[o], v)
	case 3:
		vs := []int{r.IntN(100), r.IntN(100)}[:r.IntN(3)]
		k.lst.AddAll(vs)
		if len(vs) > 0 {
			k.oLst[o] = append(k.oLst[o], vs...)
		}
	case 4:
		vs := []int{r.IntN(100), r.IntN(100)}[:r.IntN(3)]
		k.lst.Update(vs)
		if len(vs) == 0 {
			delete(k.oLst, o)
		} else {
			k.oLst[o] = slices.Clone(vs)
		}
	case 5:
		k.lst.Clear()
		delete(k.oLst, o)
	case 6:
		uk, uv := keyName(r.IntN(5)), r.IntN(100)
		k.mp.Put(uk, uv)
		if k.oMap[o] == nil {
			k.oMap[o] = map[string]int{}
		}
		k.oMap[o][uk] = uv
	case 7:
		uk := keyName(r.IntN(5))
		k.mp.Remove(uk)
		delete(k.oMap[o], uk)
		if len(k.oMap[o]) == 0 {
			delete(k.oMap, o)
		}
	case 8:
		add := map[string]int{keyName(r.IntN(5)): r.IntN(9), keyName(r.IntN(5)): r.IntN(9)}
		k.mp.PutAll(add)
		if k.oMap[o] == nil {
			k.oMap[o] = map[string]int{}
		}
		maps.Copy(k.oMap[o], add)
	case 9:
		k.mp.Clear()
		delete(k.oMap, o)
	case 10:
		v := int64(r.IntN(100))
		k.red.Add(v)
		k.oRed[o] += v
	case 11:
		k.red.Clear()
		delete(k.oRed, o)
	case 12:
		v := int64(r.IntN(100))
		k.agg.Add(v)
		a := k.oAgg[o]
		k.oAgg[o] = avg{a.Sum + v, a.N + 1}
	case 13:
		k.agg.Clear()
		delete(k.oAgg, o)
	case 14, 15:
		// merge two or three namespaces into ns, as merging session windows do
		sources := []int{r.IntN(4), r.IntN(4)}
		k.lst.MergeNamespaces(ns, sources)
		k.red.MergeNamespaces(ns, sources)
		k.agg.MergeNamespaces(ns, sources)
		for _, src := range sources {
			so := okey{key, src}
			if src == ns {
				continue
			}
			if l, ok := k.oLst[so]; ok {
				k.oLst[o] = append(k.oLst[o], l...)
				delete(k.oLst, so)
			}
			if v, ok := k.oRed[so]; ok {
				k.oRed[o] += v
				delete(k.oRed, so)
			}
			if v, ok := k.oAgg[so]; ok {
				a := k.oAgg[o]
				k.oAgg[o] = avg{a.Sum + v.Sum, a.N + v.N}
				delete(k.oAgg, so)
			}
		}
	case 16:
		// reads only: checked below
	}
}

// check compares every state of key in ns with the oracle.
func (k *kinds) check(t testing.TB, b *Backend[string], key string, ns int) {
	t.Helper()
	b.SetCurrentKey(key)
	k.setNS(ns)
	o := okey{key, ns}
	v, ok := k.val.Value()
	if want, wok := k.oVal[o]; ok != wok || v != want {
		t.Fatalf("%v: Value() = %q, %v; want %q, %v", o, v, ok, want, wok)
	}
	if got, want := k.lst.Get(), k.oLst[o]; !slices.Equal(got, want) {
		t.Fatalf("%v: list %v, want %v", o, got, want)
	}
	got := map[string]int{}
	for uk, uv := range k.mp.All() {
		got[uk] = uv
	}
	want := k.oMap[o]
	if want == nil {
		want = map[string]int{}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%v: map %v, want %v", o, got, want)
	}
	if k.mp.IsEmpty() != (len(want) == 0) {
		t.Fatalf("%v: IsEmpty %v with %d entries", o, k.mp.IsEmpty(), len(want))
	}
	nk, nv := 0, 0
	for uk := range k.mp.Keys() {
		nk++
		if uv, ok := k.mp.Get(uk); !ok || uv != want[uk] || !k.mp.Contains(uk) {
			t.Fatalf("%v: Get(%q) = %d, %v; want %d", o, uk, uv, ok, want[uk])
		}
	}
	for range k.mp.Values() {
		nv++
	}
	if nk != len(want) || nv != len(want) {
		t.Fatalf("%v: %d keys and %d values, want %d", o, nk, nv, len(want))
	}
	if k.mp.Contains("absent") {
		t.Fatalf("%v: Contains(absent)", o)
	}
	r, ok := k.red.Get()
	if wr, wok := k.oRed[o]; ok != wok || r != wr {
		t.Fatalf("%v: reducing %d, %v; want %d, %v", o, r, ok, wr, wok)
	}
	a, ok := k.agg.Get()
	wa, wok := k.oAgg[o]
	if ok != wok || (ok && a != float64(wa.Sum)/float64(wa.N)) {
		t.Fatalf("%v: aggregating %v, %v; want %v, %v", o, a, ok, wa, wok)
	}
}

// checkAll checks every key and namespace the test uses, and the keys each
// state lists per namespace.
func (k *kinds) checkAll(t testing.TB, b *Backend[string], keys int) {
	t.Helper()
	for ns := 0; ns < 4; ns++ {
		for _, c := range []struct {
			name string
			got  []string
			want []string
		}{
			{"val", k.val.KeysIn(ns), oracleKeys(k.oVal, ns)},
			{"lst", k.lst.KeysIn(ns), oracleKeys(k.oLst, ns)},
			{"map", k.mp.KeysIn(ns), oracleKeys(k.oMap, ns)},
			{"red", k.red.KeysIn(ns), oracleKeys(k.oRed, ns)},
			{"agg", k.agg.KeysIn(ns), oracleKeys(k.oAgg, ns)},
		} {
			slices.Sort(c.got)
			if !slices.Equal(c.got, c.want) {
				t.Fatalf("%s: keys in %d: %v, want %v", c.name, ns, c.got, c.want)
			}
		}
	}
	for i := 0; i < keys; i++ {
		for ns := 0; ns < 4; ns++ {
			k.check(t, b, keyName(i), ns)
		}
	}
}

// clearAll clears every state of every key and namespace.
func (k *kinds) clearAll(b *Backend[string], keys int) {
	for i := 0; i < keys; i++ {
		b.SetCurrentKey(keyName(i))
		for ns := 0; ns < 4; ns++ {
			k.setNS(ns)
			k.val.Clear()
			k.lst.Clear()
			k.mp.Clear()
			k.red.Clear()
			k.agg.Clear()
		}
	}
}

// TestStatesAgainstOracle runs random operations on every kind of state in
// four namespaces and compares each with maps in the test, then clears it all
// and expects the backend to hold no memory.
func TestStatesAgainstOracle(t *testing.T) {
	const keys = 30
	for seed := uint64(1); seed <= 4; seed++ {
		b, m := newBackend[string](t, 16, KeyGroupRange{0, 15}, 0, nil)
		k := newKinds(t, b)
		r := rand.New(rand.NewPCG(seed, 7))
		for i := 0; i < 3000; i++ {
			key, ns := keyName(r.IntN(keys)), r.IntN(4)
			k.step(r, b, key, ns)
			k.check(t, b, key, ns)
		}
		k.checkAll(t, b, keys)
		if b.Err() != nil {
			t.Fatal(b.Err())
		}
		if b.MemoryUsed() <= 0 || m.Used() < b.MemoryUsed() {
			t.Fatalf("memory used %d, manager %d", b.MemoryUsed(), m.Used())
		}
		k.clearAll(b, keys)
		if b.MemoryUsed() != 0 || m.Used() != 0 {
			t.Fatalf("after clearing everything: state holds %d bytes, the manager %d", b.MemoryUsed(), m.Used())
		}
		empty := newKinds(t, b) // the same states, an empty oracle
		empty.checkAll(t, b, keys)
	}
}

// TestSameNameSameState: asking twice for a name gives the same state;
// asking for it as another kind or type is an error.
func TestSameNameSameState(t *testing.T) {
	b, _ := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 0, nil)
	s1, err := GetValueState(b, ValueDescriptor[int]{Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := GetValueState(b, ValueDescriptor[int]{Name: "count"})
	if err != nil || s1 != s2 {
		t.Fatalf("second GetValueState: %v, %v", s2, err)
	}
	if _, err := GetListState(b, ListDescriptor[int]{Name: "count"}); err == nil || !strings.Contains(err.Error(), `"count"`) {
		t.Errorf("list under a value's name: %v", err)
	}
	if _, err := GetValueState(b, ValueDescriptor[string]{Name: "count"}); err == nil {
		t.Errorf("value of another type under the same name: no error")
	}
	if _, err := GetValueState(b, ValueDescriptor[map[string]int]{Name: "m"}); err == nil {
		t.Errorf("value state of a map type: no error")
	}
	if _, err := GetReducingState(b, ReducingDescriptor[int]{Name: "r"}); err == nil {
		t.Errorf("reducing state without a function: no error")
	}
}

// TestNoCurrentKey: state used before SetCurrentKey, or with a key outside the
// backend's groups, is a no-op kept in Err.
func TestNoCurrentKey(t *testing.T) {
	b, _ := newBackend[string](t, 128, KeyGroupRange{0, 63}, 0, nil)
	s, _ := GetValueState(b, ValueDescriptor[int]{Name: "v"})
	s.Update(1)
	if !errors.Is(b.Err(), ErrNoKey) {
		t.Fatalf("Err() = %v", b.Err())
	}
	b2, _ := newBackend[string](t, 128, KeyGroupRange{0, 63}, 0, nil)
	s2, _ := GetValueState(b2, ValueDescriptor[int]{Name: "v"})
	// "hello" is in key group 35, "Hello World" in 26 and "to be or not" in 105.
	b2.SetCurrentKey("to be or not")
	s2.Update(1)
	if err := b2.Err(); !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "key group 105") {
		t.Fatalf("Err() = %v", err)
	}
	if b2.MemoryUsed() != 0 {
		t.Fatalf("a write without a key holds %d bytes", b2.MemoryUsed())
	}
}

// TestBudgetExceeded: state past the budget is an error naming the state and
// the budget; Dispose releases everything.
func TestBudgetExceeded(t *testing.T) {
	b, m := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 256<<10, nil)
	s, _ := GetValueState(b, ValueDescriptor[string]{Name: "names"})
	for i := int64(0); i < 100000 && b.Err() == nil; i++ {
		b.SetCurrentKey(i)
		s.Update(strings.Repeat("x", 100))
	}
	err := b.Err()
	if !errors.Is(err, memory.ErrBudgetExceeded) || !strings.Contains(err.Error(), `ValueState "names"`) || !strings.Contains(err.Error(), "of the memory budget of 256.0 KiB is free") {
		t.Fatalf("Err() = %v", err)
	}
	// the numbers say what is held, what was asked and what was free, in
	// plain units: the ask did not fit
	var held, need, free float64
	var hu, nu, fu string
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "holds"):], "holds %g %s and needs %g %s more, but only %g %s of",
		&held, &hu, &need, &nu, &free, &fu); serr != nil || nu != "KiB" || held <= 0 || (fu == "KiB" && free >= need) {
		t.Fatalf("Err() = %v: holds %g %s, needs %g %s, free %g %s (%v)", err, held, hu, need, nu, free, fu, serr)
	}
	if m.Used() == 0 {
		t.Fatal("nothing reserved")
	}
	if err := b.Dispose(); err != nil {
		t.Fatal(err)
	}
	if m.Used() != 0 {
		t.Fatalf("after Dispose the manager holds %d", m.Used())
	}
}

func TestNewBackendErrors(t *testing.T) {
	for _, o := range []Options{
		{MaxParallelism: 0, Groups: KeyGroupRange{0, 0}},
		{MaxParallelism: 32769, Groups: KeyGroupRange{0, 0}},
		{MaxParallelism: 128, Groups: KeyGroupRange{5, 4}},
		{MaxParallelism: 128, Groups: KeyGroupRange{0, 128}},
	} {
		if _, err := NewBackend[string](o); err == nil {
			t.Errorf("NewBackend(%+v): no error", o)
		}
	}
}

// TestCurrentKeyInGroup: a key set with the group the exchange computed is the
// key SetCurrentKey sets.
func TestCurrentKeyInGroup(t *testing.T) {
	b, _ := newBackend[string](t, 128, KeyGroupRange{0, 127}, 0, nil)
	s, _ := GetValueState(b, ValueDescriptor[int]{Name: "v"})
	for i := 0; i < 100; i++ {
		k := keyName(i)
		b.SetCurrentKeyInGroup(k, b.KeyGroup(k))
		s.Update(i)
		if b.CurrentKey() != k || b.CurrentKeyGroup() != KeyGroupForHash(JavaStringHash(k), 128) {
			t.Fatalf("current key %q group %d", b.CurrentKey(), b.CurrentKeyGroup())
		}
	}
	for i := 0; i < 100; i++ {
		b.SetCurrentKey(keyName(i))
		if v, ok := s.Value(); !ok || v != i {
			t.Fatalf("%s: %d, %v", keyName(i), v, ok)
		}
	}
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
}
