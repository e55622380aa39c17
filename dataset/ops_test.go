package dataset

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats"
)

type sale struct {
	Shop  string
	Item  int64
	Price float64
}

func sales(seed uint64, n int) []sale {
	r := rand.New(rand.NewPCG(seed, 3))
	z := rand.NewZipf(r, 1.1, 1, 199)
	out := make([]sale, n)
	for i := range out {
		out[i] = sale{Shop: fmt.Sprintf("s%d", z.Uint64()), Item: int64(r.IntN(50)), Price: float64(r.IntN(10000)) / 100}
	}
	return out
}

func TestUnion(t *testing.T) {
	a, b := sales(1, 3000), sales(2, 1000)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			src := FromSlice(env, a)
			// two branches of one producer, rejoined: must not stall
			cheap := src.Filter(func(s sale) bool { return s.Price < 50 })
			dear := src.Filter(func(s sale) bool { return s.Price >= 50 })
			got := Collect(Union(cheap, dear, FromSlice(env, b)))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(a), b...)
			bySale := func(x, y sale) int {
				return cmp.Or(strings.Compare(x.Shop, y.Shop), cmp.Compare(x.Item, y.Item), cmp.Compare(x.Price, y.Price))
			}
			g := slices.Clone(got.Values())
			slices.SortFunc(g, bySale)
			slices.SortFunc(want, bySale)
			if !slices.Equal(g, want) {
				t.Fatalf("union: got %d records, want %d", len(g), len(want))
			}
		})
	}
}

type shopStats struct {
	N        int64
	Sum      float64
	MinPrice float64
	MaxItem  int64
}

func TestAggregations(t *testing.T) {
	in := sales(3, 20000)
	type shopAgg struct {
		n              int64
		sum, min, mean float64
		maxItem        int64
	}
	want := map[string]*shopAgg{}
	var total float64
	for _, s := range in {
		a := want[s.Shop]
		if a == nil {
			a = &shopAgg{min: math.Inf(1)}
			want[s.Shop] = a
		}
		a.n++
		a.sum += s.Price
		a.min = min(a.min, s.Price)
		a.maxItem = max(a.maxItem, s.Item)
		total += s.Price
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			ds := FromSlice(env, in)
			g := GroupBy(ds, func(s sale) string { return s.Shop })
			sums := Collect(Aggregate(g, agg.Sum(func(s sale) float64 { return s.Price })))
			counts := Collect(Aggregate(g, agg.Count[sale]()))
			mins := Collect(Aggregate(g, agg.Min(func(s sale) float64 { return s.Price })))
			avgs := Collect(Aggregate(g, agg.Avg(func(s sale) float64 { return s.Price })))
			maxBy := Collect(Aggregate(g, agg.MaxBy(func(s sale) int64 { return s.Item })))
			all := Collect(AggregateAll(ds, agg.Sum(func(s sale) float64 { return s.Price })))
			distinct := Count(Distinct(ds, func(s sale) string { return s.Shop }))
			// several aggregates at once with a struct accumulator
			multi := Collect(Aggregate(g, agg.Func[sale, shopStats]{
				Init: func(s sale) shopStats { return shopStats{1, s.Price, s.Price, s.Item} },
				Merge: func(a, b shopStats) shopStats {
					return shopStats{a.N + b.N, a.Sum + b.Sum, min(a.MinPrice, b.MinPrice), max(a.MaxItem, b.MaxItem)}
				},
			}))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
			check := func(name string, n int, f func(i int) (string, bool)) {
				if n != len(want) {
					t.Errorf("%s: %d groups, want %d", name, n, len(want))
				}
				for i := 0; i < n; i++ {
					if shop, ok := f(i); !ok {
						t.Errorf("%s: shop %s wrong", name, shop)
						return
					}
				}
			}
			check("sum", len(sums.Values()), func(i int) (string, bool) {
				kv := sums.Values()[i]
				return kv.Key, near(kv.Value, want[kv.Key].sum)
			})
			check("count", len(counts.Values()), func(i int) (string, bool) {
				kv := counts.Values()[i]
				return kv.Key, kv.Value == want[kv.Key].n
			})
			check("min", len(mins.Values()), func(i int) (string, bool) {
				kv := mins.Values()[i]
				return kv.Key, kv.Value == want[kv.Key].min
			})
			check("avg", len(avgs.Values()), func(i int) (string, bool) {
				kv := avgs.Values()[i]
				return kv.Key, near(kv.Value.Value(), want[kv.Key].sum/float64(want[kv.Key].n))
			})
			check("maxBy", len(maxBy.Values()), func(i int) (string, bool) {
				kv := maxBy.Values()[i]
				return kv.Key, kv.Value.Item == want[kv.Key].maxItem && kv.Value.Shop == kv.Key
			})
			check("multi", len(multi.Values()), func(i int) (string, bool) {
				kv := multi.Values()[i]
				w := want[kv.Key]
				return kv.Key, kv.Value.N == w.n && near(kv.Value.Sum, w.sum) && kv.Value.MinPrice == w.min && kv.Value.MaxItem == w.maxItem
			})
			if len(all.Values()) != 1 || !near(all.Values()[0], total) {
				t.Errorf("AggregateAll = %v, want [%v]", all.Values(), total)
			}
			if distinct.N() != int64(len(want)) {
				t.Errorf("Distinct: %d, want %d", distinct.N(), len(want))
			}
		})
	}
}

func TestSortAndFirst(t *testing.T) {
	in := sales(4, 5000)
	byPriceDesc := func(a, b sale) int { return cmp.Compare(b.Price, a.Price) }
	want := slices.Clone(in)
	slices.SortStableFunc(want, byPriceDesc)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			sorted := Sort(FromSlice(env, in), func(s sale) float64 { return s.Price }, Descending)
			all := Collect(sorted)
			top := Collect(sorted.First(10))
			parts := Collect(SortPartition(FromSlice(env, in), func(s sale) string { return s.Shop }, Ascending))
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			prices := func(ss []sale) []float64 {
				out := make([]float64, len(ss))
				for i, s := range ss {
					out[i] = s.Price
				}
				return out
			}
			if got := prices(all.Values()); !slices.Equal(got, prices(want)) {
				t.Fatalf("Sort: %d values, not the descending order of the input", len(got))
			}
			if got := prices(top.Values()); !slices.Equal(got, prices(want[:10])) {
				t.Errorf("First(10) after Sort = %v, want %v", got, prices(want[:10]))
			}
			if !strings.Contains(res.Plan.Text(), ":RANGE/") {
				t.Errorf("total sort without a range partitioning:\n%s", res.Plan.Text())
			}
			// SortPartition: the same records; sorted within each subtask's run.
			if len(parts.Values()) != len(in) {
				t.Errorf("SortPartition: %d records, want %d", len(parts.Values()), len(in))
			}
			descents := 0
			for i := 1; i < len(parts.Values()); i++ {
				if parts.Values()[i-1].Shop > parts.Values()[i].Shop {
					descents++
				}
			}
			if descents > c.parallelism-1 {
				t.Errorf("SortPartition: %d descents in the concatenation of %d sorted partitions", descents, c.parallelism)
			}
		})
	}
}

func TestReduceGroup(t *testing.T) {
	in := sales(5, 8000)
	want := map[string]string{} // shop -> sorted distinct items, joined
	items := map[string]map[int64]bool{}
	for _, s := range in {
		if items[s.Shop] == nil {
			items[s.Shop] = map[int64]bool{}
		}
		items[s.Shop][s.Item] = true
	}
	for shop, set := range items {
		ks := slices.Sorted(maps.Keys(set))
		want[shop] = fmt.Sprint(ks)
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			g := GroupBy(FromSlice(env, in), func(s sale) string { return s.Shop })
			out := Collect(ReduceGroup(g, func(shop string, vals iter.Seq[sale], emit func(KV[string, string])) {
				set := map[int64]bool{}
				for v := range vals {
					if v.Shop != shop {
						panic("record of another group")
					}
					set[v.Item] = true
				}
				emit(KV[string, string]{shop, fmt.Sprint(slices.Sorted(maps.Keys(set)))})
			}))
			// a group function that stops early must not disturb the next group
			firsts := Count(ReduceGroup(g, func(_ string, vals iter.Seq[sale], emit func(int)) {
				for range vals {
					emit(1)
					break
				}
			}))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, kv := range out.Values() {
				got[kv.Key] = kv.Value
			}
			if !maps.Equal(got, want) {
				t.Fatalf("ReduceGroup: %d groups, want %d", len(got), len(want))
			}
			if firsts.N() != int64(len(want)) {
				t.Errorf("early-stopping group function: %d results, want %d", firsts.N(), len(want))
			}
		})
	}
}

// memSink is a formats.Sink that keeps committed parts in memory.
type memSink struct {
	mu        sync.Mutex
	committed map[int][]sale
	aborted   int
	failAt    int // a Write fails once this many records were written in total (0: never)
	written   int
}

func (s *memSink) Create(_ context.Context, i, n int) (formats.Writer[sale], error) {
	return &memWriter{s: s, i: i}, nil
}

type memWriter struct {
	s    *memSink
	i    int
	buf  []sale
	done bool
}

func (w *memWriter) Write(b []sale) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.written += len(b)
	if w.s.failAt > 0 && w.s.written >= w.s.failAt {
		return errors.New("disk full")
	}
	w.buf = append(w.buf, b...)
	return nil
}

func (w *memWriter) Commit() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.committed == nil {
		w.s.committed = map[int][]sale{}
	}
	w.s.committed[w.i] = w.buf
	w.done = true
	return nil
}

func (w *memWriter) Abort() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if !w.done {
		w.s.aborted++
	}
}

func TestOutputAndPrint(t *testing.T) {
	in := sales(6, 1000)
	env := New(Options{Parallelism: 3, BatchSize: 32})
	sink := &memSink{}
	ds := FromSlice(env, in)
	Output(ds, "mem", formats.Sink[sale](sink))
	var buf bytes.Buffer
	Print(FromSlice(env, in[:3]), &buf)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	var all []sale
	for i := 0; i < 3; i++ {
		all = append(all, sink.committed[i]...)
	}
	if !slices.Equal(all, in) || sink.aborted != 0 {
		t.Errorf("output: %d records in %d parts, %d aborted", len(all), len(sink.committed), sink.aborted)
	}
	want := fmt.Sprintf("%v\n%v\n%v\n", in[0], in[1], in[2])
	if buf.String() != want {
		t.Errorf("print:\n%s\nwant\n%s", buf.String(), want)
	}

	// A failing writer fails the job, and every writer that did not commit aborts.
	env = New(Options{Parallelism: 3, BatchSize: 32})
	bad := &memSink{failAt: 500}
	Output(FromSlice(env, in), "bad", formats.Sink[sale](bad))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if bad.aborted == 0 || len(bad.committed) == 3 {
		t.Errorf("after a failure: %d aborted, %d committed", bad.aborted, len(bad.committed))
	}
}
