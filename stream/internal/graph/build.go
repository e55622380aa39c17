package graph

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
)

// Build is what a node's Build function makes its operator with: the
// subtask's runtime and what the attempt resolved for the node.
type Build struct {
	*task.Runtime
	Node *Node
	// MaxParallelism is the node's key groups (keyed nodes).
	MaxParallelism int
	// OperatorMaxParallelism is the operator's max parallelism as its
	// functions see it (Flink's getMaxNumberOfParallelSubtasks): the key
	// groups of a keyed node, else the node's, the job's or the default
	// for its parallelism.
	OperatorMaxParallelism int
	// Metrics is the operator's user metric group in this subtask, scoped
	// <operator>.<subtask>: registered with the task's metrics in a job.
	Metrics *metrics.Group
	// Enumerator is a source's split enumerator.
	Enumerator source.Enumerator
	// Aligner is an aligned source's coordinator of watermark alignment
	// (nil: the source does not align).
	Aligner task.Aligner
	// Feedback is the feedback queue of an iteration's head or tail.
	Feedback task.FeedbackQueue
}

// Job is a program translated for one attempt: its flow graph, and its
// sources' enumerators and watermark alignments by stable id (each
// enumerator in its valve under checkpoints; none when Options.Splits
// serves them).
type Job struct {
	Graph       *flow.Graph
	Enumerators map[string]source.Enumerator
	Aligners    map[string]*coordinator.SourceAlignment
}

// attempt is what one attempt's subtasks share.
type attempt struct {
	r      *Resolved
	assign *coordinator.Assignment
	coord  protocol.Coordinator
	number int
	enums  map[*Node]source.Enumerator
	align  map[*Node]*coordinator.SourceAlignment
	// remoteAlign: the alignments whose coordinator runs elsewhere
	remoteAlign map[*Node]task.Aligner
	queues      map[*Iteration][]task.FeedbackQueue
}

// Translate builds attempt number's flow graph: a vertex per task, whose
// subtasks open from the assignment (nil: none) and talk to the checkpoint
// coordinator coord (nil without checkpoints). A source's enumerator
// starts from its restored state; under checkpoints it is wrapped in a
// coordinator.Valve, which the topology's operator then holds. The
// attempt's aligned sources share one coordinator.Alignment, beside their
// enumerators.
func Translate(r *Resolved, a *coordinator.Assignment, coord protocol.Coordinator, number int) (*Job, error) {
	at := &attempt{r: r, assign: a, coord: coord, number: number, enums: map[*Node]source.Enumerator{},
		align: map[*Node]*coordinator.SourceAlignment{}, remoteAlign: map[*Node]task.Aligner{}, queues: map[*Iteration][]task.FeedbackQueue{}}
	var aligned *coordinator.Alignment
	r.Topology.Attempt = number
	for _, it := range r.Program.Iterations {
		qs := make([]task.FeedbackQueue, r.Par[it.Head])
		for i := range qs {
			qs[i] = it.Queue(i)
		}
		at.queues[it] = qs
	}
	for _, n := range r.Program.Nodes {
		if n.Reset != nil {
			n.Reset(r.Opts.local(r.Par[n]))
		}
		if n.Enumerator == nil {
			continue
		}
		if r.Opts.Splits != nil { // the enumerator runs in another process, and the alignment
			at.enums[n] = r.Opts.Splits(r.IDs[n])
			if al := n.Align; al != nil && !r.Batch && r.Opts.Aligners != nil {
				at.remoteAlign[n] = r.Opts.Aligners(r.IDs[n], al.UpdateInterval)
			}
			continue
		}
		if al := n.Align; al != nil && !r.Batch {
			if aligned == nil {
				aligned = coordinator.NewAlignment(r.Opts.Clock)
			}
			at.align[n] = aligned.Source(r.IDs[n], al.Group, al.MaxDrift, al.UpdateInterval)
		}
		e, err := n.Enumerator(r.Par[n], a.Enumerator(r.IDs[n]))
		if err != nil {
			return nil, fmt.Errorf("stream: %s: %w", n.Name, err)
		}
		if coord != nil {
			v := coordinator.NewValve(e, r.Par[n])
			for i := range r.Topology.Operators {
				if r.Topology.Operators[i].ID == r.IDs[n] {
					r.Topology.Operators[i].Valve = v
				}
			}
			e = v
		}
		at.enums[n] = e
	}
	g := flow.NewGraph()
	for _, tp := range r.Tasks {
		tp.vertex = g.Vertex(tp.Head.Name, r.Par[tp.Head], at.body(tp))
	}
	for _, tp := range r.Tasks {
		for _, e := range tp.Inputs {
			from := r.taskOf[e.From]
			custom := e.Part.Custom
			if err := e.From.Ports[e.Port].connect(g, from.vertex, tp.vertex, r.Part[e], custom, r.MaxP[e.To], r.Par[e.To], r.Opts.Codecs); err != nil {
				return nil, err
			}
		}
	}
	enums, aligners := map[string]source.Enumerator{}, map[string]*coordinator.SourceAlignment{}
	if r.Opts.Splits == nil {
		for n, e := range at.enums {
			enums[r.IDs[n]] = e
		}
		for n, a := range at.align {
			aligners[r.IDs[n]] = a
		}
	}
	return &Job{Graph: g, Enumerators: enums, Aligners: aligners}, nil
}

// config is the task configuration of subtask i of tp.
func (at *attempt) config(tp *TaskPlan, i int) task.Config {
	r := at.r
	o := r.Opts
	cfg := task.Config{Job: o.Job, Attempt: at.number, Vertex: r.IDs[tp.Head], Name: tp.Head.Name, Batch: r.Batch,
		BatchSize: o.BatchSize, Clock: o.Clock, AutoWatermarkInterval: o.AutoWatermarkInterval, SourceRate: o.SourceRate,
		StateBackend: o.StateBackend, TmpDir: o.TmpDir, Restore: at.assign.Task(r.IDs[tp.Head], i)}
	if r.Batch {
		cfg.StateBackend = task.HeapBackend // one key's state at a time, as Flink's batch state backend
	}
	if c := o.Checkpoints; c != nil && at.coord != nil && !r.Batch {
		tc := &task.Checkpoints{Coordinator: at.coord, AtLeastOnce: c.AtLeastOnce, Unaligned: c.Unaligned,
			AlignedTimeout: c.AlignedTimeout}
		tc.Shared, _ = c.Storage.(state.SharedFiles)
		tc.Incremental = o.Incremental && tc.Shared != nil
		cfg.Checkpoints = tc
	}
	return cfg
}

// body returns the vertex body of tp: it builds the subtask's chain and
// runs it.
func (at *attempt) body(tp *TaskPlan) func(tc *flow.TaskContext) error {
	return func(tc *flow.TaskContext) error {
		rt := task.New(tc, at.config(tp, tc.Subtask), 0, 0, nil)
		c := &Chain{r: at.r, rt: rt, tc: tc, tp: tp, at: at}
		ins, err := c.build(tp.Head)
		if err != nil {
			return errorsJoin(err, rt.Close())
		}
		in, err := c.input(ins)
		if err != nil {
			return errorsJoin(err, rt.Close())
		}
		return rt.Run(in)
	}
}

// Chain builds the operators of one subtask's chain into its runtime.
type Chain struct {
	r  *Resolved
	rt *task.Runtime
	tc *flow.TaskContext
	tp *TaskPlan
	at *attempt
	// a test harness: every edge chained, the output of node capture
	// captured
	all     bool
	capture *Node
	out     any
	events  task.Eventer
	// groups are the operators' user metric groups, in build order
	groups []*metrics.Group
}

// Metrics returns the user metric groups of the chain's operators, head
// first.
func (c *Chain) Metrics() []*metrics.Group { return c.groups }

// Harness returns the chain of a test harness: every edge of the nodes
// after the harness's inputs chained into rt, the main output of last
// captured by out (a core.Output of its type) and events.
func Harness(r *Resolved, rt *task.Runtime, last *Node, out any, events task.Eventer) *Chain {
	return &Chain{r: r, rt: rt, all: true, capture: last, out: out, events: events}
}

// Build builds n and the nodes after it; it returns n's inputs.
func (c *Chain) Build(n *Node) ([]any, error) { return c.build(n) }

// build makes the operators of n and of the nodes chained after it; it
// returns n's inputs.
func (c *Chain) build(n *Node) ([]any, error) {
	counters := c.rt.Counters(n.Name)
	group := metrics.NewGroup(c.rt.Clock(), n.Name, strconv.Itoa(c.rt.Subtask()))
	if counters != nil {
		counters.SetMetrics(group)
	}
	c.groups = append(c.groups, group)
	c.rt.AddMetrics(group)
	outs := map[string]any{}
	for _, name := range n.Order {
		pt := n.Ports[name]
		var list []any
		for _, e := range pt.Consumers {
			if c.all || c.r.Chained(e) {
				ins, err := c.build(e.To)
				if err != nil {
					return nil, err
				}
				list = append(list, ins[slices.Index(e.To.Inputs, e)])
				continue
			}
			w := pt.writer(c.tc, c.tp.out[e])
			c.rt.AddOutput(w, c.edge(e))
			list = append(list, w)
		}
		if name == "" && c.capture == n {
			list = append(list, c.out)
			c.rt.AddEventer(c.events)
		}
		if len(list) > 0 {
			outs[name] = pt.fanout(list)
			if counters != nil {
				outs[name] = pt.count(outs[name], counters, false)
			}
		}
	}
	b := &Build{Runtime: c.rt, Node: n, MaxParallelism: c.r.MaxP[n], OperatorMaxParallelism: c.r.OperatorMaxParallelism(n),
		Metrics: group}
	if c.at != nil {
		b.Enumerator = c.at.enums[n]
		if sa := c.at.align[n]; sa != nil {
			b.Aligner = sa
		} else if ra := c.at.remoteAlign[n]; ra != nil {
			b.Aligner = ra
		}
		if it := n.Iter; it != nil {
			b.Feedback = c.at.queues[it][c.rt.Subtask()]
		}
		for _, it := range c.r.Program.Iterations {
			if it.Tail == n {
				b.Feedback = c.at.queues[it][c.rt.Subtask()]
			}
		}
	}
	if n.Build == nil {
		return nil, fmt.Errorf("stream: %s: the operator cannot run", n.Name)
	}
	ins, op, err := n.Build(b, outs)
	if err != nil {
		return nil, fmt.Errorf("stream: %s: %w", n.Name, err)
	}
	if counters != nil {
		for i, e := range n.Inputs {
			if i < len(ins) {
				ins[i] = e.From.Ports[e.Port].count(ins[i], counters, true)
			}
		}
	}
	c.rt.AddOperator(op, c.r.IDs[n], n.Name)
	return ins, nil
}

// edge describes network edge e for the task runtime.
func (c *Chain) edge(e *Edge) task.Edge {
	return task.Edge{Key: c.r.EdgeKey(e), Producers: c.r.Par[e.From], Consumers: c.r.Par[e.To],
		Broadcast: c.r.Part[e] == PartBroadcast, From: e.From.Name, To: e.To.Name}
}

// input returns the input of the chain's task: its source, or its network
// inputs through the gate, with an iteration head's feedback.
func (c *Chain) input(ins []any) (task.Input, error) {
	head := c.tp.Head
	ops := c.rt.Operators()
	if head.Source {
		in, ok := ops[len(ops)-1].(task.Input)
		if !ok {
			return nil, fmt.Errorf("stream: %s: a source's operator reads no input", head.Name)
		}
		return in, nil
	}
	net := make([]task.NetworkInput, len(c.tp.Inputs))
	for i, e := range c.tp.Inputs {
		net[i] = e.From.Ports[e.Port].network(c.tc, i, ins[slices.Index(head.Inputs, e)], c.edge(e))
	}
	if it := head.Iter; it != nil {
		h, ok := ops[len(ops)-1].(interface{ Head() *task.Head })
		if !ok {
			return nil, fmt.Errorf("stream: %s: the iteration head's operator is not one", head.Name)
		}
		return task.Iteration(net, h.Head(), it.MaxWait), nil
	}
	return task.Gate(net), nil
}

func errorsJoin(err, cerr error) error {
	if cerr != nil {
		return fmt.Errorf("%w (and closing: %v)", err, cerr)
	}
	return err
}
