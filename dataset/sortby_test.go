package dataset

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
)

func TestSortByMixedDirections(t *testing.T) {
	in := sales(12, 4000)
	order := func(a, b sale) int {
		return cmp.Or(strings.Compare(b.Shop, a.Shop), cmp.Compare(a.Item, b.Item), cmp.Compare(b.Price, a.Price))
	}
	want := slices.Clone(in)
	slices.SortFunc(want, order)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			keys := []SortKey[sale]{
				By(func(s sale) string { return s.Shop }, Descending),
				By(func(s sale) int64 { return s.Item }, Ascending),
				By(func(s sale) float64 { return s.Price }, Descending),
			}
			all := Collect(SortBy(FromSlice(env, in), keys...))
			parts := Collect(SortPartitionBy(FromSlice(env, in), keys...))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := all.Values()
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if order(got[i], want[i]) != 0 {
					t.Fatalf("record %d is %+v, want %+v", i, got[i], want[i])
				}
			}
			descents := 0
			for i := 1; i < len(parts.Values()); i++ {
				if order(parts.Values()[i-1], parts.Values()[i]) > 0 {
					descents++
				}
			}
			if len(parts.Values()) != len(in) || descents > c.parallelism-1 {
				t.Errorf("SortPartitionBy: %d records, %d descents over %d partitions", len(parts.Values()), descents, c.parallelism)
			}
		})
	}
	env := New(Options{Parallelism: 2})
	type bad struct{ M map[int]int }
	SortBy(FromSlice(env, []bad{{}}), By(func(b bad) map[int]int { return b.M }, Ascending))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "SortBy at sortby_test.go") {
		t.Errorf("a key that cannot be a key: err = %v", err)
	}
}

func TestSumOfDecimals(t *testing.T) {
	in := sales(13, 5000)
	want := map[string]parquet.Decimal{}
	for _, s := range in {
		d := parquet.NewDecimal(int64(s.Price*100+0.5), 2)
		if w, ok := want[s.Shop]; ok {
			want[s.Shop] = w.Add(d)
		} else {
			want[s.Shop] = d
		}
	}
	env := newEnv(t, allConfigs[3]) // parallelism 3, tiny memory
	g := GroupBy(FromSlice(env, in), func(s sale) string { return s.Shop })
	sums := Collect(Aggregate(g, agg.SumAdder(func(s sale) parquet.Decimal { return parquet.NewDecimal(int64(s.Price*100+0.5), 2) })))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sums.Values()) != len(want) {
		t.Fatalf("%d groups, want %d", len(sums.Values()), len(want))
	}
	for _, kv := range sums.Values() {
		if kv.Value != want[kv.Key] { // exact: decimal sums do not round
			t.Errorf("%s: %v, want %v", kv.Key, kv.Value, want[kv.Key])
		}
	}
}
