package state

import (
	"bytes"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"
)

// span is a namespace of plain memory, as window.TimeWindow.
type span struct{ Start, End int64 }

// padded is a namespace with padding: it hashes through maphash.
type padded struct {
	A int8
	B int64
}

// nsCase is a (key, namespace) of the fuzz test's oracle.
type nsCase[N comparable] struct {
	k  int64
	ns N
}

// FuzzNamespacedCells runs updates, clears, reads and captures on a value
// state in namespaces of plain memory (span) and one in namespaces hashed
// by maphash (string), over 5 key groups, with few keys and namespaces so
// that tables grow, collide, wrap and shrink by deletes; after every step it
// checks the value against a map oracle, at the end every key's and
// namespace's value, KeysIn and the snapshot restored into a new backend;
// a capture written after later changes holds the oracle of its time.
//
//	go test ./stream/state -run '^$' -fuzz FuzzNamespacedCells
func FuzzNamespacedCells(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 3, 4, 1, 1, 2, 3, 1, 2, 4, 0, 0})
	seq := make([]byte, 0, 3*600)
	for i := range 600 {
		seq = append(seq, byte(i%7), byte(i*13), byte(i*5/3))
	}
	f.Add(seq)
	f.Fuzz(func(t *testing.T, ops []byte) {
		fuzzCells(t, ops, func(b byte) span { return span{int64(b % 6), int64(b%6) + 10} })
		fuzzCells(t, ops, func(b byte) string { return string(rune('a' + b%6)) })
	})
}

func fuzzCells[N comparable](t *testing.T, ops []byte, nsOf func(byte) N) {
	b, _ := newBackend[int64](t, 5, KeyGroupRange{0, 4}, 0, nil)
	s, err := NewValue[int64, N, int64](b, ValueDescriptor[int64]{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	oracle := map[nsCase[N]]int64{}
	var captures []*Capture
	var captured []map[nsCase[N]]int64
	for i := 0; i+2 < len(ops); i += 3 {
		k, ns := int64(ops[i+1]%40), nsOf(ops[i+2])
		b.SetCurrentKey(k)
		s.SetNamespace(ns)
		c := nsCase[N]{k, ns}
		switch ops[i] % 7 {
		case 0, 1, 2: // update
			s.Update(int64(i))
			oracle[c] = int64(i)
		case 3: // clear
			s.Clear()
			delete(oracle, c)
		case 4: // update twice: the cached cell
			s.Update(int64(i))
			v, _ := s.Value()
			s.Update(v + 1)
			oracle[c] = int64(i) + 1
		case 5: // capture
			if len(captures) < 3 {
				cp, err := b.Capture(KeyGroupRange{0, 4})
				if err != nil {
					t.Fatal(err)
				}
				captures = append(captures, cp)
				captured = append(captured, maps.Clone(oracle))
			}
		case 6: // another namespace of the same key
			s.SetNamespace(nsOf(ops[i+2] + 1))
			s.Clear()
			delete(oracle, nsCase[N]{k, nsOf(ops[i+2] + 1)})
			s.SetNamespace(ns)
		}
		v, ok := s.Value()
		if w, wok := oracle[c]; v != w || ok != wok {
			t.Fatalf("op %d: key %d in %v: %d, %v; want %d, %v", i/3, k, ns, v, ok, w, wok)
		}
	}
	checkCells(t, b, s, oracle, nsOf)
	var buf bytes.Buffer
	if err := b.Snapshot(&buf, KeyGroupRange{0, 4}); err != nil {
		t.Fatal(err)
	}
	restoreCells(t, buf.Bytes(), oracle, nsOf)
	for j, cp := range captures {
		var buf bytes.Buffer
		if _, err := cp.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		cp.Release()
		restoreCells(t, buf.Bytes(), captured[j], nsOf)
	}
	s.drop()
	if b.used != 0 {
		t.Fatalf("%d bytes counted after dropping the state", b.used)
	}
}

// checkCells checks every key's value in every namespace and KeysIn
// against the oracle.
func checkCells[N comparable](t *testing.T, b *Backend[int64], s *Value[int64, N, int64], oracle map[nsCase[N]]int64, nsOf func(byte) N) {
	t.Helper()
	for n := range byte(6) {
		ns := nsOf(n)
		s.SetNamespace(ns)
		var want []int64
		for k := range int64(40) {
			b.SetCurrentKey(k)
			v, ok := s.Value()
			w, wok := oracle[nsCase[N]{k, ns}]
			if v != w || ok != wok {
				t.Fatalf("key %d in %v: %d, %v; want %d, %v", k, ns, v, ok, w, wok)
			}
			if wok {
				want = append(want, k)
			}
		}
		got := s.KeysIn(ns)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("KeysIn(%v) = %v, want %v", ns, got, want)
		}
	}
}

func restoreCells[N comparable](t *testing.T, data []byte, oracle map[nsCase[N]]int64, nsOf func(byte) N) {
	t.Helper()
	b, _ := newBackend[int64](t, 5, KeyGroupRange{0, 4}, 0, nil)
	s, err := NewValue[int64, N, int64](b, ValueDescriptor[int64]{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	checkCells(t, b, s, oracle, nsOf)
}

// TestNamespaceHash checks which namespace types hash their memory and
// that equal namespaces hash alike on both paths.
func TestNamespaceHash(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		plain bool
	}{
		{reflect.TypeFor[int64](), true},
		{reflect.TypeFor[span](), true},
		{reflect.TypeFor[[3]uint16](), true},
		{reflect.TypeFor[bool](), true},
		{reflect.TypeFor[padded](), false},
		{reflect.TypeFor[float64](), false}, // -0 == +0
		{reflect.TypeFor[string](), false},
		{reflect.TypeFor[struct{ _, A int64 }](), false},
		{reflect.TypeFor[*int](), false},
	} {
		if got := plainMemory(c.typ); got != c.plain {
			t.Errorf("plainMemory(%v) = %v, want %v", c.typ, got, c.plain)
		}
	}
	if h := newNSHasher[Void](); h.hash(&Void{}) != 0 {
		t.Fatal("the Void namespace hashes to non-zero: its codes are not the keys'")
	}
	hs := newNSHasher[span]()
	a, b := span{1, 2}, span{2, 1}
	if hs.hash(&a) == hs.hash(&b) {
		t.Errorf("spans %v and %v hash alike", a, b)
	}
	hf := newNSHasher[float64]()
	zero, negZero := 0.0, math.Copysign(0, -1)
	if hf.hash(&zero) != hf.hash(&negZero) {
		t.Error("0 and -0 hash differently")
	}
	hp := newNSHasher[padded]()
	p1, p2 := padded{1, 2}, padded{1, 2}
	if hp.hash(&p1) != hp.hash(&p2) {
		t.Error("equal padded namespaces hash differently")
	}
	b3 := newNSHasher[[3]uint16]()
	x, y := [3]uint16{1, 2, 3}, [3]uint16{1, 2, 4}
	if b3.hash(&x) == b3.hash(&y) {
		t.Errorf("%v and %v hash alike", x, y)
	}
}
