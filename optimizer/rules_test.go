package optimizer

import (
	"slices"
	"strings"
	"testing"
)

// rejoinPlan is a source read by two maps that meet again at a join built
// from its first input (so the second input must block) and a hashed
// grouping after the join.
func rejoinPlan(mode ExecutionMode) (*builder, *Node, *Node, *Node) {
	b := newBuilder(2)
	b.p.Mode = mode
	src := b.source("s", 1_000_000)
	left := b.add(Map, "left", src)
	right := b.add(Map, "right", src)
	j := b.join("rejoin", left, right, "int64", "k")
	j.JoinHint = RepartitionHashFirst
	g := b.group("g", j, "other")
	b.sink(g)
	return b, left, j, g
}

// TestExecutionModeRule checks each mode against the exchanges a mode
// defines, with the rejoin's blocking exchange kept under every mode.
func TestExecutionModeRule(t *testing.T) {
	for _, c := range []struct {
		mode ExecutionMode
		// join's inputs, the grouping's input, the left map's input (forward)
		join       []Exchange
		group, fwd Exchange
	}{
		{PipelinedExecution, []Exchange{Pipelined, Blocking}, Pipelined, Pipelined},
		{PipelinedForced, []Exchange{Pipelined, Blocking}, Pipelined, Pipelined},
		{BatchExecution, []Exchange{Blocking, Blocking}, Blocking, Pipelined},
		{BatchForced, []Exchange{Blocking, Blocking}, Blocking, Blocking},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			b, left, j, g := rejoinPlan(c.mode)
			b.plan(t)
			if !slices.Equal(j.Decision.Exchange, c.join) || g.Decision.Exchange[0] != c.group || left.Decision.Exchange[0] != c.fwd {
				t.Errorf("join %v, grouping %v, forward %v; want %v, %v, %v",
					j.Decision.Exchange, g.Decision.Exchange[0], left.Decision.Exchange[0], c.join, c.group, c.fwd)
			}
		})
	}
	b, _, _, _ := rejoinPlan(ExecutionMode(9))
	if err := Optimize(b.p, CostBased{}); err == nil || !strings.Contains(err.Error(), "unknown execution mode") {
		t.Errorf("mode 9: %v", err)
	}
}

// TestOrderedGatherBlocksUnderPipelinedForced: the rule after the mode makes
// the gather's input blocking again.
func TestOrderedGatherBlocksUnderPipelinedForced(t *testing.T) {
	b := newBuilder(4)
	b.p.Mode = PipelinedForced
	s := b.source("s", 1000)
	o := b.add(Sort, "sort", s)
	o.Ordered = []bool{true}
	f := b.add(MapPartition, "gather", o)
	f.Parallelism, f.OrderedGather = 1, true
	b.sink(f)
	b.plan(t)
	if f.Decision.Exchange[0] != Blocking {
		t.Errorf("gather's input %v, want BLOCKING", f.Decision.Exchange[0])
	}
}

// loopPlan is a bulk iteration: a head over an initial source, a replayer of
// a loop-invariant source, a step co-grouping the two (the replayed input is
// hashed), a step join with the invariant source kept as its index, the
// tail, and the result read by a join with the invariant source after the
// iteration.
func loopPlan(mode ExecutionMode) (b *builder, rep, co, cached, after *Node) {
	b = newBuilder(4)
	b.p.Mode = mode
	init := b.source("initial", 1000)
	inv := b.source("invariant", 100_000)
	head := b.add(MapPartition, "head", init)
	rep = b.add(MapPartition, "replay", inv)
	rep.PreservesAll = true
	co = b.add(CoGroup, "cogroup", head, rep)
	co.Keyed = []bool{true, true}
	co.KeyTypes = []string{"int64", "int64"}
	cached = b.join("join", co, inv, "int64", "k")
	tail := b.add(Sink, "tail", cached)
	for _, n := range []*Node{head, rep, co, cached, tail} {
		n.Loop, n.Iterations = 1, 10
		n.Static = make([]bool, len(n.Inputs))
	}
	head.LoopRole, rep.LoopRole, co.LoopRole, cached.LoopRole, tail.LoopRole = LoopHead, LoopReplay, LoopStep, LoopStep, LoopTail
	head.Static[0], rep.Static[0], cached.Static[1] = true, true, true
	res := b.source("result", -1)
	res.SizeOf = init
	after = b.join("after", res, inv, "int64", "k")
	after.JoinHint = BroadcastHashFirst
	b.sink(after)
	return b, rep, co, cached, after
}

// TestLoopRules checks the iteration rules under every execution mode: the
// exchange into the co-group moves in front of the replayer, which ships for
// it at its parallelism; the join keeps its invariant input as the build
// side; edges inside the iteration stay pipelined; the invariant source's
// edge to the join after the iteration blocks.
func TestLoopRules(t *testing.T) {
	for _, mode := range []ExecutionMode{PipelinedExecution, PipelinedForced, BatchExecution, BatchForced} {
		t.Run(mode.String(), func(t *testing.T) {
			for _, pl := range []Planner{CostBased{}, Simple{}} {
				b, rep, co, cached, after := loopPlan(mode)
				if err := Optimize(b.p, pl); err != nil {
					t.Fatal(err)
				}
				if rep.Decision.Ship[0] != Hash || co.Decision.Ship[1] != Forward ||
					rep.Decision.ShipFor == nil || *rep.Decision.ShipFor != (Port{Node: co.ID, Input: 1}) {
					t.Errorf("%T: replayer ships %v for %v, co-group reads it %v", pl, rep.Decision.Ship, rep.Decision.ShipFor, co.Decision.Ship)
				}
				if cached.Decision.Local != HybridHashBuildSecond {
					t.Errorf("%T: the step's join runs %s, want it built on its invariant input", pl, cached.Decision.Local)
				}
				for _, n := range []*Node{co, cached} {
					for i, in := range n.Inputs {
						if in.Loop == n.Loop && n.Decision.Exchange[i] != Pipelined {
							t.Errorf("%T: %s input %d is %s inside the iteration", pl, n.Name, i, n.Decision.Exchange[i])
						}
					}
				}
				if after.Decision.Exchange[1] != Blocking {
					t.Errorf("%T: the invariant source's edge after the iteration is %s", pl, after.Decision.Exchange[1])
				}
			}
		})
	}
}

// TestLoopRejoinInsideStepRefused: a step whose branches part at one of its
// operators and meet at a join that reads one input first would need a
// blocking edge inside the iteration.
func TestLoopRejoinInsideStepRefused(t *testing.T) {
	b := newBuilder(2)
	init := b.source("initial", 1000)
	head := b.add(MapPartition, "head", init)
	m := b.add(Map, "m", head)
	l, r := b.add(Map, "l", m), b.add(Map, "r", m)
	j := b.join("j", l, r, "int64", "k")
	j.JoinHint = RepartitionHashFirst
	tail := b.add(Sink, "tail", j)
	for _, n := range []*Node{head, m, l, r, j, tail} {
		n.Loop, n.LoopRole = 1, LoopStep
	}
	head.LoopRole, tail.LoopRole = LoopHead, LoopTail
	err := Optimize(b.p, CostBased{})
	if err == nil || !strings.Contains(err.Error(), "meet again here") {
		t.Fatalf("got %v, want the step refused", err)
	}
}

// TestMemoryShareIsTheCostModels: every node's decision holds the budget
// split between the memory users' subtasks, the share the cost model
// weighed.
func TestMemoryShareIsTheCostModels(t *testing.T) {
	b := newBuilder(4)
	b.p.Memory = 1 << 30
	s := b.source("s", 1_000_000)
	g := b.group("g", s, "k") // 4 subtasks, and 4 of its combinable input
	o := b.add(Sort, "sort", g)
	o.Keyed = []bool{true}
	o.Parallelism = 2 // 2 subtasks
	b.sink(o)
	b.plan(t)
	want := int64(1<<30) / 10
	if got := int64(memoryShare(b.p)); got != want {
		t.Fatalf("memoryShare %d, want %d", got, want)
	}
	for _, n := range b.p.Nodes {
		if n.Decision.MemoryShare != want {
			t.Errorf("#%d: share %d, want %d", n.ID, n.Decision.MemoryShare, want)
		}
	}
	b.p.Memory = 0
	b.plan(t)
	if s.Decision.MemoryShare != 0 {
		t.Errorf("no budget: share %d", s.Decision.MemoryShare)
	}
}

// badPlanner forwards every input, whatever the parallelisms.
type badPlanner struct{}

func (badPlanner) Plan(p *Plan) error {
	for _, n := range p.Nodes {
		n.Decision = Decision{Ship: make([]Ship, len(n.Inputs)), Exchange: make([]Exchange, len(n.Inputs))}
	}
	return nil
}

// TestCheckRefusesUnrunnablePlans: the last rule finds a forward between
// different parallelisms.
func TestCheckRefusesUnrunnablePlans(t *testing.T) {
	b := newBuilder(4)
	s := b.source("s", 10)
	m := b.add(MapPartition, "m", s)
	m.Parallelism = 2
	if err := Optimize(b.p, badPlanner{}); err == nil || !strings.Contains(err.Error(), "forwarded from parallelism 4 to 2") {
		t.Fatalf("got %v", err)
	}
}
