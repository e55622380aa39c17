package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type foldSale struct {
	Shop  string
	Item  int64
	Price int64
}

type shopSum struct {
	Sum, Count int64
	Items      []int64 // what the accumulator keeps: merged by appending
}

// TestFold checks Fold against a map: string keys with one hot key, many
// distinct keys (more than a subtask holds under the tiny budget, so groups
// are handed on early), small integer keys (the dense array), an empty input,
// across the configurations. The accumulator keeps a slice, so merge order
// matters only for its order: it is compared sorted.
func TestFold(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 7))
	sales := func(n, shops int, hot bool) []foldSale {
		out := make([]foldSale, n)
		for i := range out {
			s := r.IntN(shops)
			if hot && i%2 == 0 {
				s = 0
			}
			out[i] = foldSale{Shop: fmt.Sprint("shop-", s), Item: int64(i), Price: int64(r.IntN(1000))}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []foldSale
	}{
		{"hot-key", sales(20000, 50, true)},
		{"many-keys", sales(30000, 20000, false)},
		{"one", sales(1, 1, false)},
		{"empty", nil},
	} {
		type acc struct {
			sum, count int64
			items      []int64
		}
		want := map[string]*acc{}
		for _, s := range tc.in {
			a := want[s.Shop]
			if a == nil {
				a = &acc{}
				want[s.Shop] = a
			}
			a.sum += s.Price
			a.count++
			a.items = append(a.items, s.Item)
		}
		for _, c := range configs {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				out := Collect(Fold(FromSlice(env, tc.in), func(s foldSale) string { return s.Shop },
					func(a *shopSum, s foldSale) {
						a.Sum += s.Price
						a.Count++
						a.Items = append(a.Items, s.Item)
					},
					func(a *shopSum, b shopSum) {
						a.Sum += b.Sum
						a.Count += b.Count
						a.Items = append(a.Items, b.Items...)
					}))
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				got := out.Values()
				if len(got) != len(want) {
					t.Fatalf("%d groups, want %d", len(got), len(want))
				}
				for _, kv := range got {
					w := want[kv.Key]
					if w == nil || kv.Value.Sum != w.sum || kv.Value.Count != w.count {
						t.Fatalf("%s: %+v, want %+v", kv.Key, kv.Value, w)
					}
					items := slices.Clone(kv.Value.Items)
					slices.Sort(items)
					if !slices.Equal(items, w.items) {
						t.Fatalf("%s: %d items, want %d", kv.Key, len(items), len(w.items))
					}
				}
			})
		}
	}
}

// TestFoldDenseKeys checks Fold with small non-negative integer keys (the
// fold table's dense array) and negative ones (its map) in one input.
func TestFoldDenseKeys(t *testing.T) {
	var in []int64
	for i := range int64(10000) {
		in = append(in, i%37-5)
	}
	want := map[int64]int64{}
	for _, v := range in {
		want[v] += v * 3
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			out := Collect(Fold(FromSlice(env, in), func(v int64) int64 { return v },
				func(a *int64, v int64) { *a += 3 * v }, func(a *int64, b int64) { *a += b }))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkGroups(t, out.Values(), want, func(kv KV[int64, int64]) int64 { return kv.Key },
				func(kv KV[int64, int64]) int64 { return kv.Value })
		})
	}
}
