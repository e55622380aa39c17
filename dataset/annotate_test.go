package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/optimizer"
)

type annOrder struct {
	OrderKey, CustKey int64
}

type annLine struct {
	OrderKey int64
	Price    float64
	Mode     string
}

type annSale struct {
	OrderKey, CustKey int64
	Price             float64
}

type annPair struct{ A, B int64 }

// nodeNamed returns the one node of p whose name starts with prefix.
func nodeNamed(t *testing.T, p *optimizer.Plan, prefix string) *optimizer.Node {
	t.Helper()
	var found *optimizer.Node
	for _, n := range p.Nodes {
		if strings.HasPrefix(n.Name, prefix) {
			if found != nil {
				t.Fatalf("two nodes named %q: %q and %q", prefix, found.Name, n.Name)
			}
			found = n
		}
	}
	if found == nil {
		t.Fatalf("no node named %q in\n%s", prefix, p.Explain())
	}
	return found
}

func TestAnnotationsSetModelFields(t *testing.T) {
	env := New(Options{Parallelism: 2, Memory: 8 << 20})
	ordersAt := "FromSlice at " + here(1)
	orders := FromSlice(env, []annOrder{{1, 10}, {2, 20}})
	lines := FromSlice(env, []annLine{{1, 2.5, "AIR"}, {2, 1, "SHIP"}, {2, 3, "AIR"}}).
		Filter(func(l annLine) bool { return l.Price > 0 }).WithSelectivity(0.5)
	sales := Join(lines, orders, func(l annLine) int64 { return l.OrderKey }, func(o annOrder) int64 { return o.OrderKey },
		func(l *annLine, o *annOrder) annSale { return annSale{o.OrderKey, o.CustKey, l.Price} }).
		On("orderkey").Forwards("orderkey", "custkey->customer").WithEstimate(3)
	perOrder := GroupBy(sales, func(s annSale) int64 { return s.OrderKey }).On("orderkey").
		Reduce(func(a, b annSale) annSale { a.Price += b.Price; return a })
	perCust := Aggregate(GroupBy(perOrder, func(s annSale) annPair { return annPair{s.CustKey, s.OrderKey} }).On("custkey", "orderkey"),
		agg.Sum(func(s annSale) float64 { return s.Price }))
	modes := Distinct(lines, func(l annLine) string { return l.Mode }).On("mode")
	hashed := PartitionByHash(orders, func(o annOrder) int64 { return o.CustKey }).On("custkey")
	ranged := PartitionByRange(orders, func(o annOrder) int64 { return o.OrderKey })
	sorted := Sort(perOrder, func(s annSale) annPair { return annPair{s.CustKey, s.OrderKey} }, Descending).On("custkey", "orderkey")
	sortedBy := SortPartitionBy(perOrder, By(func(s annSale) float64 { return s.Price }, Descending),
		By(func(s annSale) int64 { return s.OrderKey }, Ascending)).On("price", "orderkey")
	firsts := sorted.First(1)
	Collect(perCust)
	Collect(modes)
	Collect(hashed)
	Collect(ranged)
	Collect(firsts)
	Count(sortedBy)

	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Memory != 8<<20 {
		t.Errorf("Plan.Memory = %d, want %d", p.Memory, 8<<20)
	}
	names := func(x ...string) []string { return x }
	for _, c := range []struct {
		prefix       string
		keys         [][]string
		keyTypes     []string
		forwards     [][]string
		desc         []bool
		preservesAll bool
		rows         int64
		selectivity  float64
	}{
		{prefix: ordersAt, keyTypes: []string{}, rows: 2},
		{prefix: "Filter", keyTypes: []string{""}, preservesAll: true, rows: -1, selectivity: 0.5},
		{prefix: "Join", keys: [][]string{names("orderkey"), names("orderkey")}, keyTypes: []string{"int64", "int64"},
			forwards: [][]string{names("orderkey", "custkey->customer"), names("orderkey", "custkey->customer")}, rows: 3},
		{prefix: "Reduce", keys: [][]string{names("orderkey")}, keyTypes: []string{"int64"},
			forwards: [][]string{names("orderkey")}, rows: -1},
		{prefix: "Aggregate (init)", keyTypes: []string{""}, forwards: [][]string{names("custkey", "orderkey")}, rows: -1},
		{prefix: "Aggregate at", keys: [][]string{names("custkey", "orderkey")}, keyTypes: []string{"dataset.annPair"},
			forwards: [][]string{names("custkey", "orderkey")}, rows: -1},
		{prefix: "Distinct", keys: [][]string{names("mode")}, keyTypes: []string{"string"},
			forwards: [][]string{names("mode")}, preservesAll: true, rows: -1},
		{prefix: "PartitionByHash", keys: [][]string{names("custkey")}, keyTypes: []string{"int64"}, preservesAll: true, rows: -1},
		{prefix: "PartitionByRange", keyTypes: []string{"int64"}, preservesAll: true, rows: -1},
		{prefix: "Sort at", keys: [][]string{names("custkey", "orderkey")}, keyTypes: []string{"dataset.annPair"},
			desc: []bool{true, true}, preservesAll: true, rows: -1},
		{prefix: "SortPartitionBy", keys: [][]string{names("price", "orderkey")}, keyTypes: []string{"(float64, int64)"},
			desc: []bool{true, false}, preservesAll: true, rows: -1},
		{prefix: "First at annotate_test.go", keyTypes: []string{""}, preservesAll: true, rows: -1},
	} {
		var n *optimizer.Node
		if c.prefix == "First at annotate_test.go" {
			for _, m := range p.Nodes {
				if strings.HasPrefix(m.Name, "First") {
					n = m
					if !m.PreservesAll {
						t.Errorf("%s: PreservesAll false", m.Name)
					}
				}
			}
		} else {
			n = nodeNamed(t, p, c.prefix)
		}
		if !slices.EqualFunc(n.Keys, c.keys, slices.Equal) {
			t.Errorf("%s: Keys %q, want %q", n.Name, n.Keys, c.keys)
		}
		if !slices.Equal(n.KeyTypes, c.keyTypes) {
			t.Errorf("%s: KeyTypes %q, want %q", n.Name, n.KeyTypes, c.keyTypes)
		}
		if !slices.EqualFunc(n.Forwards, c.forwards, slices.Equal) {
			t.Errorf("%s: Forwards %q, want %q", n.Name, n.Forwards, c.forwards)
		}
		if !slices.Equal(n.Descending, c.desc) {
			t.Errorf("%s: Descending %v, want %v", n.Name, n.Descending, c.desc)
		}
		if n.PreservesAll != c.preservesAll {
			t.Errorf("%s: PreservesAll %v, want %v", n.Name, n.PreservesAll, c.preservesAll)
		}
		if n.EstimatedRows != c.rows {
			t.Errorf("%s: EstimatedRows %d, want %d", n.Name, n.EstimatedRows, c.rows)
		}
		if n.Selectivity != c.selectivity {
			t.Errorf("%s: Selectivity %v, want %v", n.Name, n.Selectivity, c.selectivity)
		}
	}
	// record sizes: static size plus 16 bytes per string
	for prefix, want := range map[string]int64{"Join": 24, "Filter": 8 + 8 + 16 + 16, "Distinct": 8 + 8 + 16 + 16, "Aggregate at": 24, "Count": 24} {
		for _, n := range p.Nodes {
			if strings.HasPrefix(n.Name, prefix) && n.RowBytes != want {
				t.Errorf("%s: RowBytes %d, want %d", n.Name, n.RowBytes, want)
			}
		}
	}

	// the plan is a copy: changing it changes nothing in the next one
	nodeNamed(t, p, "Join").Keys[0][0] = "changed"
	p2, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeNamed(t, p2, "Join").Keys[0][0]; got != "orderkey" {
		t.Errorf("after changing the first plan, the second has key %q", got)
	}
	for i, n := range p2.Nodes {
		for j, in := range n.Inputs {
			if !slices.Contains(p2.Nodes[:i], in) {
				t.Errorf("%s: input %d is not an earlier node of the same plan", n.Name, j)
			}
		}
	}
}

func TestRowBytes(t *testing.T) {
	type withString struct {
		N int64
		S string
	}
	type nested struct {
		W  withString
		A  [2]string
		B  []byte
		M  map[string]int
		P  *int
		I  any
		Ok bool
	}
	for _, c := range []struct {
		name string
		got  int64
		want int64
	}{
		{"int64", rowBytes[int64](), 8},
		{"string", rowBytes[string](), 16 + 16},
		{"[]byte", rowBytes[[]byte](), 24 + 16},
		{"withString", rowBytes[withString](), 24 + 16},
		// 24 + 32 + 24 + 8 + 8 + 16 + 8 (bool, padded) static; 16 per string, slice, map, pointer, interface
		{"nested", rowBytes[nested](), 120 + 16*(1+2+1+1+1+1)},
		{"KV[string,int64]", rowBytes[KV[string, int64]](), 24 + 16},
	} {
		if c.got != c.want {
			t.Errorf("rowBytes[%s] = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// nationRow is the nation table of the TPC-H test data.
type nationRow struct {
	NationKey int64  `weir:"n_nationkey"`
	Name      string `weir:"n_name"`
	RegionKey int64  `weir:"n_regionkey"`
}

type regionRow struct {
	RegionKey int64  `weir:"r_regionkey"`
	Name      string `weir:"r_name"`
}

// TestParquetSourceEstimates checks that a Parquet source's estimates are the
// file's: TPC-H has 25 nations and 5 regions at every scale factor, and
// reading the files counts as many.
func TestParquetSourceEstimates(t *testing.T) {
	const dir = "../testdata/tpch/"
	nsrc, err := parquet.Open[nationRow](dir + "nation.parquet")
	if err != nil {
		t.Fatal(err)
	}
	rsrc, err := parquet.Open[regionRow](dir + "region.parquet")
	if err != nil {
		t.Fatal(err)
	}
	env := New(Options{Parallelism: 2})
	nations := Count(FromSource(env, "nation", nsrc))
	regions := Count(FromSource(env, "region", rsrc))
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want int64
		read int64
	}{{"Read nation", 25, nations.N()}, {"Read region", 5, regions.N()}} {
		n := nodeNamed(t, p, c.name)
		if n.EstimatedRows != c.want || c.read != c.want {
			t.Errorf("%s: estimated %d rows, read %d, want %d", c.name, n.EstimatedRows, c.read, c.want)
		}
		file := dir + strings.TrimPrefix(c.name, "Read ") + ".parquet"
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if n.EstimatedBytes <= 0 || n.EstimatedBytes > fi.Size() {
			t.Errorf("%s: estimated %d bytes; the file has %d", c.name, n.EstimatedBytes, fi.Size())
		}
		if a := nodeNamed(t, res.Plan, c.name).Actual; a == nil || a.Rows != c.want {
			t.Errorf("%s: actual %+v, want %d rows", c.name, a, c.want)
		}
	}
}

// TestActualRows runs source → filter → map → reduce → collect and checks
// each operator's actual rows against counts made in plain Go.
func TestActualRows(t *testing.T) {
	xs := words(7, 20000, 8000)
	var kept int64
	groups := map[string]bool{}
	for _, w := range xs {
		if w[len(w)-1] != '7' {
			kept++
			groups[w] = true
		}
	}
	want := map[string]int64{"FromSlice": int64(len(xs)), "Filter": kept, "Map": kept,
		"Reduce": int64(len(groups)), "Collect": int64(len(groups))}
	for _, c := range []config{{"p1", 1, 0}, {"p3", 3, 0}, {"p3-tiny-memory", 3, 64 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			kv := Map(FromSlice(env, xs).Filter(func(w string) bool { return w[len(w)-1] != '7' }),
				func(w string) wordCount { return wordCount{w, 1} })
			out := Collect(GroupBy(kv, func(x wordCount) string { return x.Word }).On("word").
				Reduce(func(a, b wordCount) wordCount { a.Count += b.Count; return a }))
			for run := range 2 { // a second Execute counts afresh
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Values()) != len(groups) {
					t.Fatalf("%d groups, want %d", len(out.Values()), len(groups))
				}
				before := clonePlan(res.Plan)
				for _, n := range before.Nodes {
					n.Actual = nil
				}
				planned, err := env.Plan()
				if err != nil {
					t.Fatal(err)
				}
				if before.Text() != planned.Text() {
					t.Errorf("Result.Plan without actuals\n%s\nis not the plan Env.Plan returns\n%s", before.Text(), planned.Text())
				}
				if !strings.Contains(res.Plan.Text(), "| actual rows=") {
					t.Errorf("Result.Plan.Text() shows no actuals:\n%s", res.Plan.Text())
				}
				for prefix, rows := range want {
					n := nodeNamed(t, res.Plan, prefix)
					if n.Actual == nil {
						t.Fatalf("run %d: %s has no Actual", run, n.Name)
					}
					if n.Actual.Rows != rows {
						t.Errorf("run %d: %s emitted %d rows, want %d", run, n.Name, n.Actual.Rows, rows)
					}
				}
				// the chained source, filter and map share their task's metrics
				src, m := nodeNamed(t, res.Plan, "FromSlice").Actual, nodeNamed(t, res.Plan, "Map").Actual
				if src.Time != m.Time || src.Spilled != m.Spilled || src.PeakMemory != m.PeakMemory {
					t.Errorf("run %d: source %+v and chained map %+v differ", run, src, m)
				}
				var spilled int64
				for _, v := range res.Metrics.Vertices {
					spilled += v.Total().Spilled
				}
				var seen int64
				for _, n := range res.Plan.Nodes {
					if n.Kind == optimizer.Reduce || n.Kind == optimizer.Sink {
						seen += n.Actual.Spilled // each in a vertex of its own
					}
				}
				if seen+src.Spilled != spilled {
					t.Errorf("run %d: nodes' spilled bytes %d, vertices' %d", run, seen+src.Spilled, spilled)
				}
				if c.memory > 0 && spilled == 0 {
					t.Errorf("run %d: nothing spilled within %d bytes", run, c.memory)
				}
			}
		})
	}
}

type nopCollector[T any] struct {
	flow.Plain
	n int
}

func (c *nopCollector[T]) Collect(b []T) error { c.n += len(b); return nil }
func (c *nopCollector[T]) End() error          { return nil }

type borrowingCollector[T any] struct{ nopCollector[T] }

func (*borrowingCollector[T]) Borrows() bool { return true }

func TestCountingCollector(t *testing.T) {
	var rows atomic.Int64
	next := &nopCollector[string]{}
	var c collector[string] = &flow.Counting[string]{Collector: next, Rows: &rows}
	batch := []string{"a", "b", "c"}
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.Collect(batch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per batch, want 0", allocs)
	}
	if rows.Load() != int64(next.n) || next.n != 3*101 {
		t.Errorf("counted %d rows, passed on %d, want %d", rows.Load(), next.n, 3*101)
	}
	if c.Borrows() {
		t.Errorf("counting a collector that does not borrow: Borrows() is true")
	}
	var d collector[string] = &flow.Counting[string]{Collector: &borrowingCollector[string]{}, Rows: &rows}
	if !d.Borrows() {
		t.Errorf("counting a borrower hides it")
	}
}

// here returns "annotate_test.go:N" for the line delta lines below the call.
func here(delta int) string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line+delta)
}

func TestAnnotationErrorsNameTheCaller(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(env *Env) string // returns the caller's position
		want  string
	}{
		{"On a source", func(env *Env) string {
			ds := FromSlice(env, []int{1})
			w := here(1)
			ds.On("x")
			return w
		}, "has no key to name"},
		{"On a map", func(env *Env) string {
			ds := Map(FromSlice(env, []int{1}), func(i int) int { return i })
			w := here(1)
			ds.On("x")
			return w
		}, "has no key to name"},
		{"On a rebalance", func(env *Env) string {
			ds := FromSlice(env, []int{1}).Rebalance()
			w := here(1)
			ds.On("x")
			return w
		}, "has no key to name"},
		{"On without fields", func(env *Env) string {
			ds := Distinct(FromSlice(env, []int{1}), Self[int]())
			w := here(1)
			ds.On()
			return w
		}, "no fields named"},
		{"On SortBy with a name too many", func(env *Env) string {
			ds := SortBy(FromSlice(env, []int{1}), By(Self[int](), Ascending), By(Self[int](), Descending))
			w := here(1)
			ds.On("a", "b", "c")
			return w
		}, "2 key parts"},
		{"Grouping.On with an empty name", func(env *Env) string {
			g := GroupBy(FromSlice(env, []int{1}), Self[int]())
			w := here(1)
			g.On("a", " ")
			return w
		}, `bad field name " "`},
		{"Forwards on a source", func(env *Env) string {
			ds := FromSlice(env, []int{1})
			w := here(1)
			ds.Forwards("x")
			return w
		}, "has no input"},
		{"Forwards with a bad rename", func(env *Env) string {
			ds := Map(FromSlice(env, []int{1}), func(i int) int { return i })
			w := here(1)
			ds.Forwards("a->")
			return w
		}, `bad field name "a->"`},
		{"WithSelectivity on a source", func(env *Env) string {
			ds := FromSlice(env, []int{1})
			w := here(1)
			ds.WithSelectivity(0.5)
			return w
		}, "has no input"},
		{"negative selectivity", func(env *Env) string {
			ds := FromSlice(env, []int{1}).Filter(func(int) bool { return true })
			w := here(1)
			ds.WithSelectivity(-1)
			return w
		}, "selectivity -1"},
		{"negative estimate", func(env *Env) string {
			ds := FromSlice(env, []int{1})
			w := here(1)
			ds.WithEstimate(-2)
			return w
		}, "-2 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := New(Options{Parallelism: 1})
			where := c.build(env)
			if _, err := env.Plan(); err == nil || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Plan: %v; want an error naming %s and saying %q", err, where, c.want)
			}
			if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), where) {
				t.Errorf("Execute: %v; want an error naming %s", err, where)
			}
		})
	}
}

// TestPlannedHook checks Options.Planned: Execute hands it the plan Env.Plan
// returns (an iteration's fix-ups included) before running anything, stops
// with its error, and runs as usual when it returns nil.
func TestPlannedHook(t *testing.T) {
	stop := errors.New("planned only")
	var got *optimizer.Plan
	var ran atomic.Int64
	build := func(hook func(*optimizer.Plan) error) (*Env, *Collected[planRank]) {
		env := New(Options{Parallelism: 2, Planned: hook})
		initial := Map(FromSlice(env, []int64{1, 2, 3}), func(id int64) planRank {
			ran.Add(1)
			return planRank{ID: id, Rank: 1}
		})
		out := Iterate(initial, 3, func(_ *Iteration, r *DataSet[planRank]) *DataSet[planRank] {
			return Map(r, func(p planRank) planRank { p.Rank *= 2; return p })
		})
		return env, Collect(out)
	}
	env, out := build(func(p *optimizer.Plan) error { got = p; return stop })
	if _, err := env.Execute(context.Background()); !errors.Is(err, stop) {
		t.Fatalf("Execute returned %v, want the hook's error", err)
	}
	if ran.Load() != 0 || len(out.Values()) != 0 {
		t.Fatalf("the job ran: %d records mapped, %d collected", ran.Load(), len(out.Values()))
	}
	want, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Text() != want.Text() {
		t.Fatalf("the hook got the plan\n%v\nwant Env.Plan's\n%s", got, want.Text())
	}

	env, out = build(func(*optimizer.Plan) error { return nil })
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	vals := out.Values()
	slices.SortFunc(vals, func(a, b planRank) int { return int(a.ID - b.ID) })
	if len(vals) != 3 || vals[0] != (planRank{1, 8}) || vals[2] != (planRank{3, 8}) {
		t.Fatalf("ranks %v, want ids 1-3 with rank 8", vals)
	}
}
