package dataset

import (
	"fmt"
	"sync/atomic"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
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

// node is one operator of a program, untyped: its typed behaviour lives in the
// closures its constructor sets, each of which asserts its types once per task.
type node struct {
	env    *Env
	opt    optimizer.Node
	inputs []*node

	// wrap (chainable nodes) turns the collector of the node's output
	// (collector[Out]) into the collector of its input (collector[In]).
	wrap func(tc *task, next any) (any, error)
	// run (every other node) drives the node in a task: it reads the task's
	// inputs and pushes its output into out (collector[Out]), then closes out.
	run func(tc *task, out any) error
	// connect[i] adds the flow edge for input i from the producer's vertex.
	connect []func(g *flow.Graph, from, to *flow.Vertex, ship optimizer.Ship, ex optimizer.Exchange)
	// combine[i], when set, wraps the producer-side collector of input i's edge
	// (collector[In]) with a combiner; it is used when the planner says Combine.
	combine []func(tc *task, next any) (any, error)
	// writers builds, in a producer's task, the collector[Out] that sends the
	// node's output over the vertex's outputs: one edge per consumer.
	writers func(tc *task, edges []outEdge) (any, error)
	// reset prepares per-execution state; done publishes results after success.
	reset func()
	done  func()
	// commit (sinks with two-phase output, Output) publishes what the node's
	// tasks wrote, once flow.Execute succeeded; abort takes back this
	// execution's output on failure: it aborts what is not committed and
	// removes what is (best effort), returning what it could not remove.
	commit func() error
	abort  func() error

	// Annotations and facts the optimizer's model is derived from each time
	// the program is planned (see node.model): forwards are the fields the
	// user declared with Forwards; keysOf, when set, is the node whose named
	// key fields this node forwards from input 0 (a Reduce keeps its key);
	// desc holds a Sort's direction per key part.
	forwards []string
	keysOf   *node
	desc     []bool

	// count, set for nodes with an output, wraps a collector of the node's
	// output (collector[Out]) so that it adds every batch's length to rows:
	// the records the node emitted in this execution (sinks add what they
	// received). vertex is the index of the node's flow vertex. variants
	// are the physical variants its subtasks ran (variant.go).
	count    func(next any) any
	rows     atomic.Int64
	variants variants
	vertex   int
	// planned is the plan's node this execution runs n as (see bind): the
	// decisions and the parallelism the operator reads. opt is the
	// program's model, which planning never changes.
	planned *optimizer.Node

	// adapt, set for nodes with an output, builds the typed parts of adaptive
	// execution over the node's output records (see adaptive.go).
	adapt *adaptOps

	// Iterations (loop.go): the loop the node is part of and its role there;
	// loopDelta marks a delta iteration's delta tail. replayer holds, per
	// loop, the node that replays this node's output (a loop-invariant input)
	// every superstep; newReplayer makes one (typed by the output).
	loop     *loop
	role     loopRole
	resultOf *loop // an iteration's result source
	// canCache (joins) says whether a loop-invariant input i can be kept as an
	// index across supersteps instead of replayed; cached and cacheInput are
	// set by loop.seal when it is.
	canCache    func(input int) bool
	cached      bool
	cacheInput  int
	loopDelta   bool
	replayer    map[*loop]*node
	newReplayer func(lp *loop) *node
}

func (n *node) name() string { return n.opt.Name }

// outEdge is one output of a vertex: the consumer and which of its inputs it is.
type outEdge struct {
	consumer *node
	input    int
}

// newNode adds a node to the program.
func (e *Env) newNode(kind optimizer.OpKind, name string, inputs ...*node) *node {
	n := &node{env: e, inputs: inputs, reset: func() {}}
	n.opt = optimizer.Node{ID: len(e.nodes), Name: name, Kind: kind, Parallelism: e.opts.Parallelism,
		EstimatedRows: -1, EstimatedBytes: -1}
	n.opt.Keyed = make([]bool, len(inputs))
	n.opt.KeyTypes = make([]string, len(inputs))
	n.opt.Ordered = make([]bool, len(inputs))
	n.connect = make([]func(*flow.Graph, *flow.Vertex, *flow.Vertex, optimizer.Ship, optimizer.Exchange), len(inputs))
	n.combine = make([]func(*task, any) (any, error), len(inputs))
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
	n.adapt = newAdaptOps[T](n)
	n.newReplayer = func(lp *loop) *node { return newReplayer[T](lp, n) }
	n.count = func(next any) any {
		c, ok := next.(collector[T])
		if !ok {
			return next // asCollector reports the mismatch
		}
		return &countingCollector[T]{collector: c, rows: &n.rows}
	}
	n.writers = func(tc *task, edges []outEdge) (any, error) {
		fan := &fanout[T]{}
		for j, oe := range edges {
			var c collector[T] = &writerCollector[T]{w: flow.Output[T](tc.TaskContext, j), tc: tc}
			if comb := oe.consumer.combine[oe.input]; comb != nil && oe.consumer.planned.Decision.Combine {
				wrapped, err := comb(tc, c)
				if err != nil {
					return nil, err
				}
				c = wrapped.(collector[T])
			}
			fan.outs = append(fan.outs, c)
		}
		return fan, nil
	}
	return &DataSet[T]{env: e, n: n}
}

// connectInput sets how input i of n (records of T from its producer) is
// connected for each ship strategy; hash and range use key.
func connectInput[T any](n *node, i int, k *keyer[T]) {
	n.connect[i] = func(g *flow.Graph, from, to *flow.Vertex, ship optimizer.Ship, ex optimizer.Exchange) {
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
}

// fanout sends every batch to each of a vertex's output collectors.
type fanout[T any] struct {
	flow.Plain
	outs []collector[T]
}

func (f *fanout[T]) Collect(b []T) error {
	for _, c := range f.outs {
		if err := c.Collect(b); err != nil {
			return err
		}
	}
	return nil
}

func (f *fanout[T]) End() error {
	for _, c := range f.outs {
		if err := c.End(); err != nil {
			return err
		}
	}
	return nil
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

// countingCollector counts the records of the batches it passes on (one
// atomic add per batch, no allocation). It has the capabilities of the
// collector it wraps; the records a raw sink takes are counted too.
type countingCollector[T any] struct {
	collector[T]
	rows *atomic.Int64
}

func (c *countingCollector[T]) Collect(b []T) error {
	c.rows.Add(int64(len(b)))
	return c.collector.Collect(b)
}

// Raw counts the records the wrapped collector's raw sink takes.
func (c *countingCollector[T]) Raw() flow.RawSink {
	r := c.collector.Raw()
	if r == nil {
		return nil
	}
	return countingRaw{r, c.rows}
}

type countingRaw struct {
	flow.RawSink
	rows *atomic.Int64
}

func (c countingRaw) Written(n int64) {
	c.rows.Add(n)
	c.RawSink.Written(n)
}

// asCollector asserts a chain link's type, once per task.
func asCollector[T any](n *node, x any) (collector[T], error) {
	c, ok := x.(collector[T])
	if !ok {
		return nil, fmt.Errorf("dataset: %s: internal error: output collector is %T", n.name(), x)
	}
	return c, nil
}

// WithParallelism sets the number of subtasks of the operator that produces ds
// (Flink's setParallelism); call it right after creating ds, before using it.
// Record-at-a-time operators and sinks made from ds afterwards inherit it.
func (ds *DataSet[T]) WithParallelism(p int) *DataSet[T] {
	if p <= 0 {
		ds.env.fail("WithParallelism at "+caller(1), fmt.Errorf("parallelism %d: want at least 1", p))
		return ds
	}
	ds.n.opt.Parallelism = p
	return ds
}
