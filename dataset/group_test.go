package dataset

import (
	"cmp"
	"context"
	"iter"
	"maps"
	"slices"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

func TestSortGroupAndGroupFirst(t *testing.T) {
	in := sales(10, 6000)
	// oracle: per shop, records by price descending then item ascending
	byShop := map[string][]sale{}
	for _, s := range in {
		byShop[s.Shop] = append(byShop[s.Shop], s)
	}
	order := func(a, b sale) int { return cmp.Or(cmp.Compare(b.Price, a.Price), cmp.Compare(a.Item, b.Item)) }
	for _, ss := range byShop {
		slices.SortStableFunc(ss, order)
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			g := GroupBy(FromSlice(env, in), func(s sale) string { return s.Shop })
			sorted := SortGroup(SortGroup(g, func(s sale) float64 { return s.Price }, Descending), func(s sale) int64 { return s.Item }, Ascending)
			checked := Collect(ReduceGroup(sorted, func(shop string, vals iter.Seq[sale], emit func(string)) {
				var prev *sale
				for v := range vals {
					if prev != nil && order(*prev, v) > 0 {
						emit("out of order in " + shop)
					}
					p := v
					prev = &p
				}
			}))
			top := Collect(GroupFirst(sorted, 2))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(checked.Values()) != 0 {
				t.Fatalf("sorted groups: %v", checked.Values()[:min(3, len(checked.Values()))])
			}
			got := map[string][]sale{}
			for _, s := range top.Values() {
				got[s.Shop] = append(got[s.Shop], s)
			}
			if len(got) != len(byShop) {
				t.Fatalf("GroupFirst: %d groups, want %d", len(got), len(byShop))
			}
			for shop, ss := range byShop {
				want := ss[:min(2, len(ss))]
				// ties on (price, item) may come in either order: compare the keys
				if len(got[shop]) != len(want) {
					t.Fatalf("shop %s: %d records, want %d", shop, len(got[shop]), len(want))
				}
				for i := range want {
					if order(got[shop][i], want[i]) != 0 {
						t.Fatalf("shop %s: first records %v, want %v", shop, got[shop], want)
					}
				}
			}
		})
	}
}

func TestCombineGroup(t *testing.T) {
	in := sales(11, 8000)
	want := map[string]int{}
	for _, s := range in {
		want[s.Shop]++
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			partial := CombineGroup(GroupBy(FromSlice(env, in), func(s sale) string { return s.Shop }),
				func(shop string, vals iter.Seq[sale], emit func(KV[string, int])) {
					n := 0
					for range vals {
						n++
					}
					emit(KV[string, int]{shop, n})
				})
			total := Collect(GroupBy(partial, func(kv KV[string, int]) string { return kv.Key }).
				Reduce(func(a, b KV[string, int]) KV[string, int] { return KV[string, int]{a.Key, a.Value + b.Value} }))
			parts := Count(partial)
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, kv := range total.Values() {
				got[kv.Key] = kv.Value
			}
			if !maps.Equal(got, want) {
				t.Fatalf("combine then reduce: %d shops, want %d", len(got), len(want))
			}
			// no shuffle before the combiner: at most one partial per shop and subtask
			if parts.N() > int64(len(want)*c.parallelism) || parts.N() < int64(len(want)) {
				t.Errorf("%d partial groups for %d shops at parallelism %d", parts.N(), len(want), c.parallelism)
			}
			if cg := nodeNamed(t, res.Plan, "CombineGroup"); cg.Decision.Ship[0] != optimizer.Forward {
				t.Errorf("CombineGroup ships its input %s:\n%s", cg.Decision.Ship[0], res.Plan.Text())
			}
		})
	}
}
