package state

import "testing"

// BenchmarkMapStatePutGet updates and reads one of 16 map entries of 1000 keys.
func BenchmarkMapStatePutGet(b *testing.B) {
	be, _ := newBackend[int64](b, 128, KeyGroupRange{0, 127}, 0, nil)
	s, _ := GetMapState(be, MapDescriptor[int32, int64]{Name: "m"})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		be.SetCurrentKey(int64(i % 1000))
		uk := int32(i % 16)
		v, _ := s.Get(uk)
		s.Put(uk, v+1)
	}
}
