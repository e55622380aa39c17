package state

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAddEach adds random batches (keys of 30, namespaces of 4, runs of one
// namespace as a window operator's runs mostly are) with AddEach to one
// backend and one record at a time with AddPresent to another: the fresh
// flags, the accumulators and the bytes counted are the same. AddEach
// declines, having added nothing, with TTL, with a live capture, and for a
// key group not the backend's.
func TestAddEach(t *testing.T) {
	mk := func(groups KeyGroupRange) (*Backend[int], *Aggregating[int, int, int64, avg, float64], *Reducing[int, int, int64]) {
		b, _ := newBackend[int](t, 16, groups, 0, nil)
		agg, err := NewAggregating[int, int](b, AggregatingDescriptor[int64, avg, float64]{Name: "a", Func: avgFunc{}})
		if err != nil {
			t.Fatal(err)
		}
		red, err := NewReducing[int, int](b, ReducingDescriptor[int64]{Name: "r", Reduce: func(a, v int64) int64 { return a + v }})
		if err != nil {
			t.Fatal(err)
		}
		return b, agg, red
	}
	all := KeyGroupRange{0, 15}
	bb, agg, red := mk(all)
	ob, oagg, ored := mk(all)
	r := rand.New(rand.NewPCG(3, 9))
	var keys []int
	var codes, groups []int32
	var ns []int
	var vals []int64
	fa, fr := make([]bool, 64), make([]bool, 64)
	for step := 0; step < 400; step++ {
		keys, codes, groups, ns, vals = keys[:0], codes[:0], groups[:0], ns[:0], vals[:0]
		n := 1 + r.IntN(64)
		w := r.IntN(4)
		for range n {
			if r.IntN(8) == 0 {
				w = r.IntN(4)
			}
			k := r.IntN(30)
			keys, ns, vals = append(keys, k), append(ns, w), append(vals, int64(r.IntN(100)))
			codes, groups = append(codes, bb.KeyCode(k)), append(groups, int32(bb.KeyGroup(k)))
		}
		if !agg.AddEach(keys, codes, groups, ns, vals, fa) || !red.AddEach(keys, codes, groups, ns, vals, fr) {
			t.Fatalf("step %d: AddEach declined", step)
		}
		for i := range vals {
			ob.SetCurrentKey(keys[i])
			oagg.SetNamespace(ns[i])
			ored.SetNamespace(ns[i])
			if had := oagg.AddPresent(vals[i]); fa[i] != !had {
				t.Fatalf("step %d entry %d: aggregating fresh %v, want %v", step, i, fa[i], !had)
			}
			if had := ored.AddPresent(vals[i]); fr[i] != !had {
				t.Fatalf("step %d entry %d: reducing fresh %v, want %v", step, i, fr[i], !had)
			}
		}
		if r.IntN(10) == 0 { // clear some
			k, w := r.IntN(30), r.IntN(4)
			for _, s := range []struct {
				b *Backend[int]
				a *Aggregating[int, int, int64, avg, float64]
				r *Reducing[int, int, int64]
			}{{bb, agg, red}, {ob, oagg, ored}} {
				s.b.SetCurrentKey(k)
				s.a.SetNamespace(w)
				s.r.SetNamespace(w)
				s.a.Clear()
				s.r.Clear()
			}
		}
		if bb.MemoryUsed() != ob.MemoryUsed() {
			t.Fatalf("step %d: %d bytes, want %d", step, bb.MemoryUsed(), ob.MemoryUsed())
		}
	}
	for k := range 30 {
		bb.SetCurrentKey(k)
		ob.SetCurrentKey(k)
		for w := range 4 {
			agg.SetNamespace(w)
			oagg.SetNamespace(w)
			red.SetNamespace(w)
			ored.SetNamespace(w)
			a, aok := agg.Get()
			oa, oaok := oagg.Get()
			s, sok := red.Get()
			os, osok := ored.Get()
			if a != oa || aok != oaok || s != os || sok != osok {
				t.Fatalf("key %d window %d: %v %v, %v %v; want %v %v, %v %v", k, w, a, aok, s, sok, oa, oaok, os, osok)
			}
		}
	}

	// declines
	one := []int{7}
	code := []int32{bb.KeyCode(7)}
	group := []int32{int32(bb.KeyGroup(7))}
	before := bb.MemoryUsed()
	c, err := bb.Capture(all)
	if err != nil {
		t.Fatal(err)
	}
	if agg.AddEach(one, code, group, []int{9}, []int64{1}, fa) {
		t.Error("AddEach took a batch during a live capture")
	}
	c.Release()
	_, low, _ := mk(KeyGroupRange{0, 14})
	if low.AddEach(one, code, []int32{15}, []int{9}, []int64{1}, fa) {
		t.Error("AddEach took a key group outside the backend's")
	}
	tb, _ := newBackend[int](t, 16, all, 0, func() int64 { return 0 })
	ttl, _ := NewAggregating[int, int](tb, AggregatingDescriptor[int64, avg, float64]{Name: "t", Func: avgFunc{}, TTL: TTLConfig{TTL: time.Second}})
	if ttl.AddEach(one, code, group, []int{9}, []int64{1}, fa) {
		t.Error("AddEach took a batch with TTL")
	}
	if bb.MemoryUsed() != before {
		t.Errorf("a declined AddEach changed the bytes: %d, was %d", bb.MemoryUsed(), before)
	}
}
