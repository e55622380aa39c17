package stream

import (
	"fmt"

	"github.com/weirdata/weir/flow"
)

// node is a transformation of the program: a source, an operator or a
// sink, with its inputs (edges from ports of other nodes) and its output
// ports ("" the main output, a side output's tag id the others).
type node struct {
	env         *Env
	id          int
	name        string
	uid         string // set by UID: the source of the stable id
	parallelism int    // 0: the Env's
	maxP        int    // key groups of a keyed node, set by translate
	keyed       bool
	inputs      []*edge
	ports       map[string]*port
	order       []string // port names in creation order
	source      bool
	bounded     bool        // a bounded source
	iter        *iteration  // the head of a stream iteration
	valve       *splitValve // a source's enumerator under checkpoints
	// prepare runs once per execution before the job starts (a source's
	// enumerator).
	prepare func(parallelism int) error
	// build makes one subtask's operator: outs holds, per port with
	// consumers, an output[O] of the port's type; it returns the operator
	// and, per input, the output[I] that feeds it.
	build func(rt *taskRuntime, outs map[string]any) (ins []any, op operator, err error)
	// finalize, on a sink that commits at the end of input (FileSink),
	// returns what its subtasks left to commit when the input of a
	// checkpointing job ended, encoded for the final snapshot (nil: none),
	// and the commit (see Job.storeFinished).
	finalize func() (state []byte, commit func() error, err error)
	// commitFinal commits what the final snapshot holds of the sink: a
	// restore that finds the job finished (its process may have died before
	// the commit).
	commitFinal func(state []byte) error
}

// edge connects a port of one node to an input of another.
type edge struct {
	from *node
	port string
	to   *node
	part partitioning
}

// partKind is how an edge distributes records.
type partKind uint8

const (
	partDefault partKind = iota // forward at equal parallelism, else rebalance
	partForward
	partRebalance
	partBroadcast
	partShuffle
	partKeyed
)

// partitioning is an edge's distribution; custom is the
// func(*Record[T], n int) int of shuffle edges, and the maker of one,
// func() func(*Record[T], n int) int, of keyed edges.
type partitioning struct {
	kind   partKind
	custom any
}

// port is one output of a node, typed by the closures newPort made.
type port struct {
	consumers []*edge
	fanout    func(outs []any) any
	writer    func(tc *flow.TaskContext, i int) (any, eventer)
	connect   func(g *flow.Graph, from, to *flow.Vertex, e *edge) error
	pump      func(tc *flow.TaskContext, i int, target any) func() error
	// capture returns the encoder that appends input i's current batch to
	// a channel state (unaligned checkpoints)
	capture func(tc *flow.TaskContext, i int) (func(dst []byte) ([]byte, error), error)
	emitter func(out any, size int) any // an *emitter[T] into out, an output[T]
	// count wraps an output[T] so that every batch pushed through it adds
	// to c: to its records in (an operator's input) or out.
	count func(out any, c *flow.OperatorCounters, in bool) any
}

// eventer sends events over a network edge.
type eventer interface{ event(e flow.Event) error }

// newPort returns a port of records of type T.
func newPort[T any]() *port {
	return &port{
		fanout: func(outs []any) any {
			if len(outs) == 1 {
				return outs[0]
			}
			f := make(fanout[T], len(outs))
			for i, o := range outs {
				f[i] = o.(output[T])
			}
			return f
		},
		writer: func(tc *flow.TaskContext, i int) (any, eventer) {
			w := writerOut[T]{flow.Output[Record[T]](tc, i)}
			return w, w
		},
		connect: func(g *flow.Graph, from, to *flow.Vertex, e *edge) error {
			var p flow.Partitioner[Record[T]]
			switch e.part.kind {
			case partForward:
				p.Strategy = flow.Forward
			case partRebalance:
				p.Strategy = flow.Rebalance
			case partBroadcast:
				p.Strategy = flow.Broadcast
			case partShuffle, partKeyed:
				p.Strategy = flow.Custom
				switch c := e.part.custom.(type) {
				case func(*Record[T], int) int:
					p.Custom = c
				case func() func(*Record[T], int) int: // made once the parallelisms are known
					p.Custom = c()
				case func() customPart[T]:
					cp := c()
					p.Custom, p.CustomBatch = cp.one, cp.batch
				}
			default:
				return fmt.Errorf("stream: edge %s -> %s: partitioning %d unresolved", e.from.name, e.to.name, e.part.kind)
			}
			flow.Connect(g, from, to, p, flow.Pipelined, nil)
			return nil
		},
		emitter: func(out any, size int) any { return newEmitter(out.(output[T]), size) },
		count: func(out any, c *flow.OperatorCounters, in bool) any {
			if in {
				return countIn[T]{out.(output[T]), c}
			}
			return countOut[T]{out.(output[T]), c}
		},
		pump: func(tc *flow.TaskContext, i int, target any) func() error {
			r, out := flow.Input[Record[T]](tc, i), target.(output[T])
			return func() error { return out.push(r.Batch()) }
		},
		capture: func(tc *flow.TaskContext, i int) (func([]byte) ([]byte, error), error) {
			codec, err := recordCodec[T]()
			if err != nil {
				return nil, err
			}
			r := flow.Input[Record[T]](tc, i)
			return func(dst []byte) ([]byte, error) { return appendRecords(codec, dst, r.Batch()), nil }, nil
		},
	}
}

// addNode adds a node reading the given edges' sources, with a main port
// of records of type O.
func addNode[O any](e *Env, name string, ins ...*edge) *node {
	n := &node{env: e, id: len(e.nodes), name: name, ports: map[string]*port{}}
	n.ports[""] = newPort[O]()
	n.order = []string{""}
	for _, in := range ins {
		in.to = n
		n.inputs = append(n.inputs, in)
		in.from.ports[in.port].consumers = append(in.from.ports[in.port].consumers, in)
	}
	e.nodes = append(e.nodes, n)
	return n
}

// sidePort returns the node's port for side output id, creating it.
func sidePort[T any](n *node, id string) {
	if _, ok := n.ports[id]; ok {
		return
	}
	n.ports[id] = newPort[T]()
	n.order = append(n.order, id)
}
