package graph

import (
	"fmt"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/source"
)

// Program is a DataStream program: its nodes in the order they were
// added (inputs before the nodes they feed), its iterations, and the
// errors found while building it.
type Program struct {
	Nodes      []*Node
	Iterations []*Iteration
	Errs       []error
}

// Fail records a build error with the caller's position.
func (p *Program) Fail(where string, err error) {
	p.Errs = append(p.Errs, fmt.Errorf("stream: %s: %w", where, err))
}

// Node is a transformation of the program: a source, an operator or a
// sink, with its inputs (edges from ports of other nodes) and its output
// ports ("" the main output, a side output's tag id the others). It is a
// builder: what a job resolves for it lives in Resolved.
type Node struct {
	Program *Program
	ID      int
	Name    string
	// Kind is what the node does ("Map", "KeyedProcess", "FileSink", ...):
	// part of its stable id, and checked against restored state.
	Kind string
	// UID is the user's stable id, when set.
	UID string
	// Parallelism is the node's, 0 for the job's default.
	Parallelism int
	// MaxParallelism is the key groups of a keyed node, 0 for the job's.
	MaxParallelism int
	Keyed          bool
	Inputs         []*Edge
	Ports          map[string]*Port
	Order          []string // port names in creation order
	Source         bool
	Sink           bool       // a sink: where results go
	Bounded        bool       // a bounded source
	Iter           *Iteration // the head of a stream iteration
	// Watermarks, on an operator that assigns timestamps and watermarks,
	// makes it head its task: its input is never chained to it, so that
	// the upstream watermarks reach it alone.
	Watermarks bool
	// Enumerator, on a source, makes its split enumerator for an attempt,
	// from the restored state (nil: none).
	Enumerator func(parallelism int, restored *source.EnumeratorState) (source.Enumerator, error)
	// Align, on a source whose watermark strategy aligns watermarks, is
	// its alignment group, maximal drift and update interval.
	Align *Alignment
	// Build makes one subtask's operator: outs holds, per port with
	// consumers, a core.Output of the port's type; it returns the operator
	// and, per input, the core.Output that feeds it.
	Build func(b *Build, outs map[string]any) (ins []any, op task.Operator, err error)
	// Finalize, on a sink that commits at the end of input (FileSink),
	// returns what its subtasks left to commit when the input of a
	// checkpointing job ended, encoded for the final snapshot (nil: none),
	// and the commit. Reset, when set, runs once per attempt before it
	// starts.
	Finalize func() (state []byte, commit func() error, err error)
	Reset    func(parallelism int)
	// CommitFinal commits what the final snapshot holds of the sink: a
	// restore that finds the job finished (its process may have died
	// before the commit).
	CommitFinal func(state []byte) error
}

// Alignment is a source's watermark alignment (watermark.Alignment).
type Alignment struct {
	Group          string
	MaxDrift       time.Duration
	UpdateInterval time.Duration
}

// Edge connects a port of one node to an input of another.
type Edge struct {
	From *Node
	Port string
	To   *Node
	Part Partitioning
}

// PartKind is how an edge distributes records.
type PartKind uint8

// The partitionings.
const (
	PartDefault PartKind = iota // forward at equal parallelism, else rebalance
	PartForward
	PartRebalance
	PartBroadcast
	PartShuffle
	PartKeyed
)

// String returns Flink's name of the partitioning.
func (k PartKind) String() string {
	switch k {
	case PartForward:
		return "FORWARD"
	case PartRebalance:
		return "REBALANCE"
	case PartBroadcast:
		return "BROADCAST"
	case PartShuffle:
		return "SHUFFLE"
	case PartKeyed:
		return "HASH"
	}
	return "DEFAULT"
}

// Partitioning is an edge's distribution; Custom is the
// func(*core.Record[T], n int) int of shuffle edges, and for keyed edges
// the maker of the partitioner, func(maxP, p int) CustomPart[T], called
// once the consumer's parallelism and key groups are resolved.
type Partitioning struct {
	Kind   PartKind
	Custom any
}

// Port is one output of a node, typed by the closures NewPort made.
type Port struct {
	Consumers []*Edge
	fanout    func(outs []any) any
	writer    func(tc *flow.TaskContext, i int) task.NetworkOutput
	connect   func(g *flow.Graph, from, to *flow.Vertex, kind PartKind, custom any, maxP, p int, codec bool) error
	network   func(tc *flow.TaskContext, i int, target any, e task.Edge) task.NetworkInput
	// Emitter returns a *core.Emitter[T] into out, a core.Output[T].
	Emitter func(out any, size int) any
	count   func(out any, c *flow.OperatorCounters, in bool) any
	// Capture returns a *core.Records[T], a capture of the port's records.
	Capture func() any
}

// NewPort returns a port of records of type T.
func NewPort[T any]() *Port {
	return &Port{
		fanout: func(outs []any) any {
			if len(outs) == 1 {
				return outs[0]
			}
			f := make(core.Fanout[T], len(outs))
			for i, o := range outs {
				f[i] = o.(core.Output[T])
			}
			return f
		},
		writer: func(tc *flow.TaskContext, i int) task.NetworkOutput { return task.NewWriter[T](tc, i) },
		connect: func(g *flow.Graph, from, to *flow.Vertex, kind PartKind, custom any, maxP, p int, codec bool) error {
			var pt flow.Partitioner[core.Record[T]]
			switch kind {
			case PartForward:
				pt.Strategy = flow.Forward
			case PartRebalance:
				pt.Strategy = flow.Rebalance
			case PartBroadcast:
				pt.Strategy = flow.Broadcast
			case PartShuffle, PartKeyed:
				pt.Strategy = flow.Custom
				switch c := custom.(type) {
				case func(*core.Record[T], int) int:
					pt.Custom = c
				case func(maxP, p int) CustomPart[T]:
					cp := c(maxP, p)
					pt.Custom, pt.CustomBatch = cp.One, cp.Batch
				default:
					return fmt.Errorf("stream: edge %s -> %s: partitioner %T", from.Name(), to.Name(), custom)
				}
			default:
				return fmt.Errorf("stream: edge %s -> %s: partitioning %d unresolved", from.Name(), to.Name(), kind)
			}
			var c *memory.Codec[core.Record[T]]
			if codec {
				// a record type without a codec fails the job only on an
				// edge that crosses processes (flow names it)
				c, _ = core.RecordCodec[T]()
			}
			flow.Connect(g, from, to, pt, flow.Pipelined, c)
			return nil
		},
		network: func(tc *flow.TaskContext, i int, target any, e task.Edge) task.NetworkInput {
			return task.Network[T](tc, i, target.(core.Output[T]), e)
		},
		Emitter: func(out any, size int) any { return core.NewEmitter(out.(core.Output[T]), size) },
		count: func(out any, c *flow.OperatorCounters, in bool) any {
			if in {
				return core.CountIn[T]{Out: out.(core.Output[T]), C: c}
			}
			return core.CountOut[T]{Out: out.(core.Output[T]), C: c}
		},
		Capture: func() any { return &core.Records[T]{} },
	}
}

// AddNode adds a node of kind reading the given edges' sources, with a
// main port of records of type O.
func AddNode[O any](p *Program, name, kind string, ins ...*Edge) *Node {
	n := &Node{Program: p, ID: len(p.Nodes), Name: name, Kind: kind, Ports: map[string]*Port{}}
	n.Ports[""] = NewPort[O]()
	n.Order = []string{""}
	for _, in := range ins {
		in.To = n
		n.Inputs = append(n.Inputs, in)
		in.From.Ports[in.Port].Consumers = append(in.From.Ports[in.Port].Consumers, in)
	}
	p.Nodes = append(p.Nodes, n)
	return n
}

// SidePort adds the node's port for side output id, of records of type
// T, unless it has it.
func SidePort[T any](n *Node, id string) {
	if _, ok := n.Ports[id]; ok {
		return
	}
	n.Ports[id] = NewPort[T]()
	n.Order = append(n.Order, id)
}

// Iteration is one feedback loop: its head and tail nodes and the maximal
// wait of the head.
type Iteration struct {
	Head, Tail *Node
	MaxWait    time.Duration
	// Queue makes the feedback queue of subtask i of the head, per attempt.
	Queue func(i int) task.FeedbackQueue
}

// Reaches says whether from is n or one of its transitive inputs.
func Reaches(from, n *Node) bool { return reaches(from, n, map[*Node]bool{}) }

func reaches(from, n *Node, seen map[*Node]bool) bool {
	if n == from {
		return true
	}
	if seen[n] {
		return false
	}
	seen[n] = true
	for _, e := range n.Inputs {
		if reaches(from, e.From, seen) {
			return true
		}
	}
	return false
}

// Bridge lets package streamtest reach the program behind the API's
// values: package stream sets it when it is initialized.
var Bridge struct {
	// Program returns the program of a *stream.Env.
	Program func(env any) *Program
	// Stream returns the node and port of a stream.DataStream.
	Stream func(ds any) (*Node, string)
}
