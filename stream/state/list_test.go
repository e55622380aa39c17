package state

import "testing"

// BenchmarkListStateAdd appends to the lists of 1000 keys, as a window
// operator buffering elements does.
func BenchmarkListStateAdd(b *testing.B) {
	be, _ := newBackend[int64](b, 128, KeyGroupRange{0, 127}, 0, nil)
	s, _ := GetListState(be, ListDescriptor[int64]{Name: "buf"})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%1000000 == 0 {
			for k := int64(0); k < 1000; k++ {
				be.SetCurrentKey(k)
				s.Clear()
			}
		}
		be.SetCurrentKey(int64(i % 1000))
		s.Add(int64(i))
	}
}
