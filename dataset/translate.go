package dataset

import (
	"fmt"
	"strings"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// translate turns planned nodes (the program's, or one stage of an adaptive
// execution: every node's inputs among them) into a flow graph: one vertex per chain
// of operators (a head that reads inputs, then record-at-a-time operators whose
// input is forwarded from a producer with no other consumer), one edge per input
// of every chain head. Every operator's output collector is wrapped to count
// the records it emits (see node.count).
func (e *Env) translate(nodes []*node) (*flow.Graph, error) {
	consumers := map[*node][]*node{}
	for _, n := range nodes {
		for _, in := range n.inputs {
			consumers[in] = append(consumers[in], n)
		}
	}
	chained := func(n *node) bool {
		if n.wrap == nil || len(n.inputs) != 1 {
			return false
		}
		p := n.inputs[0]
		d := n.opt.Decision
		return d.Ship[0] == optimizer.Forward && d.Exchange[0] == optimizer.Pipelined &&
			p.opt.Parallelism == n.opt.Parallelism && len(consumers[p]) == 1 && p.writers != nil
	}

	share := e.memoryShare(nodes)
	g := flow.NewGraph()
	type vertexInfo struct {
		v     *flow.Vertex
		chain []*node
		outs  []outEdge
	}
	var vertices []*vertexInfo
	vertexOf := map[*node]*vertexInfo{}
	for _, n := range nodes {
		if chained(n) {
			vi := vertexOf[n.inputs[0]]
			if vi == nil {
				return nil, fmt.Errorf("dataset: internal error: %s reads %s, which does not run with it", n.name(), n.inputs[0].name())
			}
			vi.chain = append(vi.chain, n)
			vertexOf[n] = vi
			continue
		}
		if n.run == nil {
			return nil, fmt.Errorf("dataset: internal error: %s cannot head a task", n.name())
		}
		vi := &vertexInfo{chain: []*node{n}}
		vertexOf[n] = vi
		vertices = append(vertices, vi)
	}
	for i, vi := range vertices { // flow reports metrics per vertex in this order
		for _, n := range vi.chain {
			n.vertex = i
		}
	}
	// every subtask of an iteration's tasks is a party of its barrier (party
	// first[v] + subtask); those and the subtasks of its result share its
	// storage
	parties, users := map[*loop]int{}, map[*loop]int{}
	first := make([]int, len(vertices))
	for v, vi := range vertices {
		h := vi.chain[0]
		if h.loop != nil && h.role != notInLoop {
			first[v] = parties[h.loop]
			parties[h.loop] += h.opt.Parallelism
			users[h.loop] += h.opt.Parallelism
		}
		if h.resultOf != nil {
			users[h.resultOf] += h.opt.Parallelism
		}
	}
	for lp, n := range users {
		lp.start(parties[lp], n)
	}
	for v, vi := range vertices {
		names := make([]string, len(vi.chain))
		for i, n := range vi.chain {
			names[i] = n.name()
		}
		head := vi.chain[0]
		vi.v = g.Vertex(strings.Join(names, " -> "), head.opt.Parallelism, func(ftc *flow.TaskContext) error {
			tc := &task{TaskContext: ftc, memShare: share}
			run := func() error {
				tail := vi.chain[len(vi.chain)-1]
				var out any
				if tail.writers != nil {
					var err error
					if out, err = tail.writers(tc, vi.outs); err != nil {
						return err
					}
				}
				out = counted(tail, out)
				for i := len(vi.chain) - 1; i >= 1; i-- {
					var err error
					if out, err = vi.chain[i].wrap(tc, out); err != nil {
						return err
					}
					out = counted(vi.chain[i-1], out)
				}
				return head.run(tc, out)
			}
			if lp := head.resultOf; lp != nil {
				ftc.OnEnd(lp.it.Exit)
			}
			if lp := head.loop; lp != nil && head.role != notInLoop {
				ftc.OnEnd(lp.it.Exit)
				tc.loop = lp
				return lp.runTask(tc, head, first[v]+ftc.Subtask, run)
			}
			return run()
		})
	}
	for _, vi := range vertices {
		head := vi.chain[0]
		for i, in := range head.inputs {
			from := vertexOf[in]
			if from == nil {
				return nil, fmt.Errorf("dataset: internal error: %s reads %s, which does not run with it", head.name(), in.name())
			}
			if from.chain[len(from.chain)-1] != in {
				return nil, fmt.Errorf("dataset: internal error: %s is not the last operator of its task", in.name())
			}
			head.connect[i](g, from.v, vi.v, head.opt.Decision.Ship[i], head.opt.Decision.Exchange[i])
			from.outs = append(from.outs, outEdge{consumer: head, input: i})
		}
	}
	return g, nil
}

// counted wraps out, the collector of n's output, so that it counts the
// records n emits (see node.count).
func counted(n *node, out any) any {
	if out == nil || n.count == nil {
		return out
	}
	return n.count(out)
}

// memoryShare splits the memory budget evenly between the subtasks of the
// nodes' operators that hold managed memory (sorts, hash tables, combiners), as Flink
// gives each operator a fraction of the managed memory, so that one operator
// cannot starve the next one in its pipeline.
func (e *Env) memoryShare(nodes []*node) int64 {
	if e.opts.Memory <= 0 {
		return 0
	}
	var users int64
	for _, n := range nodes {
		d := n.opt.Decision
		if d.Local != optimizer.NoLocal {
			users += int64(n.opt.Parallelism)
		}
		if d.Combine {
			for _, in := range n.inputs {
				users += int64(in.opt.Parallelism)
			}
		}
	}
	if users == 0 {
		return 0
	}
	return e.opts.Memory / users
}
