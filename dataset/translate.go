package dataset

import (
	"fmt"
	"strings"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// translate turns a plan (the program's, or one stage of an adaptive
// execution) into a flow graph, reading only the plan: its edges, decisions
// and parallelism. nodes[i] is the node plan.Nodes[i] runs: its operator. The
// graph has one vertex per chain of operators (a head that reads inputs,
// then record-at-a-time operators whose input is forwarded from a producer
// with no other consumer) and one edge per input of every chain head. Every
// operator's output collector is wrapped to count the records it emits (see
// outPort.count).
func (e *Env) translate(plan *optimizer.Plan, nodes []*node) (*flow.Graph, error) {
	if len(plan.Nodes) != len(nodes) {
		return nil, fmt.Errorf("dataset: internal error: a plan of %d nodes for %d operators", len(plan.Nodes), len(nodes))
	}
	index := make(map[*optimizer.Node]int, len(plan.Nodes))
	byID := make(map[int]*node, len(nodes))
	for i, pn := range plan.Nodes {
		index[pn] = i
		byID[pn.ID] = nodes[i]
	}
	// inputs[i] are the indexes of node i's inputs, in the plan
	inputs := make([][]*node, len(nodes))
	consumers := map[*node]int{}
	for i, pn := range plan.Nodes {
		for _, in := range pn.Inputs {
			j, ok := index[in]
			if !ok {
				return nil, fmt.Errorf("dataset: internal error: %s reads a node outside its plan", nodes[i].name())
			}
			inputs[i] = append(inputs[i], nodes[j])
			consumers[nodes[j]]++
		}
	}
	chained := func(n *node, ins []*node) bool {
		if !n.op.chainable || len(ins) != 1 {
			return false
		}
		p := ins[0]
		d := n.planned.Decision
		return d.Ship[0] == optimizer.Forward && d.Exchange[0] == optimizer.Pipelined &&
			p.planned.Parallelism == n.planned.Parallelism && consumers[p] == 1 && p.out != nil
	}

	bind(plan, nodes)
	e.linkKeyFilters(nodes, inputs, consumers)
	g := flow.NewGraph()
	type vertexInfo struct {
		v     *flow.Vertex
		chain []*node
		outs  []outEdge
	}
	var vertices []*vertexInfo
	vertexOf := map[*node]*vertexInfo{}
	headInputs := map[*node][]*node{}
	for i, n := range nodes {
		if chained(n, inputs[i]) {
			vi := vertexOf[inputs[i][0]]
			if vi == nil {
				return nil, fmt.Errorf("dataset: internal error: %s reads %s, which does not run with it", n.name(), inputs[i][0].name())
			}
			vi.chain = append(vi.chain, n)
			vertexOf[n] = vi
			continue
		}
		vi := &vertexInfo{chain: []*node{n}}
		vertexOf[n] = vi
		headInputs[n] = inputs[i]
		vertices = append(vertices, vi)
	}
	for i, vi := range vertices { // flow reports metrics per vertex in this order
		for _, n := range vi.chain {
			n.vertex = i
		}
	}
	// every subtask of an iteration's tasks is a party of its barrier (party
	// first[v] + subtask); those and the subtasks of its result share its
	// storage. Spread, the subtasks of other processes are parties of their
	// barriers (elsewhere), and their process's users.
	parties, users := map[*loop]int{}, map[*loop]int{}
	var elsewhere map[*loop][]int
	first := make([]int, len(vertices))
	here := func(n *node, i int) bool { return true }
	if sp := e.opts.Spread; sp != nil {
		elsewhere = map[*loop][]int{}
		here = func(n *node, i int) bool { return sp.partOf(n.gathered, i) == sp.Part }
		for _, lp := range e.loops {
			lp.voters = nil
		}
	}
	for v, vi := range vertices {
		h := vi.chain[0]
		for i := range h.planned.Parallelism {
			if lp := h.loops().loop; lp != nil && h.loops().role != notInLoop {
				if here(h, i) {
					users[lp]++
				} else {
					elsewhere[lp] = append(elsewhere[lp], parties[lp]+i)
				}
				if sp := e.opts.Spread; sp != nil {
					lp.vote(sp.partOf(false, i))
				}
			}
			if lp := h.loops().resultOf; lp != nil && here(h, i) {
				users[lp]++
			}
		}
		if lp := h.loops().loop; lp != nil && h.loops().role != notInLoop {
			first[v] = parties[lp]
			parties[lp] += h.planned.Parallelism
		}
	}
	// every task's outputs: one per input of a consumer's head
	for _, vi := range vertices {
		head := vi.chain[0]
		for i, in := range headInputs[head] {
			from := vertexOf[in]
			if from == nil {
				return nil, fmt.Errorf("dataset: internal error: %s reads %s, which does not run with it", head.name(), in.name())
			}
			if from.chain[len(from.chain)-1] != in {
				return nil, fmt.Errorf("dataset: internal error: %s is not the last operator of its task", in.name())
			}
			from.outs = append(from.outs, outEdge{consumer: head, input: i})
		}
	}
	for _, lp := range e.loops {
		if parties[lp] == 0 && users[lp] == 0 {
			continue // not in this plan
		}
		lp.start(parties[lp], users[lp])
		for _, p := range elsewhere[lp] {
			lp.it.Elsewhere(p)
		}
	}
	for v, vi := range vertices {
		names := make([]string, len(vi.chain))
		for i, n := range vi.chain {
			names[i] = n.name()
		}
		head := vi.chain[0]
		share := taskShare(vi.chain, vi.outs)
		vi.v = g.Vertex(strings.Join(names, " -> "), head.planned.Parallelism, func(ftc *flow.TaskContext) error {
			tc := &task{TaskContext: ftc, memShare: share, spread: e.opts.Spread != nil}
			run := func() error { return runChain(tc, vi.chain, vi.outs) }
			if lp := head.loops().resultOf; lp != nil {
				ftc.OnEnd(lp.it.Exit)
			}
			if lp := head.loops().loop; lp != nil && head.loops().role != notInLoop {
				ftc.OnEnd(lp.it.Exit)
				tc.loop = lp
				return lp.runTask(tc, head, first[v]+ftc.Subtask, run)
			}
			return run()
		})
	}
	for _, vi := range vertices {
		head := vi.chain[0]
		d := head.planned.Decision
		for i, in := range headInputs[head] {
			connect := head.in[i]
			if f := d.ShipFor; f != nil {
				// head ships its input for a consumer's input (the
				// optimizer's shipBeforeReplay): with that input's key
				c := byID[f.Node]
				if c == nil || f.Input >= len(c.in) {
					return nil, fmt.Errorf("dataset: internal error: %s ships for #%d, which does not run with it", head.name(), f.Node)
				}
				connect = c.in[f.Input]
			}
			connect.connect(g, vertexOf[in].v, vi.v, d.Ship[i], d.Exchange[i])
		}
	}
	return g, nil
}

// runChain runs a task's chain of operators: it builds the collector of the
// tail's output (the vertex's outputs), links every chained operator from
// the tail back, opening each, runs the head, and closes the chained
// operators on every path, head side first. Every operator's output
// collector counts the records it emits (outPort.count).
func runChain(tc *task, chain []*node, outs []outEdge) (err error) {
	tail := chain[len(chain)-1]
	var out any
	if tail.out != nil {
		if out, err = tail.out.writers(tc, outs); err != nil {
			return err
		}
	}
	out = counted(tail, out)
	opened := make([]flow.Operator, 0, len(chain)-1)
	defer func() {
		for _, op := range opened {
			if cerr := op.Close(); err == nil {
				err = cerr
			}
		}
	}()
	for i := len(chain) - 1; i >= 1; i-- {
		if chain[i].op.link == nil {
			return fmt.Errorf("internal error: %T cannot follow its producer", chain[i].op.execution)
		}
		op, in, err := chain[i].op.link(tc, out)
		if err != nil {
			return err
		}
		if err := op.Open(tc.TaskContext); err != nil {
			return err
		}
		opened = append([]flow.Operator{op}, opened...)
		out = counted(chain[i-1], in)
	}
	return chain[0].op.head(tc, out)
}

// counted wraps out, the collector of n's output, so that it counts the
// records n emits.
func counted(n *node, out any) any {
	if out == nil || n.out == nil {
		return out
	}
	return n.out.count(out)
}

// taskShare is the managed memory each memory-using operator of a task may
// hold: the largest share the plan gives the task's chain or a combiner it
// runs for a consumer (optimizer's memoryShare: one share for the job).
func taskShare(chain []*node, outs []outEdge) int64 {
	var share int64
	for _, n := range chain {
		share = max(share, n.planned.Decision.MemoryShare)
	}
	for _, oe := range outs {
		if d := oe.consumer.planned.Decision; d.Combine {
			share = max(share, d.MemoryShare)
		}
	}
	return share
}
