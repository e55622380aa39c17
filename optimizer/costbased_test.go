package optimizer

import (
	"strings"
	"testing"
)

// builder makes plans by hand, the way dataset builds them.
type builder struct {
	p   *Plan
	par int
}

func newBuilder(par int) *builder { return &builder{p: &Plan{}, par: par} }

func (b *builder) add(kind OpKind, name string, inputs ...*Node) *Node {
	n := &Node{ID: len(b.p.Nodes), Name: name, Kind: kind, Inputs: inputs, Parallelism: b.par, EstimatedRows: -1, EstimatedBytes: -1,
		Keyed: make([]bool, len(inputs)), Ordered: make([]bool, len(inputs))}
	b.p.Nodes = append(b.p.Nodes, n)
	return n
}

func (b *builder) source(name string, rows int64) *Node {
	n := b.add(Source, name)
	n.EstimatedRows = rows
	return n
}

// join adds an inner join keyed on fields (both inputs) that forwards them.
func (b *builder) join(name string, l, r *Node, keyType string, fields ...string) *Node {
	n := b.add(Join, name, l, r)
	n.Keyed = []bool{true, true}
	n.Keys = [][]string{fields, fields}
	n.KeyTypes = []string{keyType, keyType}
	n.Forwards = [][]string{fields, fields}
	return n
}

func (b *builder) group(name string, in *Node, fields ...string) *Node {
	n := b.add(Reduce, name, in)
	n.Keyed = []bool{true}
	n.Combinable = true
	n.Keys = [][]string{fields}
	n.KeyTypes = []string{"struct"}
	n.Forwards = [][]string{fields}
	return n
}

func (b *builder) sink(in *Node) *Node { return b.add(Sink, "sink", in) }

func (b *builder) plan(t *testing.T) *Plan {
	t.Helper()
	if err := Optimize(b.p, CostBased{}); err != nil {
		t.Fatal(err)
	}
	return b.p
}

func TestCostBasedQ3ShapeReusesJoinPartitioning(t *testing.T) {
	b := newBuilder(4)
	cust := b.source("customer", 1500)
	seg := b.add(Map, "filter segment", cust)
	seg.PreservesAll = true
	seg.Selectivity = 0.9 // keeps most customers: their orders are too many to broadcast
	orders := b.source("orders", 30000)
	co := b.join("customer-orders", seg, orders, "int64", "custkey")
	co.Forwards = [][]string{nil, {"orderkey"}} // the join function keeps the order's key
	li := b.source("lineitem", 60000)
	col := b.join("orders-lineitem", co, li, "int64", "orderkey")
	g := b.group("revenue", col, "orderkey", "orderdate", "shippriority")
	b.sink(g)
	b.plan(t)
	if got := g.Decision.Ship[0]; got != Forward {
		t.Errorf("grouping after the join on orderkey ships its input %s, want FORWARD\n%s", got, b.p.Explain())
	}
	if g.Decision.Combine {
		t.Errorf("a forwarded grouping runs a combiner")
	}
	if got := co.Decision.Ship[0]; got != Broadcast {
		t.Errorf("the filtered customer table (1350 rows) against 30000 orders ships %s, want BROADCAST\n%s", got, b.p.Explain())
	}
	if !strings.Contains(strings.Join(g.Decision.Notes, ";"), "reuses HASH(orderkey)") {
		t.Errorf("no note explains the reuse: %q", g.Decision.Notes)
	}
}

func TestCostBasedTwoJoinsOnOneKeyShuffleOnce(t *testing.T) {
	b := newBuilder(4)
	a, bb, c := b.source("a", 100000), b.source("b", 100000), b.source("c", 100000)
	j1 := b.join("a-b", a, bb, "int64", "k")
	j2 := b.join("ab-c", j1, c, "int64", "k")
	b.sink(j2)
	b.plan(t)
	if j1.Decision.Ship[0] != Hash || j1.Decision.Ship[1] != Hash {
		t.Errorf("first join ships %v, want both HASH", j1.Decision.Ship)
	}
	if j2.Decision.Ship[0] != Forward || j2.Decision.Ship[1] != Hash {
		t.Errorf("second join ships %v, want [FORWARD HASH]\n%s", j2.Decision.Ship, b.p.Explain())
	}
	// a different key type cannot reuse the partitioning: the hashes differ
	b2 := newBuilder(4)
	x, y, z := b2.source("x", 100000), b2.source("y", 100000), b2.source("z", 100000)
	k1 := b2.join("x-y", x, y, "int64", "k")
	k2 := b2.join("xy-z", k1, z, "string", "k")
	b2.sink(k2)
	b2.plan(t)
	if k2.Decision.Ship[0] == Forward {
		t.Errorf("a join on a key of another type reused the partitioning")
	}
}

func TestCostBasedRangeReuse(t *testing.T) {
	b := newBuilder(3)
	src := b.source("s", 10000)
	part := b.add(Partition, "range", src)
	part.Forced = map[int]Ship{0: Range}
	part.Keys = [][]string{{"k"}}
	part.PreservesAll = true
	srt := b.add(Sort, "sort", part)
	srt.Ordered = []bool{true}
	srt.Keys = [][]string{{"k"}}
	srt.PreservesAll = true
	b.sink(srt)
	b.plan(t)
	if part.Decision.Ship[0] != Range || srt.Decision.Ship[0] != Forward {
		t.Errorf("ships %v then %v, want RANGE then FORWARD\n%s", part.Decision.Ship, srt.Decision.Ship, b.p.Explain())
	}
	// descending order is another range partitioning
	b2 := newBuilder(3)
	src2 := b2.source("s", 10000)
	part2 := b2.add(Partition, "range", src2)
	part2.Forced = map[int]Ship{0: Range}
	part2.Keys = [][]string{{"k"}}
	part2.PreservesAll = true
	srt2 := b2.add(Sort, "sort desc", part2)
	srt2.Ordered = []bool{true}
	srt2.Keys = [][]string{{"k"}}
	srt2.Descending = []bool{true}
	b2.sink(srt2)
	b2.plan(t)
	if srt2.Decision.Ship[0] != Range {
		t.Errorf("a descending sort reused an ascending range partitioning")
	}
}

func TestCostBasedHintsAreHonoured(t *testing.T) {
	for _, h := range []JoinHint{BroadcastHashFirst, BroadcastHashSecond, RepartitionHashFirst, RepartitionHashSecond, RepartitionSortMerge} {
		b := newBuilder(2)
		l, r := b.source("l", 10), b.source("r", 1_000_000)
		j := b.join("j", l, r, "int64", "k")
		j.JoinHint = h
		b.sink(j)
		b.plan(t)
		want := map[JoinHint][3]string{
			BroadcastHashFirst:    {"BROADCAST", "FORWARD", "HYBRIDHASH_BUILD_FIRST"},
			BroadcastHashSecond:   {"FORWARD", "BROADCAST", "HYBRIDHASH_BUILD_SECOND"},
			RepartitionHashFirst:  {"HASH", "HASH", "HYBRIDHASH_BUILD_FIRST"},
			RepartitionHashSecond: {"HASH", "HASH", "HYBRIDHASH_BUILD_SECOND"},
			RepartitionSortMerge:  {"HASH", "HASH", "SORT_MERGE"},
		}[h]
		got := [3]string{j.Decision.Ship[0].String(), j.Decision.Ship[1].String(), j.Decision.Local.String()}
		if got != want {
			t.Errorf("hint %s: got %v, want %v", h, got, want)
		}
	}
	b := newBuilder(2)
	l, r := b.source("l", 10), b.source("r", 1000)
	j := b.join("j", l, r, "int64", "k")
	j.Outer = [2]bool{true, false}
	j.JoinHint = BroadcastHashFirst
	b.sink(j)
	if err := (CostBased{}).Plan(b.p); err == nil || !strings.Contains(err.Error(), "cannot keep the unmatched") {
		t.Errorf("broadcasting the preserved side of an outer join: err = %v", err)
	}
	// without a hint the optimizer never broadcasts a preserved side
	b = newBuilder(2)
	l, r = b.source("l", 10), b.source("r", 1_000_000)
	j = b.join("j", l, r, "int64", "k")
	j.Outer = [2]bool{true, false}
	b.sink(j)
	b.plan(t)
	if j.Decision.Ship[0] == Broadcast {
		t.Errorf("the optimizer broadcast the preserved side of a left outer join")
	}
}

func TestCostBasedBroadcastsTinySide(t *testing.T) {
	for _, sizes := range [][2]int64{{25, 1_000_000}, {1_000_000, 5}} {
		b := newBuilder(4)
		l, r := b.source("l", sizes[0]), b.source("r", sizes[1])
		j := b.join("j", l, r, "int64", "k")
		b.sink(j)
		b.plan(t)
		small := 0
		if sizes[1] < sizes[0] {
			small = 1
		}
		if j.Decision.Ship[small] != Broadcast || j.Decision.Ship[1-small] != Forward {
			t.Errorf("sizes %v: ships %v, want the small input broadcast", sizes, j.Decision.Ship)
		}
	}
	// two large inputs are repartitioned, building from the smaller one
	b := newBuilder(4)
	l, r := b.source("l", 2_000_000), b.source("r", 1_000_000)
	j := b.join("j", l, r, "int64", "k")
	b.sink(j)
	b.plan(t)
	if j.Decision.Ship[0] != Hash || j.Decision.Local != HybridHashBuildSecond {
		t.Errorf("large inputs: %v %s, want HASH and build from the smaller second", j.Decision.Ship, j.Decision.Local)
	}
}

func TestCostBasedBranchAndRejoinBlocks(t *testing.T) {
	b := newBuilder(2)
	src := b.source("s", 1_000_000)
	left := b.add(Map, "left", src)
	right := b.add(Map, "right", src)
	j := b.join("rejoin", left, right, "int64", "k")
	j.JoinHint = RepartitionHashFirst
	b.sink(j)
	b.plan(t)
	if j.Decision.Exchange[0] != Pipelined || j.Decision.Exchange[1] != Blocking {
		t.Errorf("exchanges %v, want the probe side (read second) blocking", j.Decision.Exchange)
	}
	// independent inputs stay pipelined
	b = newBuilder(2)
	x, y := b.source("x", 1000), b.source("y", 1000)
	j = b.join("j", x, y, "int64", "k")
	b.sink(j)
	b.plan(t)
	for i, e := range j.Decision.Exchange {
		if e != Pipelined {
			t.Errorf("input %d of a join of independent sources is %s", i, e)
		}
	}
}

func TestCostBasedCombinerAndSpill(t *testing.T) {
	b := newBuilder(4)
	src := b.source("s", 1_000_000)
	g := b.group("g", src, "k")
	b.sink(g)
	b.plan(t)
	if g.Decision.Ship[0] != Hash || !g.Decision.Combine || g.Decision.Local != HashAggregate {
		t.Errorf("grouping of a source: %v combine=%v %s", g.Decision.Ship, g.Decision.Combine, g.Decision.Local)
	}
	if g.Decision.Cost.Network >= float64(src.Decision.Estimate.Bytes) {
		t.Errorf("the combiner does not lower the shipped bytes: %v of %d", g.Decision.Cost.Network, src.Decision.Estimate.Bytes)
	}
	if g.Decision.Cost.Disk != 0 {
		t.Errorf("disk cost %v without a memory budget", g.Decision.Cost.Disk)
	}
	b.p.Memory = 1 << 10
	b.plan(t)
	if g.Decision.Cost.Disk == 0 {
		t.Errorf("no disk cost with a 1 KiB budget")
	}
}

func TestCostsCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b Costs
		want int
	}{
		{Costs{1, 100, 100}, Costs{2, 0, 0}, -1},
		{Costs{1, 1, 100}, Costs{1, 2, 0}, -1},
		{Costs{1, 1, 1}, Costs{1, 1, 2}, -1},
		{Costs{1000, 1, 1}, Costs{1000.5, 1, 1}, 0},
		{Costs{2, 0, 0}, Costs{1, 100, 100}, 1},
	} {
		if got := tc.a.Compare(tc.b); got != tc.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
