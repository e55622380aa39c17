package disk_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/state/disk"
)

// avg is an AggregateFunction: the mean of the values added.
type avg struct{}

type avgAcc struct{ Sum, N int64 }

func (avg) CreateAccumulator() avgAcc    { return avgAcc{} }
func (avg) Add(v int64, a avgAcc) avgAcc { return avgAcc{a.Sum + v, a.N + 1} }
func (avg) GetResult(a avgAcc) float64   { return float64(a.Sum) / float64(a.N) }
func (avg) Merge(a, b avgAcc) avgAcc     { return avgAcc{a.Sum + b.Sum, a.N + b.N} }
func sum(a, b int64) int64               { return a + b }
func ttlOf(u state.UpdateType, v state.Visibility) state.TTLConfig {
	return state.TTLConfig{TTL: 10 * time.Millisecond, Update: u, Visibility: v}
}

// side is a backend with one state of every kind, in int namespaces, with
// and without TTL, plus a value in the Void namespace.
type side struct {
	b  *state.Backend[string]
	v  *state.Value[string, int, int64]
	l  *state.List[string, int, string]
	m  *state.Map[string, int, string, int64]
	r  *state.Reducing[string, int, int64]
	a  *state.Aggregating[string, int, int64, avgAcc, float64]
	vv state.ValueState[string]
	tv *state.Value[string, int, int64]
	tl *state.List[string, int, string]
	tm *state.Map[string, int, string, int64]
}

// env is what the sides of a test share: the clock TTL reads, the memory
// manager and the shared files of incremental snapshots.
type env struct {
	t      testing.TB
	now    int64
	mem    *memory.Manager
	shared state.SharedFiles
	dir    string
	maxP   int
}

func newEnv(t testing.TB, maxP int, budget int64) *env {
	e := &env{t: t, now: 1000, mem: memory.MustNewManager(memory.Options{Budget: budget}), dir: t.TempDir(), maxP: maxP}
	t.Cleanup(func() {
		if err := e.mem.Close(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return e
}

// backend returns a backend of groups: on disk or on the heap, registered
// states or not. The cleanup disposes it unless the test did.
func (e *env) backend(onDisk bool, groups state.KeyGroupRange) *state.Backend[string] {
	e.t.Helper()
	o := state.Options{Name: "op", MaxParallelism: e.maxP, Groups: groups, Memory: e.mem, Clock: func() int64 { return e.now }, Shared: e.shared}
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

func (e *env) side(onDisk bool, groups state.KeyGroupRange) *side {
	return e.register(e.backend(onDisk, groups))
}

// register registers the side's states on b.
func (e *env) register(b *state.Backend[string]) *side {
	e.t.Helper()
	s := &side{b: b}
	var err error
	must := func(err error) {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	s.v, err = state.NewValue[string, int](b, state.ValueDescriptor[int64]{Name: "v"})
	must(err)
	s.l, err = state.NewList[string, int](b, state.ListDescriptor[string]{Name: "l"})
	must(err)
	s.m, err = state.NewMap[string, int](b, state.MapDescriptor[string, int64]{Name: "m"})
	must(err)
	s.r, err = state.NewReducing[string, int](b, state.ReducingDescriptor[int64]{Name: "r", Reduce: sum})
	must(err)
	s.a, err = state.NewAggregating[string, int](b, state.AggregatingDescriptor[int64, avgAcc, float64]{Name: "a", Func: avg{}})
	must(err)
	s.vv, err = state.GetValueState[string](b, state.ValueDescriptor[string]{Name: "vv"})
	must(err)
	s.tv, err = state.NewValue[string, int](b, state.ValueDescriptor[int64]{Name: "tv", TTL: ttlOf(state.OnReadAndWrite, state.ReturnExpiredIfNotCleanedUp)})
	must(err)
	s.tl, err = state.NewList[string, int](b, state.ListDescriptor[string]{Name: "tl", TTL: ttlOf(state.OnCreateAndWrite, state.NeverReturnExpired)})
	must(err)
	s.tm, err = state.NewMap[string, int](b, state.MapDescriptor[string, int64]{Name: "tm", TTL: ttlOf(state.OnReadAndWrite, state.NeverReturnExpired)})
	must(err)
	return s
}

// setNS sets every state's namespace.
func (s *side) setNS(ns int) {
	s.v.SetNamespace(ns)
	s.l.SetNamespace(ns)
	s.m.SetNamespace(ns)
	s.r.SetNamespace(ns)
	s.a.SetNamespace(ns)
	s.tv.SetNamespace(ns)
	s.tl.SetNamespace(ns)
	s.tm.SetNamespace(ns)
}

// entries returns a map state's entries in key order, as "k=v" strings.
func entries(m *state.Map[string, int, string, int64]) []string {
	var out []string
	for k, v := range m.All() {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(out)
	return out
}

func sorted(ks []string) []string {
	ks = slices.Clone(ks)
	slices.Sort(ks)
	return ks
}

// op applies operation number op with random arguments to s and returns
// what it read; the same op and rng state give the same calls on any side.
func (s *side) op(op int, rng *rand.Rand, key string, ns int) any {
	s.b.SetCurrentKey(key)
	s.setNS(ns)
	x := rng.Int64N(100)
	uk := fmt.Sprintf("u%d", rng.IntN(6))
	other := []int{rng.IntN(4), rng.IntN(4)}
	switch op {
	case 0:
		s.v.Update(x)
	case 1:
		v, ok := s.v.Value()
		return []any{v, ok}
	case 2:
		s.v.Clear()
	case 3:
		s.l.Add(fmt.Sprint(x))
	case 4:
		s.l.AddAll([]string{fmt.Sprint(x), fmt.Sprint(x + 1)})
	case 5:
		s.l.Update([]string{fmt.Sprint(x)})
	case 6:
		return s.l.Get()
	case 7:
		s.l.Clear()
	case 8:
		s.l.MergeNamespaces(ns, other)
	case 9:
		s.m.Put(uk, x)
	case 10:
		v, ok := s.m.Get(uk)
		return []any{v, ok}
	case 11:
		s.m.Remove(uk)
	case 12:
		return []any{s.m.Contains(uk), s.m.IsEmpty(), entries(s.m)}
	case 13:
		s.m.Clear()
	case 14:
		s.m.PutAll(map[string]int64{uk: x, "z": x})
	case 15:
		s.r.Add(x)
	case 16:
		v, ok := s.r.Get()
		return []any{v, ok}
	case 17:
		s.r.MergeNamespaces(ns, other)
	case 18:
		s.a.Add(x)
	case 19:
		v, ok := s.a.Get()
		return []any{v, ok}
	case 20:
		s.a.MergeNamespaces(ns, other)
	case 21:
		s.a.Clear()
		s.r.Clear()
	case 22:
		s.vv.Update(fmt.Sprint(x))
	case 23:
		v, ok := s.vv.Value()
		return []any{v, ok}
	case 24:
		s.tv.Update(x)
	case 25:
		v, ok := s.tv.Value()
		return []any{v, ok}
	case 26:
		s.tl.Add(fmt.Sprint(x))
	case 27:
		return s.tl.Get()
	case 28:
		s.tm.Put(uk, x)
	case 29:
		return []any{entries(s.tm), s.tm.Contains(uk)}
	case 30:
		return [][]string{sorted(s.v.KeysIn(ns)), sorted(s.l.KeysIn(ns)), sorted(s.m.KeysIn(ns)),
			sorted(s.r.KeysIn(ns)), sorted(s.a.KeysIn(ns))}
	}
	return nil
}

const ops = 31

// read returns everything s holds for key in namespace ns without changing
// it (no TTL states: reading them refreshes or removes entries).
func (s *side) read(key string, ns int) any {
	s.b.SetCurrentKey(key)
	s.setNS(ns)
	v, vok := s.v.Value()
	r, rok := s.r.Get()
	a, aok := s.a.Get()
	vv, vvok := s.vv.Value()
	return []any{v, vok, s.l.Get(), entries(s.m), r, rok, a, aok, vv, vvok}
}

// same fails unless a and b read alike for every key and namespace.
func same(t testing.TB, what string, keys []string, a, b func(key string, ns int) any) {
	t.Helper()
	for _, k := range keys {
		for ns := range 4 {
			if x, y := a(k, ns), b(k, ns); !reflect.DeepEqual(x, y) {
				t.Fatalf("%s: key %q namespace %d: %v, want %v", what, k, ns, y, x)
			}
		}
	}
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("key-%d", i)
	}
	return out
}
