package typed

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

type kv struct{ K, V int64 }

// sortedPairs encodes recs under k and returns their pairs sorted by key,
// the order a sorter returns.
func sortedPairs(t *testing.T, recs []kv, k *Keyer[kv], codec *memory.Codec[kv]) *resettableIter {
	t.Helper()
	var pairs []sortjoin.Record
	for i := range recs {
		pairs = append(pairs, sortjoin.Record{Key: k.Append(nil, &recs[i]), Val: codec.Append(nil, &recs[i])})
	}
	slices.SortStableFunc(pairs, func(a, b sortjoin.Record) int { return bytes.Compare(a.Key, b.Key) })
	return &resettableIter{recs: pairs}
}

// randomKVs returns n records over keys in [0, keys), skewed to small keys.
func randomKVs(r *rand.Rand, n, keys int) []kv {
	recs := make([]kv, n)
	for i := range recs {
		k := r.IntN(keys)
		if r.IntN(2) == 0 {
			k = r.IntN(1 + keys/10)
		}
		recs[i] = kv{K: int64(k - keys/2), V: int64(i)}
	}
	return recs
}

// naiveGroups maps each key to the values of its records, in input order.
func naiveGroups(recs []kv) map[int64][]int64 {
	m := map[int64][]int64{}
	for _, r := range recs {
		m[r.K] = append(m[r.K], r.V)
	}
	return m
}

func newKV(t *testing.T) (*Keyer[kv], *memory.Codec[kv]) {
	t.Helper()
	k, err := NewKeyer[kv, int64](func(r kv) int64 { return r.K })
	if err != nil {
		t.Fatal(err)
	}
	codec, err := memory.NewCodec[kv]()
	if err != nil {
		t.Fatal(err)
	}
	return k, codec
}

// TestReduceSorted checks every group against a map, with functions that
// read all, some or none of each group.
func TestReduceSorted(t *testing.T) {
	k, codec := newKV(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 17, 5000} {
		recs := randomKVs(r, n, 300)
		want := naiveGroups(recs)
		for _, limit := range []int{-1, 0, 1, 3} { // values read per group; -1 all
			got := map[int64][]int64{}
			var order []int64
			err := ReduceSorted(context.Background(), sortedPairs(t, recs, k, codec), k, codec, func(r kv) int64 { return r.K },
				func(key int64, vals iter.Seq[kv]) error {
					order = append(order, key)
					got[key] = []int64{}
					for v := range vals {
						if limit >= 0 && len(got[key]) == limit {
							break
						}
						if v.K != key {
							t.Fatalf("record %v in the group of %d", v, key)
						}
						got[key] = append(got[key], v.V)
					}
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d limit=%d: %d groups, want %d", n, limit, len(got), len(want))
			}
			if !slices.IsSorted(order) {
				t.Fatalf("groups out of key order: %v", order)
			}
			for key, vs := range want {
				if limit >= 0 && len(vs) > limit {
					vs = vs[:limit]
				}
				if !slices.Equal(got[key], vs) {
					t.Fatalf("n=%d limit=%d key %d: %v, want %v", n, limit, key, got[key], vs)
				}
			}
		}
	}
}

// TestReduceSortedError checks that fn's error stops the walk.
func TestReduceSortedError(t *testing.T) {
	k, codec := newKV(t)
	recs := randomKVs(rand.New(rand.NewPCG(3, 4)), 100, 10)
	boom := errors.New("boom")
	calls := 0
	err := ReduceSorted(context.Background(), sortedPairs(t, recs, k, codec), k, codec, func(r kv) int64 { return r.K },
		func(int64, iter.Seq[kv]) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err %v after %d calls, want boom after 1", err, calls)
	}
}

// TestCoGroupSorted checks every key of either side against two maps.
func TestCoGroupSorted(t *testing.T) {
	k, codec := newKV(t)
	r := rand.New(rand.NewPCG(5, 6))
	for _, sizes := range [][2]int{{0, 0}, {0, 40}, {40, 0}, {3000, 2000}} {
		ls, rs := randomKVs(r, sizes[0], 200), randomKVs(r, sizes[1], 200)
		wl, wr := naiveGroups(ls), naiveGroups(rs)
		type both struct{ l, r []int64 }
		got := map[int64]both{}
		collect := func(seq iter.Seq[kv]) []int64 {
			out := []int64{}
			for v := range seq {
				out = append(out, v.V)
			}
			return out
		}
		key := func(r kv) int64 { return r.K }
		err := CoGroupSorted(context.Background(), sortedPairs(t, ls, k, codec), sortedPairs(t, rs, k, codec), codec, codec, key, key,
			func(key int64, l, r iter.Seq[kv]) error {
				if _, dup := got[key]; dup {
					t.Fatalf("key %d twice", key)
				}
				got[key] = both{collect(l), collect(r)}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[int64]bool{}
		for key := range wl {
			keys[key] = true
		}
		for key := range wr {
			keys[key] = true
		}
		if len(got) != len(keys) {
			t.Fatalf("%v: %d keys, want %d", sizes, len(got), len(keys))
		}
		for key := range keys {
			g := got[key]
			if !slices.Equal(g.l, append([]int64{}, wl[key]...)) || !slices.Equal(g.r, append([]int64{}, wr[key]...)) {
				t.Fatalf("%v key %d: %v %v, want %v %v", sizes, key, g.l, g.r, wl[key], wr[key])
			}
		}
	}
}
