package typed

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCombinerModes drives a typed combiner directly, with the records
// in the dense entries and behind indexes: keys that its dense range holds
// leave it one record each (behind indexes, up to CombinerEntries
// keys); sorted keys wider than the range move it along, still dense and
// still one record a key; keys spread too far for it turn it to hashing; the
// sums equal a map's in every case.
func TestCombinerModes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	seq := func(n int, times int) []int64 {
		var ks []int64
		for i := range n {
			for range times {
				ks = append(ks, int64(i))
			}
		}
		return ks
	}
	shuffle := func(ks []int64) []int64 {
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		return ks
	}
	spread := make([]int64, 30000)
	for i := range spread {
		spread[i] = r.Int64N(1 << 40)
	}
	for _, tc := range []struct {
		name   string
		keys   []int64
		floor  int
		dense  bool // the table ends in dense mode
		perKey bool // one record out per key
	}{
		{"held", shuffle(seq(100000, 3)), 1 << 20, true, true},
		{"sorted-moving", seq(50000, 3), 4096, true, true},
		{"spread", spread, 4096, false, false},
		{"largest-first", append([]int64{math.MaxInt64}, shuffle(seq(5000, 2))...), 4096, false, false},
	} {
		for _, direct := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/direct=%v", tc.name, direct), func(t *testing.T) {
				out := &sumCollector{sums: map[int64]int64{}}
				c := &Combiner[keyedSum]{t: sumTable(t, CombinerEntries, tc.floor), sink: out.collect, batch: 64}
				c.t.direct = direct
				c.t.noHash = true
				want := map[int64]int64{}
				in := make([]keyedSum, len(tc.keys))
				for i, k := range tc.keys {
					in[i] = keyedSum{K: k, Sum: int64(i), N: 1}
					want[k] += int64(i)
				}
				for lo := 0; lo < len(in); lo += 100 {
					if err := c.Add(in[lo:min(lo+100, len(in))]); err != nil {
						t.Fatal(err)
					}
				}
				if c.t.isDense != tc.dense {
					t.Errorf("dense mode %v at the end, want %v", c.t.isDense, tc.dense)
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				checkGroups(t, slices.Collect(maps.Keys(out.sums)), want, func(k int64) int64 { return k }, func(k int64) int64 { return out.sums[k] })
				// behind indexes, it holds CombinerEntries groups at most
				if tc.perKey && (direct || len(want) <= CombinerEntries) && out.n != int64(len(want)) {
					t.Errorf("%d records out, want one for each of %d keys", out.n, len(want))
				}
				if c.t.isDense && c.t.denseLen() > uint64(tc.floor+128) {
					t.Errorf("dense range of %d entries, more than the floor %d", c.t.denseLen(), tc.floor)
				}
			})
		}
	}
}
