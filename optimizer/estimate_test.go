package optimizer

import "testing"

// TestEstimateForeignKeyJoins checks the join estimates against the counts a
// TPC-H-like schema has by construction: every fact row has exactly one
// dimension partner, so a join keeps the fact rows times the share of the
// dimension its filters kept.
func TestEstimateForeignKeyJoins(t *testing.T) {
	b := newBuilder(2)
	parts := b.source("part", 20000)
	green := b.add(Map, "green parts", parts)
	green.PreservesAll = true
	green.Selectivity = 0.05
	lines := b.source("lineitem", 600000)
	semi := b.join("lineitem semi part", lines, green, "int64", "partkey")
	semi.JoinKind = SemiJoin
	supps := b.source("partsupp", 80000)
	withSupp := b.join("lineitem-partsupp", semi, supps, "struct", "partkey", "suppkey")
	orders := b.source("orders", 150000)
	dated := b.join("lineitem-orders", orders, withSupp, "int64", "orderkey") // the fact side second
	anti := b.join("orders without lineitem", orders, lines, "int64", "orderkey")
	anti.JoinKind = AntiJoin
	outer := b.join("orders left outer green lines", orders, semi, "int64", "orderkey")
	outer.JoinKind = LeftOuterJoin
	filtered := b.source("filtered orders", 0)
	filtered.EstimatedRows, filtered.SourceRows = 30000, 150000 // the scan's filter keeps a fifth
	lineOrders := b.join("lineitem-filtered orders", lines, filtered, "int64", "orderkey")
	for _, n := range []*Node{dated, anti, outer, lineOrders} {
		b.sink(n)
	}
	b.plan(t)
	for _, c := range []struct {
		n    *Node
		want int64
	}{
		{semi, 30000},        // 600,000 × 0.05
		{withSupp, 30000},    // one partsupp per line
		{dated, 30000},       // one order per line, whichever side the lines are on
		{anti, 75000},        // DefaultAntiSelectivity of the orders
		{outer, 150000},      // at least every order
		{lineOrders, 120000}, // 600,000 × 30,000 / 150,000
	} {
		if got := c.n.Decision.Estimate.Rows; got != c.want {
			t.Errorf("%s: estimated %d rows, want %d", c.n.Name, got, c.want)
		}
	}
}
