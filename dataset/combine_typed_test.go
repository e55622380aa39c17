package dataset

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

type keyedSum struct {
	K   int64
	Sum int64
	N   int32
}

// TestTypedCombiner: a Reduce over a flat record type combines without
// serializing; with more groups than its table holds it sends partial groups
// early, and with one hot key it folds everything into one. The sums equal a
// map's, at every parallelism and budget.
func TestTypedCombiner(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, groups int
	}{
		{"empty", 0, 1},
		{"hot-key", 50000, 1},
		{"more-groups-than-the-table", 120000, 3 * typedCombinerEntries},
		{"unique", 40000, 1 << 30},
	} {
		r := rand.New(rand.NewPCG(uint64(tc.n), 5))
		in := make([]keyedSum, tc.n)
		want := map[int64]int64{}
		for i := range in {
			k := r.Int64N(int64(tc.groups))
			in[i] = keyedSum{K: k, Sum: int64(i), N: 1}
			want[k] += int64(i)
		}
		for _, c := range configs {
			t.Run(fmt.Sprintf("%s/%s", tc.name, c.name), func(t *testing.T) {
				env := newEnv(t, c)
				red := GroupBy(FromSlice(env, in), func(x keyedSum) int64 { return x.K }).
					Reduce(func(a, b keyedSum) keyedSum { return keyedSum{a.K, a.Sum + b.Sum, a.N + b.N} })
				got := Collect(red)
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				vals := got.Values()
				checkGroups(t, vals, want, func(v keyedSum) int64 { return v.K }, func(v keyedSum) int64 { return v.Sum })
				var n int64
				for _, v := range vals {
					n += int64(v.N)
				}
				if n != int64(tc.n) {
					t.Fatalf("%d records combined, want %d", n, tc.n)
				}
			})
		}
	}
}

type namedSum struct {
	Name string
	Sum  int64
}

// TestTypedCombinerStrings: a Reduce over records with strings combines and
// aggregates in typed tables too, owning each group's strings; 40,000 groups
// of 300-byte names (12 MB) pass the bytes the combiner owns before it
// flushes, so it flushes early, and under small budgets the final phase
// spills. The sums equal a map's at every parallelism and budget.
func TestTypedCombinerStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	const groups = 40000
	names := make([]string, groups)
	for i := range names {
		names[i] = fmt.Sprintf("%0300d", i)
	}
	in := make([]namedSum, 100000)
	want := map[string]int64{}
	for i := range in {
		n := names[r.IntN(groups)]
		in[i] = namedSum{Name: n, Sum: int64(i)}
		want[n] += int64(i)
	}
	// p2-32MiB: the combiners take about 23 MiB; each final aggregation's
	// typed table fills some megabytes of its share and then hands its groups
	// over to the spilling aggregator
	for _, c := range append(configs, config{"p2-32MiB", 2, 32 << 20}) {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := Collect(GroupBy(FromSlice(env, in), func(x namedSum) string { return x.Name }).
				Reduce(func(a, b namedSum) namedSum { return namedSum{a.Name, a.Sum + b.Sum} }))
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if c.memory > 0 && spilled(res) == 0 {
				t.Errorf("12 MB of groups under a %d-byte budget spilled nothing", c.memory)
			}
			vals := got.Values()
			if len(vals) != len(want) {
				t.Fatalf("%d groups, want %d", len(vals), len(want))
			}
			for _, v := range vals {
				if want[v.Name] != v.Sum {
					t.Fatalf("name %.10s…: sum %d, want %d", v.Name, v.Sum, want[v.Name])
				}
			}
		})
	}
}

// TestTypedCombinerModes drives a typed combiner directly, with the records
// in the dense entries and behind indexes: keys that its dense range holds
// leave it one record each (behind indexes, up to typedCombinerEntries
// keys); sorted keys wider than the range move it along, still dense and
// still one record a key; keys spread too far for it turn it to hashing; the
// sums equal a map's in every case.
func TestTypedCombinerModes(t *testing.T) {
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
				c := &typedCombiner[keyedSum]{t: sumTable(t, typedCombinerEntries, tc.floor), next: out, batch: 64}
				c.t.direct = direct
				c.t.noHash = true
				want := map[int64]int64{}
				in := make([]keyedSum, len(tc.keys))
				for i, k := range tc.keys {
					in[i] = keyedSum{K: k, Sum: int64(i), N: 1}
					want[k] += int64(i)
				}
				for lo := 0; lo < len(in); lo += 100 {
					if err := c.collect(in[lo:min(lo+100, len(in))]); err != nil {
						t.Fatal(err)
					}
				}
				if c.t.isDense != tc.dense {
					t.Errorf("dense mode %v at the end, want %v", c.t.isDense, tc.dense)
				}
				if err := c.close(); err != nil {
					t.Fatal(err)
				}
				if !out.closed {
					t.Error("downstream not closed")
				}
				checkGroups(t, slices.Collect(maps.Keys(out.sums)), want, func(k int64) int64 { return k }, func(k int64) int64 { return out.sums[k] })
				// behind indexes, it holds typedCombinerEntries groups at most
				if tc.perKey && (direct || len(want) <= typedCombinerEntries) && out.n != int64(len(want)) {
					t.Errorf("%d records out, want one for each of %d keys", out.n, len(want))
				}
				if c.t.isDense && c.t.denseLen() > uint64(tc.floor+128) {
					t.Errorf("dense range of %d entries, more than the floor %d", c.t.denseLen(), tc.floor)
				}
			})
		}
	}
}
