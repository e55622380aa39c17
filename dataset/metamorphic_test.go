package dataset

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

// The metamorphic test runs one program under every forced strategy (join
// hints, cross hints, the Reduce's sorted grouping) and under the planners'
// own choices, with and without the key annotations that let the cost-based
// planner reuse partitionings, and checks that all give the naive oracle's
// answer.

type mmCustomer struct {
	CustKey int64
	Segment string
}

type mmOrder struct {
	OrderKey, CustKey int64
	Priority          string
}

type mmLine struct {
	OrderKey int64
	Qty      int64
	Price    float64
}

type mmJoined struct {
	OrderKey int64
	Priority string
	Revenue  float64
	Qty      int64
}

type mmGroupKey struct {
	OrderKey int64
	Priority string
}

func mmData(seed uint64) ([]mmCustomer, []mmOrder, []mmLine) {
	r := rand.New(rand.NewPCG(seed, 17))
	var cs []mmCustomer
	for c := range int64(300) { // customers 250 and up have no orders
		cs = append(cs, mmCustomer{c, []string{"AUTO", "BUILDING", "MACHINERY"}[r.IntN(3)]})
	}
	var os []mmOrder
	for o := range int64(3000) {
		cust := int64(r.IntN(250)) // some orders have no customer
		if r.IntN(10) == 0 {
			cust = 7 // a skewed customer
		}
		os = append(os, mmOrder{o, cust, fmt.Sprintf("%d-PRIO", r.IntN(5))})
	}
	var ls []mmLine
	for range 12000 {
		o := int64(r.IntN(3300)) // some lines have no order
		ls = append(ls, mmLine{o, int64(1 + r.IntN(50)), float64(r.IntN(100000)) / 100})
	}
	return cs, os, ls
}

// mmOracle is the program's answer computed naively: revenue and quantity per
// (order, priority) of BUILDING customers' orders, and the customers with no
// order at all.
func mmOracle(cs []mmCustomer, os []mmOrder, ls []mmLine) ([]mmJoined, []int64) {
	building := map[int64]bool{}
	for _, c := range cs {
		if c.Segment == "BUILDING" {
			building[c.CustKey] = true
		}
	}
	orders := map[int64]mmOrder{}
	hasOrder := map[int64]bool{}
	for _, o := range os {
		hasOrder[o.CustKey] = true
		if building[o.CustKey] {
			orders[o.OrderKey] = o
		}
	}
	sums := map[mmGroupKey]*mmJoined{}
	for _, l := range ls {
		o, ok := orders[l.OrderKey]
		if !ok {
			continue
		}
		k := mmGroupKey{o.OrderKey, o.Priority}
		if sums[k] == nil {
			sums[k] = &mmJoined{OrderKey: o.OrderKey, Priority: o.Priority}
		}
		sums[k].Revenue += l.Price * float64(l.Qty)
		sums[k].Qty += l.Qty
	}
	var out []mmJoined
	for _, v := range sums {
		out = append(out, *v)
	}
	slices.SortFunc(out, mmCompare)
	var lonely []int64
	for _, c := range cs {
		if !hasOrder[c.CustKey] {
			lonely = append(lonely, c.CustKey)
		}
	}
	return out, lonely
}

func mmCompare(a, b mmJoined) int {
	return cmp.Or(cmp.Compare(a.OrderKey, b.OrderKey), cmp.Compare(a.Priority, b.Priority))
}

// mmProgram builds the program with the given hints; annotate declares the
// logical key fields and what the functions forward.
func mmProgram(env *Env, cs []mmCustomer, os []mmOrder, ls []mmLine, h1, h2, h3 JoinHint, annotate bool) (*Collected[mmJoined], *Collected[int64]) {
	cust := FromSlice(env, cs).Filter(func(c mmCustomer) bool { return c.Segment == "BUILDING" })
	orders := FromSlice(env, os)
	lines := FromSlice(env, ls)
	co := Join(cust, orders, func(c mmCustomer) int64 { return c.CustKey }, func(o mmOrder) int64 { return o.CustKey },
		func(_ *mmCustomer, o *mmOrder) mmOrder { return *o }).WithJoinHint(h1)
	col := Join(co, lines, func(o mmOrder) int64 { return o.OrderKey }, func(l mmLine) int64 { return l.OrderKey },
		func(o *mmOrder, l *mmLine) mmJoined {
			return mmJoined{OrderKey: o.OrderKey, Priority: o.Priority, Revenue: l.Price * float64(l.Qty), Qty: l.Qty}
		}).WithJoinHint(h2)
	g := GroupBy(col, func(j mmJoined) mmGroupKey { return mmGroupKey{j.OrderKey, j.Priority} })
	if annotate {
		co.On("custkey").Forwards("orderkey")
		col.On("orderkey").Forwards("orderkey")
		g = g.On("orderkey", "priority")
	}
	sums := g.Reduce(func(a, b mmJoined) mmJoined {
		a.Revenue += b.Revenue
		a.Qty += b.Qty
		return a
	})
	lonely := AntiJoin(FromSlice(env, cs), orders, func(c mmCustomer) int64 { return c.CustKey }, func(o mmOrder) int64 { return o.CustKey }).WithJoinHint(h3)
	keys := Map(lonely, func(c mmCustomer) int64 { return c.CustKey })
	return Collect(sums), Collect(keys)
}

func TestMetamorphicStrategies(t *testing.T) {
	cs, os, ls := mmData(1)
	want, wantLonely := mmOracle(cs, os, ls)
	if len(want) == 0 || len(wantLonely) == 0 {
		t.Fatal("the data gives an empty answer: the test would prove nothing")
	}
	all := []JoinHint{optimizer.OptimizerChooses, optimizer.BroadcastHashFirst, optimizer.BroadcastHashSecond,
		optimizer.RepartitionHashFirst, optimizer.RepartitionHashSecond, optimizer.RepartitionSortMerge}
	antiHints := []JoinHint{optimizer.OptimizerChooses, optimizer.BroadcastHashSecond, optimizer.RepartitionHashFirst,
		optimizer.RepartitionHashSecond, optimizer.RepartitionSortMerge}
	type variant struct {
		name       string
		planner    optimizer.Planner
		h1, h2, h3 JoinHint
		annotate   bool
	}
	var variants []variant
	for _, planner := range []optimizer.Planner{optimizer.Simple{}, optimizer.CostBased{}} {
		for _, annotate := range []bool{false, true} {
			variants = append(variants, variant{fmt.Sprintf("%T/annotated=%v/chooses", planner, annotate), planner, 0, 0, 0, annotate})
		}
	}
	for i, h := range all[1:] {
		variants = append(variants, variant{fmt.Sprintf("hints/%s", h), optimizer.CostBased{}, h, all[(i+2)%len(all)], antiHints[i%len(antiHints)], i%2 == 0})
	}
	// the Reduce as a sorted grouping (local sort), which the planner picks
	// by itself only over input already sorted on its key
	for _, annotate := range []bool{false, true} {
		variants = append(variants, variant{fmt.Sprintf("sort-group/annotated=%v", annotate), sortGroupPlanner{optimizer.LocalSort},
			0, optimizer.RepartitionSortMerge, 0, annotate})
	}
	for _, c := range []config{{"p1", 1, 0}, {"p3", 3, 0}, {"p2-tiny-memory", 2, 96 << 10}} {
		for _, v := range variants {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				env := newEnv(t, c)
				env.opts.Planner = v.planner
				sums, lonely := mmProgram(env, cs, os, ls, v.h1, v.h2, v.h3, v.annotate)
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				got := slices.Clone(sums.Values())
				slices.SortFunc(got, mmCompare)
				if len(got) != len(want) {
					t.Fatalf("%d groups, want %d", len(got), len(want))
				}
				for i := range want {
					g, w := got[i], want[i]
					if mmCompare(g, w) != 0 || g.Qty != w.Qty || !closeTo(g.Revenue, w.Revenue) {
						t.Fatalf("group %d is %+v, want %+v", i, g, w)
					}
				}
				gl := slices.Sorted(slices.Values(lonely.Values()))
				if !slices.Equal(gl, wantLonely) {
					t.Fatalf("anti join: %v, want %v", gl, wantLonely)
				}
			})
		}
	}
}

func closeTo(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-6*max(1, a, -a, b, -b)
}

// TestSortMergeReusesOrder joins an input that is already hash-partitioned
// and sorted on the join key: the planner forwards it and merges it without
// sorting it again, and the answer equals the oracle's.
func TestSortMergeReusesOrder(t *testing.T) {
	_, os, ls := mmData(2)
	want := map[int64]int64{} // order key -> total quantity of its lines
	orders := map[int64]bool{}
	for _, o := range os {
		orders[o.OrderKey] = true
	}
	for _, l := range ls {
		if orders[l.OrderKey] {
			want[l.OrderKey] += l.Qty
		}
	}
	for _, c := range []config{{"p1", 1, 0}, {"p3", 3, 0}, {"p2-tiny-memory", 2, 96 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			byKey := func(o mmOrder) int64 { return o.OrderKey }
			parted := PartitionByHash(FromSlice(env, os), byKey).On("orderkey")
			sorted := SortPartition(parted, byKey, Ascending).On("orderkey")
			j := Join(sorted, FromSlice(env, ls), byKey, func(l mmLine) int64 { return l.OrderKey },
				func(o *mmOrder, l *mmLine) mmLine { return *l }).WithJoinHint(optimizer.RepartitionSortMerge).On("orderkey")
			got := Collect(j)
			plan, err := env.Plan()
			if err != nil {
				t.Fatal(err)
			}
			jn := plan.Nodes[len(plan.Nodes)-2]
			if jn.Kind != optimizer.Join || jn.Decision.Ship[0] != optimizer.Forward || jn.Decision.InputLocal[0] != optimizer.LocalNone ||
				jn.Decision.InputLocal[1] != optimizer.LocalSort {
				t.Fatalf("join decision %+v, want input 0 forwarded and not sorted again\n%s", jn.Decision, plan.Text())
			}
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			sums := map[int64]int64{}
			for _, l := range got.Values() {
				sums[l.OrderKey] += l.Qty
			}
			if len(sums) != len(want) {
				t.Fatalf("%d orders joined, want %d", len(sums), len(want))
			}
			for k, v := range want {
				if sums[k] != v {
					t.Fatalf("order %d: quantity %d, want %d", k, sums[k], v)
				}
			}
		})
	}
}
