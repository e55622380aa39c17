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

// TestCombinerPasses checks a hashing combiner's judgement after PassProbe
// records: more than four groups in five make it pass its input through (the
// groups it held, then every later record as it came), four in five or fewer
// keep it combining, a dense table is not judged, and Reset judges anew. The
// sums equal a map's in every case; the records out are counted exactly.
func TestCombinerPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	// keys whose first PassProbe records make exactly groups groups, spread
	// wide enough to hash, then n-PassProbe records of fresh keys
	probe := func(groups, n int) []int64 {
		spread := func(i int) int64 { return int64(i) * 1_000_003 << 8 }
		ks := make([]int64, 0, n)
		for i := range PassProbe {
			ks = append(ks, spread(i%groups))
		}
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		for i := PassProbe; i < n; i++ {
			ks = append(ks, spread(groups+i))
		}
		return ks
	}
	dense := make([]int64, 100000)
	for i := range dense {
		dense[i] = int64(i)
	}
	r.Shuffle(len(dense), func(i, j int) { dense[i], dense[j] = dense[j], dense[i] })
	edge := PassProbe * 4 / 5 // the most groups that keep it combining
	for _, tc := range []struct {
		name    string
		keys    []int64
		passing bool
		out     int64 // records out
	}{
		{"distinct", probe(PassProbe, 100000), true, 100000},
		{"just-over", probe(edge+1, 50000), true, int64(edge + 1 + 50000 - PassProbe)},
		{"at-edge", probe(edge, 50000), false, int64(edge + 50000 - PassProbe)},
		{"repeats", probe(PassProbe/5, 50000), false, int64(PassProbe/5 + 50000 - PassProbe)},
		{"dense", dense, false, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &sumCollector{sums: map[int64]int64{}}
			c := &Combiner[keyedSum]{t: sumTable(t, CombinerEntries, 1<<20), sink: out.collect, batch: 64}
			c.t.noHash = true
			if tc.name != "dense" {
				c.t.toHash(CombinerEntries) // as a table whose keys spread too far has
			}
			want := map[int64]int64{}
			in := make([]keyedSum, len(tc.keys))
			for i, k := range tc.keys {
				in[i] = keyedSum{K: k, Sum: int64(i), N: 1}
				want[k] += int64(i)
			}
			for round := range 2 { // Reset judges anew
				clear(out.sums)
				out.n = 0
				for lo := 0; lo < len(in); lo += 1000 {
					if err := c.Add(in[lo:min(lo+1000, len(in))]); err != nil {
						t.Fatal(err)
					}
				}
				if c.Passing() != tc.passing {
					t.Errorf("round %d: passing %v, want %v", round, c.Passing(), tc.passing)
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				checkGroups(t, slices.Collect(maps.Keys(out.sums)), want, func(k int64) int64 { return k }, func(k int64) int64 { return out.sums[k] })
				if out.n != tc.out {
					t.Errorf("round %d: %d records out, want %d", round, out.n, tc.out)
				}
				c.Reset(out.collect)
			}
		})
	}
}

// TestCombinerPassesReset checks that Reset forgets the judgement: a
// combiner that passed distinct keys through combines repeated keys after a
// Reset.
func TestCombinerPassesReset(t *testing.T) {
	out := &sumCollector{sums: map[int64]int64{}}
	c := &Combiner[keyedSum]{t: sumTable(t, CombinerEntries, 1<<20), sink: out.collect, batch: 64}
	c.t.noHash = true
	c.t.toHash(CombinerEntries)
	add := func(keys func(i int) int64, n int) {
		for i := range n {
			if err := c.Add([]keyedSum{{K: keys(i), Sum: 1, N: 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(func(i int) int64 { return int64(i) << 30 }, 2*PassProbe)
	if !c.Passing() || out.n != 2*PassProbe {
		t.Fatalf("distinct keys: passing %v, %d records out, want true, %d", c.Passing(), out.n, 2*PassProbe)
	}
	c.Reset(out.collect)
	out.n = 0
	add(func(i int) int64 { return int64(i%100) << 30 }, 2*PassProbe)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if c.Passing() || out.n != 100 {
		t.Fatalf("after Reset, 100 keys: passing %v, %d records out, want false, 100", c.Passing(), out.n)
	}
}
