package dataset

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

type wordCount struct {
	Word  string
	Count int64
}

// words returns n words drawn from a zipf distribution over vocab distinct ones.
func words(seed uint64, n, vocab int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, 1.3, 1, uint64(vocab-1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%04d", z.Uint64())
	}
	return out
}

type config struct {
	name        string
	parallelism int
	memory      int64
}

// configs are the configurations every operator test runs in; -short keeps
// two of allConfigs (TestMain).
var configs = allConfigs

var allConfigs = []config{
	{"p1", 1, 0},
	{"p2", 2, 0},
	{"p4", 4, 0},
	{"p3-tiny-memory", 3, 96 << 10}, // a few 4 KiB segments per operator: aggregators and joins spill
}

// checkGroups fails t unless got holds one record per key of want, each with
// the value want gives its key (key and val read them from a record).
func checkGroups[T any, K, V comparable](t testing.TB, got []T, want map[K]V, key func(T) K, val func(T) V) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d", len(got), len(want))
	}
	for _, x := range got {
		k := key(x)
		if w, ok := want[k]; !ok || val(x) != w {
			t.Fatalf("key %.40v: %.40v, want %.40v (a key of want: %v)", k, val(x), w, ok)
		}
	}
}

func newEnv(t *testing.T, c config) *Env {
	t.Helper()
	tmp := t.TempDir()
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("spill files left in %s: %v", tmp, ents)
		}
	})
	return New(Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: tmp, BatchSize: 64})
}

func TestWordCount(t *testing.T) {
	for _, in := range []struct {
		name  string
		words []string
	}{
		{"empty", nil},
		{"one", []string{"solo"}},
		{"zipf", words(1, 20000, 3000)},
		{"one-hot-key", slices.Repeat([]string{"hot"}, 5000)},
		{"many-keys", manyKeys(10000)}, // 10,000 distinct words: ~400 KB of groups, more than the tiny budget
	} {
		want := map[string]int64{}
		for _, w := range in.words {
			want[w]++
		}
		for _, c := range configs {
			t.Run(in.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				ds := FromSlice(env, in.words)
				pairs := Map(ds, func(w string) wordCount { return wordCount{w, 1} })
				counts := GroupBy(pairs, func(wc wordCount) string { return wc.Word }).
					Reduce(func(a, b wordCount) wordCount { return wordCount{a.Word, a.Count + b.Count} })
				got := Collect(counts)
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				gotMap := map[string]int64{}
				for _, wc := range got.Values() {
					if _, dup := gotMap[wc.Word]; dup {
						t.Fatalf("word %q emitted twice", wc.Word)
					}
					gotMap[wc.Word] = wc.Count
				}
				if !maps.Equal(gotMap, want) {
					t.Fatalf("got %d words, want %d; first differences: %v", len(gotMap), len(want), firstDiff(gotMap, want))
				}
				// a combiner is planned where it can shrink the shuffle: not for one word
				combine := in.name != "one"
				if strings.Contains(res.Plan.Text(), "local=HASH_AGGREGATE combine") != combine || !strings.Contains(res.Plan.Text(), ":HASH/") {
					t.Errorf("plan lacks the hash aggregation behind a hash shuffle, with a combiner %v:\n%s", combine, res.Plan.Text())
				}
				if c.memory > 0 && in.name == "many-keys" && spilled(res) == 0 {
					t.Errorf("a %d-byte budget spilled nothing", c.memory)
				}
			})
		}
	}
}

// manyKeys returns n distinct words, each twice.
func manyKeys(n int) []string {
	out := make([]string, 0, 2*n)
	for i := 0; i < n; i++ {
		w := fmt.Sprintf("distinct-word-%05d", i)
		out = append(out, w, w)
	}
	return out
}

func spilled(res *Result) int64 {
	var n int64
	for _, v := range res.Metrics.Vertices {
		n += v.Total().Spilled
	}
	return n
}

func firstDiff(got, want map[string]int64) []string {
	var d []string
	for k, v := range want {
		if got[k] != v {
			d = append(d, fmt.Sprintf("%s: got %d want %d", k, got[k], v))
		}
		if len(d) == 5 {
			break
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && len(d) < 8 {
			d = append(d, fmt.Sprintf("%s: unexpected", k))
		}
	}
	return d
}

func TestChainedTransforms(t *testing.T) {
	xs := make([]int, 10000)
	for i := range xs {
		xs[i] = i
	}
	var want []string
	for _, x := range xs {
		if x%3 == 0 {
			continue
		}
		for j := 0; j < x%3; j++ {
			want = append(want, fmt.Sprintf("%d.%d", x, j))
		}
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			ds := FromSlice(env, xs).Filter(func(x int) bool { return x%3 != 0 })
			out := FlatMap(ds, func(x int, emit func(string)) {
				for j := 0; j < x%3; j++ {
					emit(fmt.Sprintf("%d.%d", x, j))
				}
			})
			got := Collect(out)
			cnt := Count(out)
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// FromSlice splits in order and the chain forwards: the collected order is the input's.
			if !slices.Equal(got.Values(), want) {
				t.Fatalf("got %d values, want %d", len(got.Values()), len(want))
			}
			if cnt.N() != int64(len(want)) {
				t.Errorf("count %d, want %d", cnt.N(), len(want))
			}
			// Filter is chained into the source; FlatMap has two consumers and ends its chain.
			var names []string
			for _, v := range res.Metrics.Vertices {
				names = append(names, v.Name)
			}
			if len(names) != 3 || !strings.Contains(names[0], "FromSlice") || !strings.Contains(names[0], " -> Filter") || !strings.Contains(names[0], " -> FlatMap") {
				t.Errorf("vertices %q: want the source, filter and flatMap chained in one task, then the two sinks", names)
			}
		})
	}
}

type customer struct {
	ID     int64
	Nation string
}

type order struct {
	ID       int64
	Customer int64
	Price    float64
}

type joined struct {
	Order    int64 // 0 when there is no order
	Customer int64 // 0 when there is no customer
	Nation   string
}

func joinInputs(seed uint64) ([]customer, []order) {
	r := rand.New(rand.NewPCG(seed, 2))
	var cs []customer
	for i := int64(1); i <= 300; i++ {
		if r.IntN(5) == 0 {
			continue // customers without a record
		}
		cs = append(cs, customer{ID: i, Nation: fmt.Sprintf("N%d", r.IntN(25))})
	}
	z := rand.NewZipf(r, 1.2, 1, 399) // customer ids 1..400: some orders have no customer
	var os []order
	for i := int64(1); i <= 4000; i++ {
		os = append(os, order{ID: i, Customer: int64(z.Uint64()) + 1, Price: float64(r.IntN(100000)) / 100})
	}
	return cs, os
}

// oracleJoin is the naive nested-loop join with the semantics of kind.
func oracleJoin(cs []customer, os []order, kind string) []joined {
	var out []joined
	matchedC := map[int64]bool{}
	for _, o := range os {
		found := false
		for _, c := range cs {
			if c.ID == o.Customer {
				found = true
				matchedC[c.ID] = true
				if kind != "semi" && kind != "anti" {
					out = append(out, joined{o.ID, c.ID, c.Nation})
				}
			}
		}
		if (!found && (kind == "left" || kind == "full" || kind == "anti")) || (found && kind == "semi") {
			out = append(out, joined{Order: o.ID})
		}
	}
	if kind == "right" || kind == "full" {
		for _, c := range cs {
			if !matchedC[c.ID] {
				out = append(out, joined{Customer: c.ID, Nation: c.Nation})
			}
		}
	}
	return sortJoined(out)
}

func sortJoined(js []joined) []joined {
	slices.SortFunc(js, func(a, b joined) int {
		if a.Order != b.Order {
			return int(a.Order - b.Order)
		}
		return int(a.Customer - b.Customer)
	})
	return js
}

// joinOfKind joins orders with customers of type C on the customer id by
// the join of kind ("inner", "left", "right", "full", "semi", "anti"); semi
// and anti joins yield the order ids.
func joinOfKind[C any](kind string, ords *DataSet[order], custs *DataSet[C], ckey func(C) int64,
	combine func(*order, *C) joined, hint JoinHint) *DataSet[joined] {
	okey := func(o order) int64 { return o.Customer }
	orderOnly := func(o order) joined { return joined{Order: o.ID} }
	switch kind {
	case "inner":
		return Join(ords, custs, okey, ckey, combine).WithJoinHint(hint)
	case "left":
		return LeftOuterJoin(ords, custs, okey, ckey, combine).WithJoinHint(hint)
	case "right":
		return RightOuterJoin(ords, custs, okey, ckey, combine).WithJoinHint(hint)
	case "full":
		return FullOuterJoin(ords, custs, okey, ckey, combine).WithJoinHint(hint)
	case "semi":
		return Map(SemiJoin(ords, custs, okey, ckey).WithJoinHint(hint), orderOnly)
	default:
		return Map(AntiJoin(ords, custs, okey, ckey).WithJoinHint(hint), orderOnly)
	}
}

func TestJoins(t *testing.T) {
	cs, os := joinInputs(7)
	combine := func(o *order, c *customer) joined {
		var j joined
		if o != nil {
			j.Order = o.ID
		}
		if c != nil {
			j.Customer, j.Nation = c.ID, c.Nation
		}
		return j
	}
	hints := []JoinHint{OptimizerChooses, BroadcastHashFirst, BroadcastHashSecond, RepartitionHashFirst, RepartitionHashSecond, RepartitionSortMerge}
	for _, kind := range []string{"inner", "left", "right", "full", "semi", "anti"} {
		want := oracleJoin(cs, os, kind)
		for _, hint := range hints {
			for _, c := range configs {
				t.Run(fmt.Sprintf("%s/%s/%s", kind, hint, c.name), func(t *testing.T) {
					env := newEnv(t, c)
					ords, custs := FromSlice(env, os), FromSlice(env, cs)
					got := Collect(joinOfKind(kind, ords, custs, func(c customer) int64 { return c.ID }, combine, hint))
					res, err := env.Execute(context.Background())
					broadcastsPreserved := (hint == BroadcastHashFirst && kind != "inner" && kind != "right") ||
						(hint == BroadcastHashSecond && (kind == "right" || kind == "full"))
					if broadcastsPreserved {
						if err == nil || !strings.Contains(err.Error(), "cannot keep the unmatched records") {
							t.Fatalf("broadcasting a preserved input: err = %v", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if g := sortJoined(got.Values()); !slices.Equal(g, want) {
						t.Fatalf("got %d rows, want %d\nplan:\n%s", len(g), len(want), res.Plan.Text())
					}

				})
			}
		}
	}
}

// TestJoinsSpillUnderTinyBudget runs the joins whose build or sort side (4000
// orders, about 240 KB serialized) cannot fit a 64 KiB budget in one subtask, so
// they must spill, and checks them against the oracle.
func TestJoinsSpillUnderTinyBudget(t *testing.T) {
	cs, os := joinInputs(7)
	want := oracleJoin(cs, os, "inner")
	for _, hint := range []JoinHint{RepartitionHashFirst, RepartitionSortMerge} {
		env := newEnv(t, config{"p1-64KiB", 1, 64 << 10})
		got := Collect(Join(FromSlice(env, os), FromSlice(env, cs), func(o order) int64 { return o.Customer },
			func(c customer) int64 { return c.ID }, func(o *order, c *customer) joined { return joined{o.ID, c.ID, c.Nation} }).WithJoinHint(hint))
		res, err := env.Execute(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if g := sortJoined(got.Values()); !slices.Equal(g, want) {
			t.Fatalf("%s: got %d rows, want %d", hint, len(g), len(want))
		}
		if spilled(res) == 0 {
			t.Errorf("%s under a 64 KiB budget spilled nothing", hint)
		}
	}
}

func TestBuildErrorsNameTheCaller(t *testing.T) {
	env := New(Options{Parallelism: 2})
	type bad struct{ M map[string]int }
	ds := FromSlice(env, []bad{{}})
	GroupBy(ds, func(b bad) map[string]int { return b.M }).Reduce(func(a, b bad) bad { return a })
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Reduce at dataset_test.go:") || !strings.Contains(err.Error(), "map[string]int") {
		t.Fatalf("err = %v", err)
	}
}

func TestPanicInUserFunctionIsAnError(t *testing.T) {
	env := New(Options{Parallelism: 2, BatchSize: 8})
	ds := Map(FromSlice(env, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), func(x int) int {
		if x == 7 {
			panic("seven")
		}
		return x
	})
	GroupBy(ds, func(x int) int { return x % 2 }).Reduce(func(a, b int) int { return a + b })
	Count(ds)
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "seven") || !strings.Contains(err.Error(), "Map at dataset_test.go") {
		t.Fatalf("err = %v", err)
	}
}

func TestCancellation(t *testing.T) {
	env := New(Options{Parallelism: 2, BatchSize: 16})
	xs := make([]int, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	ds := Map(FromSlice(env, xs), func(x int) int {
		cancel()
		return x
	})
	Count(GroupBy(ds, func(x int) int { return x }).Reduce(func(a, b int) int { return a }))
	if _, err := env.Execute(ctx); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v", err)
	}
}

func TestPlanIsSimplePlannersChoice(t *testing.T) {
	env := New(Options{Parallelism: 2})
	cs, os := joinInputs(1)
	j := Join(FromSlice(env, os), FromSlice(env, cs), func(o order) int64 { return o.Customer }, func(c customer) int64 { return c.ID },
		func(o *order, c *customer) joined { return joined{Order: o.ID} })
	Count(j)
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 300 customers are estimated fewer than 4000 orders... the smaller input (1) builds.
	if !strings.Contains(res.Plan.Text(), "local="+optimizer.HybridHashBuildSecond.String()) {
		t.Errorf("plan:\n%s", res.Plan.Text())
	}
}

func TestProgressReachesTheCaller(t *testing.T) {
	var calls atomic.Int32
	env := New(Options{Parallelism: 2, ProgressEvery: time.Millisecond, Progress: func(p flow.Progress) {
		if len(p.Vertices) > 0 {
			calls.Add(1)
		}
	}})
	ds := Map(FromSlice(env, make([]int, 1000)), func(x int) int {
		time.Sleep(20 * time.Microsecond) // long enough for several ticks
		return x
	})
	Count(ds)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() == 0 {
		t.Error("Progress was never called")
	}
}
