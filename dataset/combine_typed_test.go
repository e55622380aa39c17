package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weirdata/weir/internal/typed"
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
		{"more-groups-than-the-table", 120000, 3 * typed.CombinerEntries},
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
	cs := append(configs, config{"p2-32MiB", 2, 32 << 20})
	if testing.Short() {
		cs = cs[1:] // the race run: the budgets only (configs[0] is unlimited)
	}
	for _, c := range cs {
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
