package typed

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

type foldAcc struct {
	Sum []int64
	N   int64
}

// foldInto folds v into the accumulator of key k of t, as a fold with a
// slice in its accumulator does: it allocates the slice once per group.
func foldInto[K comparable](t *FoldTable[K, foldAcc], k K, v int64) {
	a := t.Acc(k)
	if a.Sum == nil {
		a.Sum = make([]int64, 2)
	}
	a.Sum[0] += v
	a.Sum[1] += v * v
	a.N++
}

// checkFold folds keys[i] ← i into a table and compares its groups with a
// map's, then again after Clear.
func checkFold[K comparable](t *testing.T, keys []K) {
	t.Helper()
	ft := NewFoldTable[K, foldAcc]()
	for range 2 {
		want := map[K][3]int64{}
		for i, k := range keys {
			foldInto(ft, k, int64(i))
			w := want[k]
			want[k] = [3]int64{w[0] + int64(i), w[1] + int64(i)*int64(i), w[2] + 1}
		}
		if ft.Len() != len(want) {
			t.Fatalf("%d groups, want %d", ft.Len(), len(want))
		}
		for i, k := range ft.Keys() {
			a := ft.Accs()[i]
			if got := [3]int64{a.Sum[0], a.Sum[1], a.N}; got != want[k] {
				t.Fatalf("key %v: %v, want %v", k, got, want[k])
			}
		}
		ft.Clear()
		if ft.Len() != 0 {
			t.Fatalf("%d groups after Clear", ft.Len())
		}
	}
}

// TestFoldTable: the groups of dense, negative, large and non-integer keys,
// and of runs of one key, equal a map's.
func TestFoldTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var mixed []int64
	for range 5000 {
		switch r.IntN(4) {
		case 0:
			mixed = append(mixed, -r.Int64N(50))
		case 1:
			mixed = append(mixed, r.Int64N(1<<40))
		default:
			mixed = append(mixed, r.Int64N(foldDense+20))
		}
	}
	checkFold(t, mixed)
	var small []uint8
	var runs []int
	var strs []string
	for i := range 3000 {
		small = append(small, uint8(r.IntN(256)))
		runs = append(runs, i/700)
		strs = append(strs, "k"+strconv.Itoa(r.IntN(40)))
	}
	checkFold(t, small)
	checkFold(t, runs)
	checkFold(t, strs)
	type pair struct{ A, B int32 }
	checkFold(t, []pair{{1, 2}, {2, 1}, {1, 2}, {-1, 0}, {2, 1}})
	// up to foldFew keys found by comparison, then past it by the map
	type flags struct{ F, S string }
	var few []flags
	for i := range 4000 {
		few = append(few, flags{string(rune('A' + r.IntN(3))), string(rune('F' + r.IntN(2)))})
		if i > 3000 {
			few = append(few, flags{"Z", strconv.Itoa(i % 9)}) // 9 more keys: past foldFew
		}
	}
	checkFold(t, few)
}

// TestFoldTableAllocs: folding into the groups a table holds allocates
// nothing, dense or hashed.
func TestFoldTableAllocs(t *testing.T) {
	dense := NewFoldTable[int64, foldAcc]()
	hashed := NewFoldTable[string, foldAcc]()
	keys := []string{"a", "b", "c", "d"}
	for i := range 10 {
		foldInto(dense, int64(i), 1)
		foldInto(hashed, keys[i%4], 1)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := range 1000 {
			foldInto(dense, int64(i%10), int64(i))
			foldInto(hashed, keys[i%4], int64(i))
		}
	}); n != 0 {
		t.Fatalf("%v allocations per 2,000 folds, want 0", n)
	}
}
