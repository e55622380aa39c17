package dataset

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

func TestPartitioning(t *testing.T) {
	in := sales(7, 6000)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			ds := FromSlice(env, in)
			// MapPartition sees each subtask's partition: after PartitionByHash on
			// Shop, every shop lives in exactly one partition.
			type part struct {
				Shops []string
				N     int
			}
			summarize := func(p *DataSet[sale]) *Collected[part] {
				return Collect(MapPartition(p, func(vals iter.Seq[sale], emit func(part)) {
					set := map[string]bool{}
					n := 0
					for v := range vals {
						set[v.Shop] = true
						n++
					}
					emit(part{slices.Sorted(maps.Keys(set)), n})
				}))
			}
			hashed := summarize(PartitionByHash(ds, func(s sale) string { return s.Shop }))
			ranged := summarize(PartitionByRange(ds, func(s sale) string { return s.Shop }))
			custom := Collect(MapPartition(PartitionCustom(ds, func(s sale, n int) int { return int(s.Item) % n }),
				func(vals iter.Seq[sale], emit func([]int64)) {
					var items []int64
					for v := range vals {
						items = append(items, v.Item)
					}
					emit(items)
				}))
			rebalanced := summarize(FromSlice(env, in).Filter(func(s sale) bool { return s.Shop == "s0" }).Rebalance())
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			total := 0
			for _, p := range hashed.Values() {
				total += p.N
				for _, s := range p.Shops {
					seen[s]++
				}
			}
			if total != len(in) {
				t.Errorf("hash partitions hold %d records, want %d", total, len(in))
			}
			for s, k := range seen {
				if k != 1 {
					t.Errorf("shop %s in %d hash partitions", s, k)
				}
			}
			// range partitions: disjoint and in order
			var last string
			for i, p := range ranged.Values() {
				if len(p.Shops) == 0 {
					continue
				}
				if last != "" && p.Shops[0] <= last {
					t.Errorf("range partition %d starts at %s, not after %s", i, p.Shops[0], last)
				}
				last = p.Shops[len(p.Shops)-1]
			}
			for i, items := range custom.Values() {
				for _, it := range items {
					if int(it)%c.parallelism != i {
						t.Fatalf("custom partition %d holds item %d", i, it)
					}
				}
			}
			var counts []int
			for _, p := range rebalanced.Values() {
				counts = append(counts, p.N)
			}
			if slices.Max(counts)-slices.Min(counts) > c.parallelism {
				t.Errorf("rebalanced partition sizes %v", counts)
			}
		})
	}
}

func TestCoGroup(t *testing.T) {
	cs, os := joinInputs(9)
	type summary struct {
		Customer int64
		Orders   int
		Has      bool
	}
	want := map[int64]summary{}
	for _, c := range cs {
		want[c.ID] = summary{c.ID, 0, true}
	}
	for _, o := range os {
		s := want[o.Customer]
		s.Customer = o.Customer
		s.Orders++
		want[o.Customer] = s
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			out := CoGroup(FromSlice(env, os), FromSlice(env, cs),
				func(o order) int64 { return o.Customer }, func(c customer) int64 { return c.ID },
				func(key int64, orders iter.Seq[order], custs iter.Seq[customer], emit func(summary)) {
					s := summary{Customer: key}
					for c := range custs { // the second input first: any order works
						if c.ID != key {
							panic("customer of another group")
						}
						s.Has = true
					}
					for o := range orders {
						if o.Customer != key {
							panic("order of another group")
						}
						s.Orders++
					}
					emit(s)
				})
			got := Collect(out)
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			gotMap := map[int64]summary{}
			for _, s := range got.Values() {
				if _, dup := gotMap[s.Customer]; dup {
					t.Fatalf("key %d twice", s.Customer)
				}
				gotMap[s.Customer] = s
			}
			if !maps.Equal(gotMap, want) {
				t.Fatalf("cogroup: %d keys, want %d", len(gotMap), len(want))
			}
		})
	}
}

func TestCross(t *testing.T) {
	xs := make([]int, 5000)
	for i := range xs {
		xs[i] = i
	}
	ys := []string{"a", "b", "c", "d", "e", "f", "g"}
	var want []string
	for _, x := range xs {
		for _, y := range ys {
			want = append(want, fmt.Sprintf("%d%s", x, y))
		}
	}
	slices.Sort(want)
	for _, hint := range []CrossHint{CrossAny, SecondIsTiny, SecondIsHuge} {
		for _, c := range configs {
			t.Run(fmt.Sprintf("%d/%s", hint, c.name), func(t *testing.T) {
				env := newEnv(t, c)
				got := Collect(Cross(FromSlice(env, xs), FromSlice(env, ys), func(x *int, y *string) string {
					return fmt.Sprintf("%d%s", *x, *y)
				}).WithCrossHint(hint))
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				g := slices.Clone(got.Values())
				slices.Sort(g)
				if !slices.Equal(g, want) {
					t.Fatalf("cross: %d pairs, want %d\n%s", len(g), len(want), res.Plan.Text())
				}
				if cross := nodeNamed(t, res.Plan, "Cross"); hint == SecondIsHuge && cross.Decision.Ship[0] != optimizer.Broadcast {
					t.Errorf("SecondIsHuge does not broadcast the first input:\n%s", res.Plan.Text())
				}
			})
		}
	}
}

func TestBroadcastSet(t *testing.T) {
	in := sales(8, 3000)
	thresholds := []float64{10, 50, 90}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			levels := MapWithBroadcast(FromSlice(env, in), FromSlice(env, thresholds), func(s sale, ts []float64) int {
				if len(ts) != len(thresholds) {
					panic(fmt.Sprintf("broadcast set has %d values", len(ts)))
				}
				n := 0
				for _, t := range ts {
					if s.Price >= t {
						n++
					}
				}
				return n
			})
			got := Collect(levels)
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			var sum, want int
			for _, v := range got.Values() {
				sum += v
			}
			for _, s := range in {
				for _, th := range thresholds {
					if s.Price >= th {
						want++
					}
				}
			}
			if len(got.Values()) != len(in) || sum != want {
				t.Errorf("%d results summing to %d, want %d summing to %d", len(got.Values()), sum, len(in), want)
			}
		})
	}
}
