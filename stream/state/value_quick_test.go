package state

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestValueQuickPath drives a Void value state of flat values without TTL,
// which reads and writes through the quick path, with random reads, writes
// and clears over keys set both ways (SetCurrentKey and the keyed
// operators' SetCurrentKeyCode), against a map; enough keys that the slot
// tables grow under cached cells.
func TestValueQuickPath(t *testing.T) {
	const maxP = 128
	b, _ := newBackend[int64](t, maxP, KeyGroupRange{Start: 0, End: maxP - 1}, 0, nil)
	s, err := NewValue[int64, Void](b, ValueDescriptor[int64]{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.quickOK {
		t.Fatal("a Void value state of int64 without TTL does not take the quick path")
	}
	want := map[int64]int64{}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		k := int64(r.IntN(3000))
		if r.IntN(2) == 0 {
			b.SetCurrentKey(k)
		} else {
			c := b.KeyCode(k)
			b.SetCurrentKeyCode(k, c, KeyGroupForHash(c, maxP))
		}
		for range 1 + r.IntN(3) {
			switch op := r.IntN(10); {
			case op < 5:
				got, ok := s.Value()
				w, wok := want[k]
				if got != w || ok != wok {
					t.Fatalf("op %d key %d: Value() = %d, %v, want %d, %v", i, k, got, ok, w, wok)
				}
			case op < 9:
				v := int64(r.IntN(1000))
				s.Update(v)
				want[k] = v
			default:
				s.Clear()
				delete(want, k)
			}
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	// with no current key, neither the cached cell nor any other is read
	// or written
	b.SetCurrentKey(1)
	s.Update(11)
	b.ClearCurrentKey()
	if v, ok := s.Value(); ok {
		t.Fatalf("Value() without a current key = %d, true", v)
	}
	s.Update(12)
	if !errors.Is(b.Err(), ErrNoKey) {
		t.Fatalf("state accessed without a current key: %v, want ErrNoKey", b.Err())
	}
	want[1] = 11
	if n := len(s.keysIn(Void{})); n != len(want) {
		t.Fatalf("%d keys in the state, want %d", n, len(want))
	}
}

// TestValueQuickPathAllocs: reading and writing a key's value allocates
// nothing.
func TestValueQuickPathAllocs(t *testing.T) {
	b, _ := newBackend[int64](t, 128, KeyGroupRange{Start: 0, End: 127}, 0, nil)
	s, _ := NewValue[int64, Void](b, ValueDescriptor[int64]{Name: "v"})
	for k := range int64(1000) {
		b.SetCurrentKey(k)
		s.Update(k)
	}
	k := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		b.SetCurrentKey(k % 1000)
		v, _ := s.Value()
		s.Update(v + 1)
		k++
	}); a != 0 {
		t.Errorf("%v allocs per read and write", a)
	}
}

// TestValueRef: Ref hands out the current key's value for a change in
// place only when the quick path may write it; otherwise nil, and Value
// and Update apply.
func TestValueRef(t *testing.T) {
	b, _ := newBackend[int64](t, 16, KeyGroupRange{Start: 0, End: 15}, 0, nil)
	s, _ := NewValue[int64, Void](b, ValueDescriptor[int64]{Name: "v"})
	b.SetCurrentKey(7)
	if p := s.Ref(); p != nil {
		t.Fatal("Ref of a key without a value is not nil")
	}
	s.Update(40)
	p := s.Ref()
	if p == nil || *p != 40 {
		t.Fatalf("Ref = %v, want a pointer to 40", p)
	}
	*p += 2
	b.SetCurrentKey(8)
	b.SetCurrentKey(7)
	if v, _ := s.Value(); v != 42 {
		t.Fatalf("after a change through Ref: %d, want 42", v)
	}
	c, err := b.Capture(KeyGroupRange{Start: 0, End: 15})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ref() != nil {
		t.Fatal("Ref while a capture shares the value is not nil")
	}
	s.Update(43)
	c.Release()
	if p := s.Ref(); p == nil || *p != 43 {
		t.Fatal("Ref after the capture's release does not see 43")
	}
	ttl, _ := NewValue[int64, Void](b, ValueDescriptor[int64]{Name: "ttl", TTL: TTLConfig{TTL: time.Hour}})
	ttl.Update(1)
	if ttl.Ref() != nil {
		t.Fatal("Ref of a state with TTL is not nil")
	}
	str, _ := NewValue[int64, Void](b, ValueDescriptor[string]{Name: "s"})
	str.Update("x")
	if str.Ref() != nil {
		t.Fatal("Ref of a value holding pointers is not nil")
	}
}

// TestValueQuickPathSizes: the quick path's writes of values holding
// pointers count their bytes as the general path does: a backend whose
// state takes it and one whose state has TTL (the general path) hold the
// same bytes after the same writes, and none once every key is cleared.
func TestValueQuickPathSizes(t *testing.T) {
	quick, _ := newBackend[int64](t, 16, KeyGroupRange{Start: 0, End: 15}, 0, nil)
	general, _ := newBackend[int64](t, 16, KeyGroupRange{Start: 0, End: 15}, 0, func() int64 { return 0 })
	qs, _ := NewValue[int64, Void](quick, ValueDescriptor[string]{Name: "s"})
	gs, _ := NewValue[int64, Void](general, ValueDescriptor[string]{Name: "s", TTL: TTLConfig{TTL: time.Hour}})
	if !qs.quickOK || gs.quickOK {
		t.Fatal("the states do not take the paths the test needs")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		k := int64(r.IntN(50))
		v := strings.Repeat("x", r.IntN(300))
		quick.SetCurrentKey(k)
		general.SetCurrentKey(k)
		qs.Update(v)
		gs.Update(v)
		if quick.used != general.used {
			t.Fatalf("%d bytes counted on the quick path, %d on the general path", quick.used, general.used)
		}
	}
	for k := range int64(50) {
		quick.SetCurrentKey(k)
		qs.Clear()
	}
	if quick.used != 0 {
		t.Fatalf("%d bytes counted with every key cleared", quick.used)
	}
}
