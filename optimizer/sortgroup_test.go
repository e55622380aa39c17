package optimizer

import (
	"encoding/json"
	"strings"
	"testing"
)

// sortedJoinThenReduce plans a sort-merge join on k (forced by the hint)
// followed by a Reduce on k whose key has type reduceKeyType.
func sortedJoinThenReduce(t *testing.T, reduceKeyType string, memory int64) (*builder, *Node, *Node) {
	t.Helper()
	b := newBuilder(4)
	l, r := b.source("l", 200_000), b.source("r", 300_000)
	j := b.join("j", l, r, "int64", "k")
	j.JoinHint = RepartitionSortMerge
	g := b.group("g", j, "k")
	g.KeyTypes = []string{reduceKeyType}
	b.sink(g)
	b.p.Memory = memory
	b.plan(t)
	return b, j, g
}

func TestReduceAfterSortMergeJoinStreamsItsOrder(t *testing.T) {
	b, j, g := sortedJoinThenReduce(t, "int64", 0)
	d := g.Decision
	if j.Decision.Local != SortMerge {
		t.Fatalf("the hinted join runs %s\n%s", j.Decision.Local, b.p.Explain())
	}
	if d.Local != SortGroup || d.Ship[0] != Forward || d.InputLocal[0] != LocalNone || d.Combine {
		t.Fatalf("Reduce after the sort-merge join: local=%s ship=%v input local=%v combine=%v, want SORT_GROUP, FORWARD, NONE, no combiner\n%s",
			d.Local, d.Ship, d.InputLocal, d.Combine, b.p.Explain())
	}
	notes := strings.Join(d.Notes, ";")
	if want := "input 0: reuses ORDERED(k) of #2"; !strings.Contains(notes, want) {
		t.Errorf("notes %q lack %q", d.Notes, want)
	}
	rows := float64(j.Decision.Estimate.Rows)
	if d.Cost.CPU != rows || d.Cost.Disk != 0 || d.Cost.Network != 0 {
		t.Errorf("the streaming grouping costs %+v, want cpu=%v (one pass) and nothing else", d.Cost, rows)
	}

	// EXPLAIN says so in every format
	text := b.p.Text()
	if !strings.Contains(text, `local=SORT_GROUP`) || !strings.Contains(text, "in0:FORWARD/PIPELINED #2 Join") {
		t.Errorf("text:\n%s", text)
	}
	js, err := b.p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Nodes []struct {
			ID             int    `json:"id"`
			DriverStrategy string `json:"driver_strategy"`
			Inputs         []struct {
				ShipStrategy  string `json:"ship_strategy"`
				LocalStrategy string `json:"local_strategy"`
			} `json:"inputs"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(js, &plan); err != nil {
		t.Fatal(err)
	}
	jn := plan.Nodes[g.ID]
	if jn.DriverStrategy != "SORT_GROUP" || jn.Inputs[0].ShipStrategy != "FORWARD" || jn.Inputs[0].LocalStrategy != "NONE" {
		t.Errorf("JSON node %+v", jn)
	}
	if dot := b.p.DOT(); !strings.Contains(dot, "SORT_GROUP") {
		t.Errorf("DOT lacks SORT_GROUP:\n%s", dot)
	}

	// a tiny budget makes a hash aggregation spill; the streaming walk holds
	// one group and never does
	b, _, g = sortedJoinThenReduce(t, "int64", 1<<10)
	if d := g.Decision; d.Local != SortGroup || d.InputLocal[0] != LocalNone || d.Cost.Disk != 0 {
		t.Errorf("with a 1 KiB budget: local=%s input local=%v cost %+v\n%s", d.Local, d.InputLocal, d.Cost, b.p.Explain())
	}
}

func TestReduceWithoutUsableOrderHashAggregates(t *testing.T) {
	// a source: no order, shuffled with a combiner
	b := newBuilder(4)
	src := b.source("s", 1_000_000)
	g := b.group("g", src, "k")
	b.sink(g)
	b.plan(t)
	if d := g.Decision; d.Local != HashAggregate || d.Ship[0] != Hash || !d.Combine || d.InputLocal[0] != LocalNone {
		t.Errorf("Reduce of a source: local=%s ship=%v combine=%v input local=%v\n%s", d.Local, d.Ship, d.Combine, d.InputLocal, b.p.Explain())
	}

	// partitioned but unsorted (a hash join on k): forwarded, hash aggregated
	b = newBuilder(4)
	l, r := b.source("l", 200_000), b.source("r", 300_000)
	j := b.join("j", l, r, "int64", "k")
	j.JoinHint = RepartitionHashFirst
	g = b.group("g", j, "k")
	g.KeyTypes = []string{"int64"}
	b.sink(g)
	b.plan(t)
	if d := g.Decision; d.Local != HashAggregate || d.Ship[0] != Forward {
		t.Errorf("Reduce after a hash join: local=%s ship=%v\n%s", d.Local, d.Ship, b.p.Explain())
	}

	// sorted on k by a key of another type: the byte orders differ, no reuse
	b, _, g = sortedJoinThenReduce(t, "string", 0)
	if d := g.Decision; d.Local != HashAggregate || d.Ship[0] != Forward {
		t.Errorf("Reduce on a key of another type: local=%s ship=%v\n%s", d.Local, d.Ship, b.p.Explain())
	}
}

// TestSortGroupReduceOutputIsOrdered checks the property a sorted grouping
// leaves: a sort-merge join after it on the same key merges its output as it
// comes, while after a hash aggregation it must sort.
func TestSortGroupReduceOutputIsOrdered(t *testing.T) {
	for _, sorted := range []bool{true, false} {
		b := newBuilder(4)
		l, r := b.source("l", 200_000), b.source("r", 300_000)
		j := b.join("j", l, r, "int64", "k")
		j.JoinHint = RepartitionSortMerge
		if !sorted {
			j.JoinHint = RepartitionHashFirst
		}
		g := b.group("g", j, "k")
		g.KeyTypes = []string{"int64"}
		other := b.source("o", 100_000)
		j2 := b.join("j2", g, other, "int64", "k")
		j2.JoinHint = RepartitionSortMerge
		b.sink(j2)
		b.plan(t)
		d := j2.Decision
		if d.Ship[0] != Forward {
			t.Fatalf("sorted=%v: the second join ships the groups %s\n%s", sorted, d.Ship[0], b.p.Explain())
		}
		want := LocalSort
		if sorted {
			want = LocalNone
		}
		if d.InputLocal[0] != want {
			t.Errorf("sorted=%v: the second join's input 0 is %s, want %s\n%s", sorted, d.InputLocal[0], want, b.p.Explain())
		}
		if sorted && g.Decision.Local != SortGroup {
			t.Errorf("the Reduce runs %s", g.Decision.Local)
		}
	}
}

// TestSortGroupCostsSortWhenNotSorted checks the sorted grouping's cost over
// unsorted input: a sort and a pass, more than a hash aggregation's two passes,
// so the planner keeps hashing.
func TestSortGroupCostsSortWhenNotSorted(t *testing.T) {
	b := newBuilder(2)
	src := b.source("s", 100_000)
	g := b.group("g", src, "k")
	b.sink(g)
	cs, err := enumerate(g, estimateAll(t, b.p, g), map[*Node][]*cand{src: {{out: props{g: global{kind: anyPart, par: 2}}, ship: []Ship{}}}}, 1e18)
	if err != nil {
		t.Fatal(err)
	}
	var hash, sorted *cand
	for _, c := range cs {
		switch c.local {
		case HashAggregate:
			hash = c
		case SortGroup:
			sorted = c
		}
	}
	if hash == nil || sorted == nil {
		t.Fatalf("candidates %v: want both strategies", cs)
	}
	if sorted.inLocal[0] != LocalSort {
		t.Errorf("unsorted input: input local %s, want SORT", sorted.inLocal[0])
	}
	if hash.cost.Compare(sorted.cost) >= 0 {
		t.Errorf("hash %+v is not cheaper than sort %+v", hash.cost, sorted.cost)
	}
	if sorted.out.l.String() != "ORDERED(k)" || hash.out.l.String() != "" {
		t.Errorf("orders: sorted %q, hash %q", sorted.out.l, hash.out.l)
	}
}

// estimateAll estimates the nodes of p up to n, as Plan does, and returns n's.
func estimateAll(t *testing.T, p *Plan, n *Node) Estimate {
	t.Helper()
	var est Estimate
	for _, m := range p.Nodes {
		est = estimate(m)
		if m == n {
			return est
		}
	}
	t.Fatalf("node #%d not in the plan", n.ID)
	return est
}

// TestReduceCombinerOnlyWhereItShrinks: a combinable Reduce shuffled by hash
// runs a combiner when its groups are fewer than its input rows per producer,
// and none when every row is its own group (the combiner would ship as much
// and cost a pass), as its declared estimate says.
func TestReduceCombinerOnlyWhereItShrinks(t *testing.T) {
	for _, c := range []struct {
		name    string
		groups  int64 // the Reduce's declared estimate; -1: the default
		combine bool
	}{
		{"few groups", 1_000, true},
		{"default estimate", -1, true},
		{"a group per row", 1_000_000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(4)
			src := b.source("src", 1_000_000)
			g := b.group("g", src, "k")
			g.EstimatedRows = c.groups
			b.sink(g)
			b.plan(t)
			d := g.Decision
			if d.Ship[0] != Hash || d.Combine != c.combine {
				t.Fatalf("ship %v combine %v, want HASH and combine %v\n%s", d.Ship, d.Combine, c.combine, b.p.Explain())
			}
		})
	}
}
