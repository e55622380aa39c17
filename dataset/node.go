package dataset

import (
	"fmt"
	"sync/atomic"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
)

// DataSet is a distributed collection of values of type T: the output of a
// source or a transformation, consumed by transformations and sinks.
type DataSet[T any] struct {
	env *Env
	n   *node
}

// Env returns the program the data set belongs to.
func (ds *DataSet[T]) Env() *Env { return ds.env }

// collector receives a chain's batches (flow.Collector): a batch is valid
// only during Collect; End is called once, after the last batch, on success.
type collector[T any] = flow.Collector[T]

// node is one operator of a program, untyped: its typed behaviour is its
// operator (operator.go), its typed inputs (in) and its typed output (out).
type node struct {
	env    *Env
	opt    optimizer.Node
	inputs []*node

	// op is what the node runs in its tasks and once per execution.
	op *operator
	// in[i] connects input i to its producer; out (nodes with an output)
	// writes, counts, replays and stores the node's output.
	in  []inPort
	out outPort

	// Annotations and facts the optimizer's model is derived from each time
	// the program is planned (see node.model): forwards are the fields the
	// user declared with Forwards; keysOf, when set, is the node whose named
	// key fields this node forwards from input 0 (a Reduce keeps its key);
	// desc holds a Sort's direction per key part.
	forwards []string
	keysOf   *node
	desc     []bool

	// rows counts the records the node emitted in this execution (sinks:
	// received; see outPort.count). vertex is the index of the node's flow
	// vertex. variants are the physical variants its subtasks ran
	// (variant.go).
	rows     atomic.Int64
	variants variants
	vertex   int
	// planned is the plan's node this execution runs n as (see bind): the
	// decisions and the parallelism the operator reads. opt is the
	// program's model, which planning never changes.
	planned *optimizer.Node

	// gathered marks a sink whose result the program reads in memory
	// (Collect, Count): spread over processes, each gathers all of it
	// (Spread).
	gathered bool

	// lm is the node's part in an iteration (loop.go), nil outside one.
	lm *loopMember
}

func (n *node) name() string { return n.opt.Name }

// parallelism is the subtasks n runs as in this execution: the plan's
// (which a spread execution changes for gathering sinks), or the model's
// before planning.
func (n *node) parallelism() int {
	if n.planned != nil {
		return n.planned.Parallelism
	}
	return n.opt.Parallelism
}

// outEdge is one output of a vertex: the consumer and which of its inputs it is.
type outEdge struct {
	consumer *node
	input    int
}

// newNode adds a node to the program.
func (e *Env) newNode(kind optimizer.OpKind, name string, inputs ...*node) *node {
	n := &node{env: e, inputs: inputs}
	n.opt = optimizer.Node{ID: len(e.nodes), Name: name, Kind: kind, Parallelism: e.opts.Parallelism,
		EstimatedRows: -1, EstimatedBytes: -1}
	n.opt.Keyed = make([]bool, len(inputs))
	n.opt.KeyTypes = make([]string, len(inputs))
	n.opt.Ordered = make([]bool, len(inputs))
	n.in = make([]inPort, len(inputs))
	if kind == optimizer.Map || kind == optimizer.Sink {
		// record-at-a-time operators and sinks keep their input's parallelism, so
		// they chain and keep the input's partitioning and order
		n.opt.Parallelism = inputs[0].opt.Parallelism
	}
	e.nodes = append(e.nodes, n)
	return n
}

// newDataSet adds a node producing T and returns its data set, setting up how
// the node's output is written to its consumers.
func newDataSet[T any](e *Env, n *node) *DataSet[T] {
	n.opt.RowBytes = rowBytes[T]()
	n.out = output[T]{n}
	return &DataSet[T]{env: e, n: n}
}

// outPort is the typed side of a node's output, for the untyped code that
// assembles tasks (translate), iterations (loop.go) and adaptive stages.
type outPort interface {
	// writers builds, in the node's task, the collector of its output that
	// sends it over the vertex's outputs: one edge per consumer, through
	// the consumer's combiner when the plan says Combine.
	writers(tc *task, edges []outEdge) (any, error)
	// count wraps a collector of the output so that it adds every batch's
	// length to the node's rows.
	count(next any) any
	// newReplayer makes the node that replays the output, a loop-invariant
	// input of lp, every superstep.
	newReplayer(lp *loop) *node
	// storable returns why the records cannot be stored (nil: they can);
	// materialize and replay return the sink that stores the output in st
	// and the source that emits it again, subtask by subtask (adaptive.go).
	storable() error
	materialize(st *store) *node
	replay(st *store) *node
}

// output is the outPort of a node producing T.
type output[T any] struct{ n *node }

func (o output[T]) count(next any) any {
	c, ok := next.(collector[T])
	if !ok {
		return next // typedOut reports the mismatch
	}
	return &flow.Counting[T]{Collector: c, Rows: &o.n.rows}
}

func (o output[T]) writers(tc *task, edges []outEdge) (any, error) {
	fan := &flow.Fanout[T]{}
	for j, oe := range edges {
		var c collector[T] = &writerCollector[T]{w: flow.Output[T](tc.TaskContext, j), tc: tc}
		if oe.consumer.planned.Decision.Combine {
			in, ok := oe.consumer.in[oe.input].(*input[T])
			if !ok {
				return nil, fmt.Errorf("internal error: %s reads %T", oe.consumer.name(), oe.consumer.in[oe.input])
			}
			if in.combine != nil {
				var err error
				if c, err = in.combine(tc, c); err != nil {
					return nil, err
				}
			}
		}
		fan.Outs = append(fan.Outs, c)
	}
	return fan, nil
}

func (o output[T]) newReplayer(lp *loop) *node { return newReplayer[T](lp, o.n) }

func (o output[T]) storable() error {
	_, err := memory.NewCodec[T]()
	return err
}

func (o output[T]) materialize(st *store) *node { return materializeNode[T](o.n, st) }
func (o output[T]) replay(st *store) *node      { return replayNode[T](o.n, st) }

// inPort connects one input of a node to its producer's vertex.
type inPort interface {
	connect(g *flow.Graph, from, to *flow.Vertex, ship optimizer.Ship, ex optimizer.Exchange)
}

// input is the inPort of an input of records of T: k keys the hash and
// range ship strategies; combine, when set, wraps the producer-side
// collector of the input's edge with a combiner, used when the planner says
// Combine.
type input[T any] struct {
	k       *keyer[T]
	combine func(tc *task, next collector[T]) (collector[T], error)
}

// connectInput sets how input i of n (records of T from its producer) is
// connected; hash and range use k.
func connectInput[T any](n *node, i int, k *keyer[T]) *input[T] {
	in := &input[T]{k: k}
	n.in[i] = in
	return in
}

// connect adds the flow edge for the input for a ship strategy.
func (in *input[T]) connect(g *flow.Graph, from, to *flow.Vertex, ship optimizer.Ship, ex optimizer.Exchange) {
	k := in.k
	var p flow.Partitioner[T]
	switch ship {
	case optimizer.Forward:
		p.Strategy = flow.Forward
	case optimizer.Hash:
		p.Strategy = flow.Hash
		p.Hash = k.Hash
	case optimizer.Range:
		p.Strategy = flow.Range
		p.Key = k.Append
		p.Bounds = k.Bounds
		p.View = k.Raw
	case optimizer.Broadcast:
		p.Strategy = flow.Broadcast
	case optimizer.Custom:
		p.Strategy = flow.Custom
		p.Custom = k.Custom
	default:
		p.Strategy = flow.Rebalance
	}
	mode := flow.Pipelined
	if ex == optimizer.Blocking {
		mode = flow.Blocking
	}
	flow.Connect[T](g, from, to, p, mode, typed.CodecOrNil[T]())
}

// writerCollector writes batches to a flow output; in an iteration's task its
// close ends the superstep with an EndOfSuperstep event. Flow closes the writer when
// the task's body returns.
type writerCollector[T any] struct {
	flow.Plain
	w  *flow.Writer[T]
	tc *task
}

func (c *writerCollector[T]) Collect(b []T) error { return c.w.EmitBatch(b) }

func (c *writerCollector[T]) End() error {
	if c.tc.loop != nil {
		return c.w.Event(flow.Event{Kind: flow.EndOfSuperstep, Value: int64(c.tc.step)})
	}
	return nil
}

// WithParallelism sets the number of subtasks of the operator that produces ds
// (Flink's setParallelism); call it right after creating ds, before using it.
// Record-at-a-time operators and sinks made from ds afterwards inherit it. It
// changes ds itself and returns it: a := ds.WithParallelism(2) changes ds too.
func (ds *DataSet[T]) WithParallelism(p int) *DataSet[T] {
	ds.env.withParallelism(ds.n, p)
	return ds
}

// withParallelism is WithParallelism's body, untyped: compiled once, not once per record type.
func (env *Env) withParallelism(n *node, p int) {
	if p <= 0 {
		env.fail("WithParallelism at "+caller(2), fmt.Errorf("parallelism %d: want at least 1", p))
		return
	}
	n.opt.Parallelism = p
}
