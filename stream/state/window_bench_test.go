package state

import "testing"

// BenchmarkWindowCells adds to a ReducingState in a namespace per
// window of 1<<16 events, for 100000 keys, as a tumbling window operator
// does: the (key, window) cell lookup and update of the hot path.
func BenchmarkWindowCells(b *testing.B) {
	be, _ := newBackend[int64](b, 128, KeyGroupRange{0, 127}, 0, nil)
	s, err := NewReducing[int64, int64](be, ReducingDescriptor[int64]{Name: "sum", Reduce: sum})
	if err != nil {
		b.Fatal(err)
	}
	const keys = 100000
	x := uint64(1)
	b.ResetTimer()
	for i := range b.N {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		be.SetCurrentKey(int64(x % keys))
		s.SetNamespace(int64(i >> 16))
		s.Add(1)
		if i&(1<<16-1) == 0 && i > 0 {
			for k := range int64(keys) { // the window before fires and is cleared
				be.SetCurrentKey(k)
				s.SetNamespace(int64(i>>16) - 1)
				s.Clear()
			}
		}
	}
}
