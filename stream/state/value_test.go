package state

import (
	"fmt"
	"testing"
	"time"
)

// TestValueStateAllocs: reading and updating a flat value of a known key
// allocates nothing, with int64 and string keys.
func TestValueStateAllocs(t *testing.T) {
	b, _ := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 0, nil)
	s, err := GetValueState(b, ValueDescriptor[int64]{Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	for k := int64(0); k < 1000; k++ {
		b.SetCurrentKey(k)
		s.Update(k)
	}
	k := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		b.SetCurrentKey(k % 1000)
		v, _ := s.Value()
		s.Update(v + 1)
		k++
	})
	if allocs != 0 {
		t.Errorf("int64 keys: %v allocs per record", allocs)
	}

	bs, _ := newBackend[string](t, 128, KeyGroupRange{0, 127}, 0, nil)
	ss, _ := GetValueState(bs, ValueDescriptor[int64]{Name: "count", TTL: TTLConfig{TTL: 1 << 40}})
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
		bs.SetCurrentKey(keys[i])
		ss.Update(1)
	}
	allocs = testing.AllocsPerRun(1000, func() {
		bs.SetCurrentKey(keys[k%1000])
		v, _ := ss.Value()
		ss.Update(v + 1)
		k++
	})
	if allocs != 0 {
		t.Errorf("string keys with TTL: %v allocs per record", allocs)
	}
	if b.Err() != nil || bs.Err() != nil {
		t.Fatal(b.Err(), bs.Err())
	}
}

func BenchmarkValueState(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			be, _ := newBackend[int64](b, 128, KeyGroupRange{0, 127}, 0, nil)
			s, _ := GetValueState(be, ValueDescriptor[int64]{Name: "count"})
			for k := int64(0); k < int64(n); k++ {
				be.SetCurrentKey(k)
				s.Update(k)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				be.SetCurrentKey(int64(i % n))
				v, _ := s.Value()
				s.Update(v + 1)
			}
		})
	}
}

// TestValueCellCache: a read caches the current key's cell so that the
// write after it does not look the table up again; the cache must not
// outlive a change of key or namespace, a Clear of the state or of the
// backend, or an expiry.
func TestValueCellCache(t *testing.T) {
	now := int64(1000)
	b, _ := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 0, func() int64 { return now })
	s, err := NewValue[int64, int](b, ValueDescriptor[int64]{Name: "v", TTL: TTLConfig{TTL: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	want := func(what string, v int64, ok bool) {
		t.Helper()
		if got, gok := s.Value(); got != v || gok != ok {
			t.Fatalf("%s: Value() = %d, %v, want %d, %v", what, got, gok, v, ok)
		}
	}
	b.SetCurrentKey(1)
	s.Update(10)
	want("key 1", 10, true)
	b.SetCurrentKey(2)
	want("key 2 before a write", 0, false)
	s.Update(20)
	b.SetCurrentKey(1)
	want("key 1 again", 10, true)
	s.SetNamespace(7)
	want("key 1 in namespace 7", 0, false)
	s.Update(17)
	s.SetNamespace(0)
	want("key 1 back in namespace 0", 10, true)
	s.Clear()
	want("key 1 after Clear", 0, false)
	s.Update(11)
	want("key 1 rewritten", 11, true)
	b.Clear()
	want("key 1 after the backend's Clear", 0, false)
	if b.MemoryUsed() != 0 {
		t.Fatalf("%d bytes after the backend's Clear", b.MemoryUsed())
	}
	s.Update(12)
	want("key 1 after Clear and a write", 12, true)
	now += 10
	want("key 1 expired", 0, false)
	if b.MemoryUsed() != 0 {
		t.Fatalf("%d bytes after the only entry expired", b.MemoryUsed())
	}
	s.Update(13)
	b.SetCurrentKey(1) // the same key again
	want("key 1 set again", 13, true)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
}
