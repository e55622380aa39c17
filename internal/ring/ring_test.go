package ring

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFIFO: random pushes, pops and removes agree with a slice.
func TestFIFO(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for capacity := 1; capacity <= 9; capacity++ {
		f := New(capacity)
		var want []int
		for range 2000 {
			switch op := r.IntN(3); {
			case op == 0 && len(want) < capacity:
				v := r.IntN(5)
				f.Push(v)
				want = append(want, v)
			case op == 1 && len(want) > 0:
				if got := f.Pop(); got != want[0] {
					t.Fatalf("capacity %d: popped %d, want %d", capacity, got, want[0])
				}
				want = want[1:]
			case op == 2:
				v := r.IntN(5)
				f.Remove(v)
				want = slices.DeleteFunc(want, func(x int) bool { return x == v })
			}
			if f.Len() != len(want) {
				t.Fatalf("capacity %d: length %d, want %d", capacity, f.Len(), len(want))
			}
		}
	}
}
