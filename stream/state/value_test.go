package state

import (
	"fmt"
	"testing"
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
