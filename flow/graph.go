package flow

import (
	"fmt"
	"strings"

	"github.com/weirdata/weir/memory"
)

// ShipStrategy says how a producer subtask's output is split among the consumer
// subtasks of an edge.
type ShipStrategy uint8

const (
	// Forward sends producer subtask i's output to consumer subtask i; both
	// vertices must have the same parallelism.
	Forward ShipStrategy = iota
	// Hash sends a record to consumer (h>>32)*n>>32 of its hash h.
	Hash
	// Range sends a record to the consumer whose key range holds its key.
	Range
	// Broadcast sends every record to every consumer.
	Broadcast
	// Rebalance sends records round robin, one at a time.
	Rebalance
	// Custom sends a record where Partitioner.Custom says.
	Custom
)

// String returns the strategy's name in capitals, as EXPLAIN prints it.
func (s ShipStrategy) String() string {
	switch s {
	case Forward:
		return "FORWARD"
	case Hash:
		return "HASH"
	case Range:
		return "RANGE"
	case Broadcast:
		return "BROADCAST"
	case Rebalance:
		return "REBALANCE"
	case Custom:
		return "CUSTOM"
	}
	return fmt.Sprintf("ShipStrategy(%d)", uint8(s))
}

// ExchangeMode says when a consumer may read what a producer wrote.
type ExchangeMode uint8

const (
	// Pipelined edges hand batches over bounded channels while the producer runs.
	Pipelined ExchangeMode = iota
	// Blocking edges materialize the producer's whole output (spilling it when it
	// exceeds its memory) before any consumer reads.
	Blocking
)

// String returns "PIPELINED" or "BLOCKING".
func (m ExchangeMode) String() string {
	switch m {
	case Pipelined:
		return "PIPELINED"
	case Blocking:
		return "BLOCKING"
	}
	return fmt.Sprintf("ExchangeMode(%d)", uint8(m))
}

// Partitioner routes the records of one edge. Strategy picks the field that is
// used: Hash needs Hash, Range needs Key (and optionally Bounds), Custom needs
// Custom; Forward, Broadcast and Rebalance need none.
type Partitioner[T any] struct {
	Strategy ShipStrategy
	// Hash returns a record's hash; the consumer is its high 32 bits scaled to [0,n).
	Hash func(v *T) uint64
	// Key appends a record's key, in the memory package's order-preserving
	// encoding, to dst and returns it.
	Key func(dst []byte, v *T) []byte
	// View, when set, returns a record's key without copying it: the bytes of
	// the record itself (a string sorted bytewise). It must agree with Key.
	View func(v *T) []byte
	// Bounds are n-1 ascending keys: consumer i gets the keys k with
	// Bounds[i-1] < k <= Bounds[i]. Nil makes the runtime sample them: see doc.go.
	Bounds [][]byte
	// Custom returns a record's consumer in [0,n).
	Custom func(v *T, n int) int
	// CustomBatch, when set, writes the consumer of each record of vs into
	// dst (as long as vs), as Custom would return it: the writer calls it
	// once for a batch of records instead of Custom for each.
	CustomBatch func(vs []T, n int, dst []int32)
}

// Graph is a job: vertices and the edges between them. Build it with Vertex and
// Connect, then run it with Execute. A Graph is not safe for concurrent
// building and is executed at most once at a time.
type Graph struct {
	vertices []*Vertex
	edges    []edgeSpec
	errs     []error
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{} }

// String returns one line per vertex, in the order they were added, naming its
// parallelism and its inputs with their ship strategy and exchange mode, e.g.
//
//	source p=2
//	count p=2 <- source HASH PIPELINED
func (g *Graph) String() string {
	var sb strings.Builder
	for _, v := range g.vertices {
		fmt.Fprintf(&sb, "%s p=%d", v.name, v.parallelism)
		for i, e := range v.inputs {
			b := e.base()
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, " <- %s %v %v", b.from.name, b.strategy, b.mode)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// Vertex is one operator of a graph, run as Parallelism subtasks.
type Vertex struct {
	name        string
	parallelism int
	body        func(tc *TaskContext) error
	index       int
	inputs      []edgeSpec // in Connect order
	outputs     []edgeSpec // in Connect order
}

// Name returns the vertex's name.
func (v *Vertex) Name() string { return v.name }

// Parallelism returns the number of subtasks.
func (v *Vertex) Parallelism() int { return v.parallelism }

// Vertex adds a vertex whose subtasks each run body once. Parallelism below 1
// is an error reported by Execute.
func (g *Graph) Vertex(name string, parallelism int, body func(tc *TaskContext) error) *Vertex {
	v := &Vertex{name: name, parallelism: parallelism, body: body, index: len(g.vertices)}
	if parallelism < 1 {
		g.errs = append(g.errs, fmt.Errorf("flow: vertex %q: parallelism %d is below 1", name, parallelism))
	}
	if body == nil {
		g.errs = append(g.errs, fmt.Errorf("flow: vertex %q has no body", name))
	}
	g.vertices = append(g.vertices, v)
	return v
}

// Connect adds an edge from an output of from to an input of to carrying records
// of type T. The edge is from's next output (outputs are numbered in the order
// of Connect calls with that producer) and to's next input. codec serializes
// records when the edge is blocking (it may be nil for edges that stay
// pipelined) and when a sampled Range edge buffers its input. Problems
// (Forward between different parallelisms, a partitioner missing its function)
// are reported by Execute.
func Connect[T any](g *Graph, from, to *Vertex, p Partitioner[T], mode ExchangeMode, codec *memory.Codec[T]) {
	e := &edge[T]{
		edgeBase: edgeBase{
			name: from.name + "->" + to.name, from: from, to: to,
			index: len(g.edges), out: len(from.outputs), in: len(to.inputs),
			strategy: p.Strategy, mode: mode,
			sampled: p.Strategy == Range && p.Bounds == nil,
			hasHash: p.Hash != nil, hasKey: p.Key != nil, hasCustom: p.Custom != nil,
			hasCodec: codec != nil, bounds: p.Bounds,
		},
		part:  p,
		codec: codec,
	}
	from.outputs = append(from.outputs, e)
	to.inputs = append(to.inputs, e)
	g.edges = append(g.edges, e)
}

// edgeBase is the untyped part of an edge.
type edgeBase struct {
	name     string
	from, to *Vertex
	index    int // in the graph's Connect order
	out, in  int
	strategy ShipStrategy
	mode     ExchangeMode
	sampled  bool // a Range edge without Bounds
	// What the typed partitioner and codec provide, for check.
	hasHash, hasKey, hasCustom, hasCodec bool
	bounds                               [][]byte
}

// edgeSpec is an edge of any record type, as the untyped runtime sees it.
type edgeSpec interface {
	base() *edgeBase
	check() error
	// start builds the edge's runtime state for one execution.
	start(j *job) error
	// ran describes the edge as its runtime state runs it (after start).
	ran() EdgeInfo
	reader(tc *TaskContext) input
	writer(tc *TaskContext) output
	// runRemote starts the goroutines that carry the edge's channels
	// between processes (Options.Remote), once every subtask started.
	runRemote()
	// cleanup releases what the execution left: reservations, spill files.
	cleanup() error
}

// edge is an edge carrying records of type T.
type edge[T any] struct {
	edgeBase
	part  Partitioner[T]
	codec *memory.Codec[T]
	rt    *exchange
	// batches is the number of batches the last execution allocated, for tests
	// that check memory stays bounded.
	batches int64
}

func (e *edge[T]) base() *edgeBase { return &e.edgeBase }

func (e *edge[T]) ran() EdgeInfo {
	return EdgeInfo{From: e.from.index, To: e.to.index, Input: e.in, Strategy: e.strategy, Mode: e.rt.mode}
}

// check reports a partitioner or mode the edge cannot run. It reads only the
// untyped facts Connect recorded, so it is compiled once for every record type.
func (e *edgeBase) check() error {
	switch e.strategy {
	case Forward:
		if e.from.parallelism != e.to.parallelism {
			return fmt.Errorf("flow: edge %s: FORWARD needs equal parallelism, have %d and %d", e.name, e.from.parallelism, e.to.parallelism)
		}
	case Hash:
		if !e.hasHash {
			return fmt.Errorf("flow: edge %s: HASH partitioner without a Hash function", e.name)
		}
	case Range:
		if !e.hasKey {
			return fmt.Errorf("flow: edge %s: RANGE partitioner without a Key function", e.name)
		}
		if e.bounds != nil && len(e.bounds) != e.to.parallelism-1 {
			return fmt.Errorf("flow: edge %s: RANGE partitioner has %d bounds for %d consumers", e.name, len(e.bounds), e.to.parallelism)
		}
		for i := 1; i < len(e.bounds); i++ {
			if memory.Compare(e.bounds[i-1], e.bounds[i]) > 0 {
				return fmt.Errorf("flow: edge %s: RANGE bounds %d and %d are not ascending", e.name, i-1, i)
			}
		}
		if e.bounds == nil && !e.hasCodec {
			return fmt.Errorf("flow: edge %s: sampled RANGE partitioner needs a codec", e.name)
		}
	case Broadcast, Rebalance:
	case Custom:
		if !e.hasCustom {
			return fmt.Errorf("flow: edge %s: CUSTOM partitioner without a Custom function", e.name)
		}
	default:
		return fmt.Errorf("flow: edge %s: unknown ship strategy %d", e.name, e.strategy)
	}
	if e.mode != Pipelined && e.mode != Blocking {
		return fmt.Errorf("flow: edge %s: unknown exchange mode %d", e.name, e.mode)
	}
	return nil
}
