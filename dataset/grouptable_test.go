package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
)

// sumTable returns an empty group table of keyedSum by K that adds up Sum and N.
func sumTable(t testing.TB, groups, denseFloor int) *groupTable[keyedSum] {
	k, err := newKeyer[keyedSum, int64](func(x keyedSum) int64 { return x.K })
	if err != nil {
		t.Fatal(err)
	}
	codec, err := memory.NewCodec[keyedSum]()
	if err != nil {
		t.Fatal(err)
	}
	add := func(a, b keyedSum) keyedSum { return keyedSum{a.K, a.Sum + b.Sum, a.N + b.N} }
	return newGroupTable(k, codec, add, groups, denseFloor)
}

// TestGroupTableModes checks a group table of int64 keys against a map, in
// the dense mode and after it turns to hash mode: keys in order and shuffled,
// negative keys, keys at the ends of int64, a range that only widens downward,
// and keys that spread too far for dense mode part way through; then again
// after a reset, which keeps the mode.
func TestGroupTableModes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	seq := func(from, n int64) []int64 {
		ks := make([]int64, n)
		for i := range ks {
			ks[i] = from + int64(i)
		}
		return ks
	}
	shuffled := func(ks []int64) []int64 {
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		return ks
	}
	repeat := func(ks []int64, times int) []int64 {
		var out []int64
		for range times {
			out = append(out, ks...)
		}
		return shuffled(out)
	}
	const never = math.MaxInt
	for _, tc := range []struct {
		name     string
		keys     []int64
		minFloor int // the table ends in dense mode with a floor of at least this
	}{
		{"in-order", seq(0, 50000), 0},
		{"shuffled-repeated", repeat(seq(0, 30000), 3), 1 << 20},
		// keys spanning the floor exactly, in any order
		{"shuffled-floor", repeat(seq(1000, 4096), 2), 4096},
		{"negative", repeat(seq(-20000, 20000), 2), 1 << 20},
		{"downward", func() []int64 { ks := seq(0, 40000); slices.Reverse(ks); return ks }(), 0},
		{"int64-ends", repeat(append(seq(math.MinInt64, 100), seq(math.MaxInt64-99, 100)...), 2), never},
		// MaxInt64 encodes as the largest word, which no dense range holds
		{"top-end", repeat(seq(math.MaxInt64-999, 1000), 2), never},
		{"below-top-end", repeat(seq(math.MaxInt64-1000, 1000), 2), 4096},
		{"bottom-end", repeat(seq(math.MinInt64, 1000), 2), 4096},
		{"spread", append(repeat(seq(0, 5000), 2), shuffled([]int64{1 << 40, -1 << 50, 7, 1 << 20, 3})...), never},
		{"sparse-random", func() []int64 {
			ks := make([]int64, 20000)
			for i := range ks {
				ks[i] = r.Int64()
			}
			return ks
		}(), never},
	} {
		for _, floor := range []int{0, 4096, 1 << 20} {
			t.Run(fmt.Sprintf("%s/floor=%d", tc.name, floor), func(t *testing.T) {
				tab := sumTable(t, 16, floor)
				for round := range 2 { // a reset table keeps its mode
					want := map[int64]int64{}
					for i, key := range tc.keys {
						v := keyedSum{K: key, Sum: int64(i), N: 1}
						want[key] += int64(i)
						tab.add(&v)
					}
					if len(tab.vals) != len(want) {
						t.Fatalf("round %d: %d groups, want %d", round, len(tab.vals), len(want))
					}
					for _, v := range tab.vals {
						if want[v.K] != v.Sum {
							t.Fatalf("round %d: key %d sums to %d, want %d", round, v.K, v.Sum, want[v.K])
						}
					}
					if want := floor >= tc.minFloor; (want || tc.minFloor == never) && tab.isDense != want {
						t.Errorf("round %d: dense mode %v at the end, want %v", round, tab.isDense, want)
					}
					if tab.isDense && tab.bytes() < 4*int64(len(tab.dense)) {
						t.Errorf("bytes %d do not count the dense array of %d entries", tab.bytes(), len(tab.dense))
					}
					tab.reset()
				}
			})
		}
	}
}

// BenchmarkGroupTable adds 4M records with int64 keys drawn from [0, keys)
// (PageRank's contributions to the pages of one subtask, say) to a fresh
// table, in dense mode and in hash mode.
func BenchmarkGroupTable(b *testing.B) {
	for _, keys := range []int64{1 << 16, 1 << 20} {
		r := rand.New(rand.NewPCG(1, 1))
		in := make([]keyedSum, 4<<20)
		for i := range in {
			in[i] = keyedSum{K: r.Int64N(keys), Sum: 1, N: 1}
		}
		for _, mode := range []string{"dense", "hash"} {
			b.Run(fmt.Sprintf("keys=%d/%s", keys, mode), func(b *testing.B) {
				for b.Loop() {
					tab := sumTable(b, 1024, 1<<20)
					if mode == "hash" {
						tab.toHash()
					}
					for i := range in {
						tab.add(&in[i])
					}
					if tab.isDense != (mode == "dense") {
						b.Fatalf("dense mode %v", tab.isDense)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/record")
			})
		}
	}
}
