package optimizer

import (
	"fmt"
	"strings"
	"testing"
)

func src(id int, p int, rows int64) *Node {
	return &Node{ID: id, Name: "src", Kind: Source, Parallelism: p, EstimatedRows: rows}
}

func joinNode(l, r *Node, hint JoinHint, outer [2]bool) *Node {
	return &Node{ID: 9, Name: "join", Kind: Join, Inputs: []*Node{l, r}, Parallelism: 4,
		Keyed: []bool{true, true}, JoinHint: hint, Outer: outer, EstimatedRows: -1}
}

func TestSimpleJoinHints(t *testing.T) {
	for _, c := range []struct {
		hint        JoinHint
		lrows, rows int64
		ship        [2]Ship
		local       Local
	}{
		{OptimizerChooses, -1, -1, [2]Ship{Hash, Hash}, HybridHashBuildSecond},
		{OptimizerChooses, 10, 1000, [2]Ship{Hash, Hash}, HybridHashBuildFirst},
		{OptimizerChooses, 1000, 10, [2]Ship{Hash, Hash}, HybridHashBuildSecond},
		{BroadcastHashFirst, -1, -1, [2]Ship{Broadcast, Forward}, HybridHashBuildFirst},
		{BroadcastHashSecond, -1, -1, [2]Ship{Forward, Broadcast}, HybridHashBuildSecond},
		{RepartitionHashFirst, 1000, 10, [2]Ship{Hash, Hash}, HybridHashBuildFirst},
		{RepartitionHashSecond, 10, 1000, [2]Ship{Hash, Hash}, HybridHashBuildSecond},
		{RepartitionSortMerge, -1, -1, [2]Ship{Hash, Hash}, SortMerge},
	} {
		j := joinNode(src(0, 4, c.lrows), src(1, 4, c.rows), c.hint, [2]bool{})
		p := &Plan{Nodes: []*Node{j.Inputs[0], j.Inputs[1], j}}
		if err := Optimize(p, Simple{}); err != nil {
			t.Fatalf("%s: %v", c.hint, err)
		}
		d := j.Decision
		if d.Ship[0] != c.ship[0] || d.Ship[1] != c.ship[1] || d.Local != c.local {
			t.Errorf("%s (%d, %d rows): ship %v local %s, want %v %s", c.hint, c.lrows, c.rows, d.Ship, d.Local, c.ship, c.local)
		}
		if d.Exchange[0] != Pipelined || d.Exchange[1] != Pipelined {
			t.Errorf("%s: exchanges %v, want pipelined", c.hint, d.Exchange)
		}
	}
}

func TestSimpleRefusesToBroadcastAPreservedSide(t *testing.T) {
	j := joinNode(src(0, 4, -1), src(1, 4, -1), BroadcastHashFirst, [2]bool{true, false})
	err := (Simple{}).Plan(&Plan{Nodes: []*Node{j.Inputs[0], j.Inputs[1], j}})
	if err == nil || !strings.Contains(err.Error(), "cannot keep the unmatched records") {
		t.Fatalf("err = %v", err)
	}
}

func TestSimpleShipsAndLocals(t *testing.T) {
	s := src(0, 4, -1)
	m := &Node{ID: 1, Kind: Map, Inputs: []*Node{s}, Parallelism: 4}
	r := &Node{ID: 2, Kind: Reduce, Inputs: []*Node{m}, Parallelism: 4, Keyed: []bool{true}, Combinable: true}
	g := &Node{ID: 3, Kind: GroupReduce, Inputs: []*Node{m}, Parallelism: 4, Keyed: []bool{true}}
	o := &Node{ID: 4, Kind: Sort, Inputs: []*Node{m}, Parallelism: 4, Ordered: []bool{true}}
	f := &Node{ID: 5, Kind: MapPartition, Inputs: []*Node{o}, Parallelism: 1, OrderedGather: true}
	k := &Node{ID: 6, Kind: Sink, Inputs: []*Node{f}, Parallelism: 1}
	p := &Plan{Nodes: []*Node{s, m, r, g, o, f, k}}
	if err := Optimize(p, Simple{}); err != nil {
		t.Fatal(err)
	}
	want := `0 Source "src" p=4
1 Map "" p=4 in0=0:FORWARD/PIPELINED
2 Reduce "" p=4 local=HASH_AGGREGATE combine in0=1:HASH/PIPELINED
3 GroupReduce "" p=4 local=SORT_GROUP in0=1:HASH/PIPELINED
4 Sort "" p=4 local=SORT in0=1:RANGE/PIPELINED
5 MapPartition "" p=1 in0=4:REBALANCE/BLOCKING
6 Sink "" p=1 in0=5:FORWARD/PIPELINED
`
	if got := oneLinePerNode(p); got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
}

// oneLinePerNode prints each node's decisions on one line, in plan order.
func oneLinePerNode(p *Plan) string {
	var b strings.Builder
	for _, n := range p.Nodes {
		fmt.Fprintf(&b, "%d %s %q p=%d", n.ID, n.Kind, n.Name, n.Parallelism)
		if n.Decision.Local != NoLocal {
			fmt.Fprintf(&b, " local=%s", n.Decision.Local)
		}
		if n.Decision.Combine {
			b.WriteString(" combine")
		}
		for i, in := range n.Inputs {
			fmt.Fprintf(&b, " in%d=%d:%s/%s", i, in.ID, n.Decision.Ship[i], n.Decision.Exchange[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}
