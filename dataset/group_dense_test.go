package dataset

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

type keyedVal struct {
	K int64
	V int64
}

// TestReduceGroupDense checks ReduceGroup over int64 keys, which a
// typed.DenseGrouper groups by a counting sort when they are dense and hands to a
// sorter when they are sparse or the budget is small, against a naive
// grouping: every group once, with all its records, keys at both ends of
// int64, an empty input, one key for most records, records
// all of one key, and a group function that stops early.
func TestReduceGroupDense(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	gen := func(n int, key func(i int) int64) []keyedVal {
		vs := make([]keyedVal, n)
		for i := range vs {
			vs[i] = keyedVal{K: key(i), V: int64(i)}
		}
		return vs
	}
	for _, tc := range []struct {
		name  string
		in    []keyedVal
		dense bool // the unlimited budget groups them by counting
	}{
		{"dense", gen(20000, func(int) int64 { return r.Int64N(3000) - 1000 }), true},
		{"skewed", gen(20000, func(i int) int64 {
			if i%10 != 0 {
				return 7
			}
			return r.Int64N(5000)
		}), true},
		{"one-key", gen(5000, func(int) int64 { return math.MinInt64 }), true},
		{"ends", gen(4000, func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0}[i%3] }), false},
		{"sparse", gen(20000, func(int) int64 { return r.Int64() }), false},
		{"empty", nil, true},
	} {
		want := map[int64][]int64{}
		for _, v := range tc.in {
			want[v.K] = append(want[v.K], v.V)
		}
		for _, c := range configs {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				g := GroupBy(FromSlice(env, tc.in), func(v keyedVal) int64 { return v.K })
				groups := Collect(ReduceGroup(g, func(k int64, vals iter.Seq[keyedVal], emit func(KV[int64, []int64])) {
					var vs []int64
					for v := range vals {
						if v.K != k {
							panic(fmt.Sprintf("record of key %d in group %d", v.K, k))
						}
						vs = append(vs, v.V)
					}
					emit(KV[int64, []int64]{k, vs})
				}))
				firsts := Count(ReduceGroup(g, func(_ int64, vals iter.Seq[keyedVal], emit func(int)) {
					for range vals {
						emit(1)
						break
					}
				}))
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				// what the subtasks of the two ReduceGroups ran
				var variants []string
				for _, n := range res.Plan.Nodes {
					if n.Kind == optimizer.GroupReduce {
						variants = append(variants, n.Actual.Variant)
					}
				}
				if len(variants) != 2 {
					t.Fatalf("%d ReduceGroup nodes in the plan, want 2", len(variants))
				}
				ran := func(v string) bool { // by a subtask of each ReduceGroup
					for _, got := range variants {
						if !slices.Contains(strings.Split(got, "+"), v) {
							return false
						}
					}
					return true
				}
				got := groups.Values()
				if len(got) != len(want) {
					t.Fatalf("%d groups, want %d", len(got), len(want))
				}
				for _, kv := range got {
					w := want[kv.Key]
					slices.Sort(kv.Value) // want's are in order; a group's records come in no particular order
					if !slices.Equal(kv.Value, w) {
						t.Fatalf("key %d: %d records %v..., want %d %v...", kv.Key, len(kv.Value), kv.Value[:min(len(kv.Value), 5)],
							len(w), w[:min(len(w), 5)])
					}
				}
				if firsts.N() != int64(len(want)) {
					t.Errorf("early-stopping group function: %d results, want %d", firsts.N(), len(want))
				}
				if c.memory == 0 && len(tc.in) > 0 {
					if tc.dense && !ran("counting-sort") {
						t.Errorf("variants %q: no subtask grouped its records by counting", variants)
					}
					if !tc.dense && !ran("sorter") {
						t.Errorf("variants %q: the sparse keys did not go to a sorter", variants)
					}
				}
				if c.memory > 0 && len(tc.in) > 1000 && !ran("sorter") {
					t.Errorf("variants %q: under %d bytes no subtask handed its records to a sorter", variants, c.memory)
				}
			})
		}
	}
}

// BenchmarkReduceGroupDense builds adjacency lists, ReduceGroup by source
// over 2M edges of 128K sources at parallelism 2: keys dense (grouped by the
// counting sort) and the same keys spread by a large factor (too sparse:
// the sorter groups them), the difference being the local strategy.
func BenchmarkReduceGroupDense(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	edges := make([]keyedVal, 2<<20)
	for i := range edges {
		edges[i] = keyedVal{K: r.Int64N(128 << 10), V: r.Int64N(128 << 10)}
	}
	for _, mode := range []string{"dense", "sparse"} {
		in := edges
		if mode == "sparse" {
			in = make([]keyedVal, len(edges))
			for i, e := range edges {
				in[i] = keyedVal{K: e.K * 1_000_003, V: e.V}
			}
		}
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				env := New(Options{Parallelism: 2})
				g := GroupBy(FromSlice(env, in), func(v keyedVal) int64 { return v.K })
				n := Count(ReduceGroup(g, func(k int64, vals iter.Seq[keyedVal], emit func(int)) {
					d := 0
					for range vals {
						d++
					}
					emit(d)
				}))
				if _, err := env.Execute(context.Background()); err != nil {
					b.Fatal(err)
				}
				if n.N() == 0 {
					b.Fatal("no groups")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/record")
		})
	}
}
