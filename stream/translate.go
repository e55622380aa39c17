package stream

import (
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/state"
)

// program is a translated job.
type program struct {
	env   *Env
	graph *flow.Graph
	batch bool
	tasks map[*node]*taskPlan
	// feedback holds each iteration's queues, one per head subtask
	feedback map[*iteration][]feedbackQueue
	out      map[*edge]int // a network edge's output index in its producer's task
	in       map[*edge]int // and its input index in its consumer's task
	coord    *coordinator  // the checkpoint coordinator, nil without checkpoints
}

// taskPlan is one vertex: a head node and the nodes chained to it.
type taskPlan struct {
	head   *node
	vertex *flow.Vertex
	nIn    int
	nOut   int
	inputs []*edge // network inputs in input order
}

// chained says whether e's consumer runs in its producer's task, as Flink
// chains: a forward edge between equal parallelisms into a one-input
// operator.
func chained(e *edge) bool {
	return e.part.kind == partForward && len(e.to.inputs) == 1 && !e.to.source && e.to.iter == nil
}

// translate resolves parallelisms and partitionings and builds the graph:
// one vertex per chain, its operators restored from snap (found at where)
// when it is not nil, and a checkpoint coordinator when the job
// checkpoints.
func (e *Env) translate(snap *checkpoint.Snapshot, where string) (*program, error) {
	p := &program{env: e, graph: flow.NewGraph(), tasks: map[*node]*taskPlan{}, out: map[*edge]int{}, in: map[*edge]int{}}
	if err := e.resolve(); err != nil {
		return nil, err
	}
	batch, err := e.batchMode()
	if err != nil {
		return nil, err
	}
	p.batch = batch
	if p.batch && len(e.iterations) > 0 {
		return nil, fmt.Errorf("stream: iterations are not supported in BATCH execution mode: run the program in STREAMING mode")
	}
	if snap != nil {
		if e.restore, err = e.buildRestore(snap, where, e.opts.AllowNonRestoredState); err != nil {
			return nil, err
		}
	}
	if e.ck != nil && !p.batch && len(e.iterations) > 0 {
		return nil, fmt.Errorf("stream: Checkpointing is currently not supported for iterative jobs, as we cannot guarantee exactly once semantics")
	}
	p.feedback = map[*iteration][]feedbackQueue{}
	for _, it := range e.iterations {
		p.feedback[it] = it.queues(it.head.parallelism)
	}
	for _, n := range e.nodes {
		if len(n.inputs) == 1 && chained(n.inputs[0]) {
			continue
		}
		tp := &taskPlan{head: n}
		p.tasks[n] = tp
		tp.vertex = p.graph.Vertex(n.name, n.parallelism, p.body(tp))
	}
	for _, n := range e.nodes {
		for _, in := range n.inputs {
			if chained(in) {
				continue
			}
			from, to := p.taskOf(in.from), p.tasks[n]
			if err := in.from.ports[in.port].connect(p.graph, from.vertex, to.vertex, in); err != nil {
				return nil, err
			}
			p.out[in], p.in[in] = from.nOut, to.nIn
			from.nOut++
			to.nIn++
			to.inputs = append(to.inputs, in)
		}
	}
	for _, n := range e.nodes {
		if n.prepare != nil {
			if err := n.prepare(n.parallelism); err != nil {
				return nil, fmt.Errorf("stream: %s: %w", n.name, err)
			}
		}
	}
	return p, nil
}

// batchMode says whether the job runs in BATCH mode: asked for, or
// Automatic with every source bounded.
func (e *Env) batchMode() (bool, error) {
	bounded := true
	for _, n := range e.nodes {
		if n.source && !n.bounded {
			bounded = false
		}
	}
	switch e.opts.Mode {
	case Batch:
		if !bounded {
			return false, fmt.Errorf("stream: BATCH mode needs bounded sources")
		}
		return true, nil
	case Automatic:
		return bounded, nil
	}
	return false, nil
}

// resolve sets every node's parallelism and key groups and every edge's
// partitioning.
func (e *Env) resolve() error {
	for _, n := range e.nodes {
		if n.parallelism == 0 {
			n.parallelism = e.opts.Parallelism
		}
		if n.keyed {
			n.maxP = e.opts.MaxParallelism
			if n.maxP == 0 {
				mp, err := state.DefaultMaxParallelism(n.parallelism)
				if err != nil {
					return fmt.Errorf("stream: %s: %w", n.name, err)
				}
				n.maxP = mp
			}
			if n.maxP < n.parallelism {
				return fmt.Errorf("stream: %s: parallelism %d above max parallelism %d", n.name, n.parallelism, n.maxP)
			}
		}
	}
	for _, it := range e.iterations {
		if it.tail == nil {
			return fmt.Errorf("stream: the iteration of %s has no feedback: call CloseWith", it.head.inputs[0].from.name)
		}
		fb := it.tail.inputs[0].from
		it.tail.parallelism = fb.parallelism
		if fb.parallelism != it.head.parallelism {
			return fmt.Errorf("stream: parallelism of the feedback stream (%s, %d) must match the parallelism of the original stream (%d)", fb.name, fb.parallelism, it.head.parallelism)
		}
	}
	for _, n := range e.nodes {
		for _, in := range n.inputs {
			switch {
			case in.part.kind == partDefault && in.from.parallelism == n.parallelism:
				in.part.kind = partForward
			case in.part.kind == partDefault:
				in.part.kind = partRebalance
			case in.part.kind == partForward && in.from.parallelism != n.parallelism:
				return fmt.Errorf("stream: forward edge %s -> %s between parallelisms %d and %d", in.from.name, n.name, in.from.parallelism, n.parallelism)
			}
		}
	}
	return nil
}

// taskOf returns the task n runs in.
func (p *program) taskOf(n *node) *taskPlan {
	for {
		if tp, ok := p.tasks[n]; ok {
			return tp
		}
		n = n.inputs[0].from
	}
}
