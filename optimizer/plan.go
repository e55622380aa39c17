package optimizer

import (
	"fmt"
	"strings"
)

// OpKind is the kind of a logical operator.
type OpKind uint8

const (
	// Source reads data; it has no inputs.
	Source OpKind = iota
	// Partition redistributes its input (partitionByHash, partitionByRange,
	// partitionCustom, rebalance) and passes it on unchanged.
	Partition
	// CoGroup groups two inputs by key and gives both groups of a key to a function.
	CoGroup
	// Cross pairs every record of one input with every record of the other.
	Cross
	// Map is a record-at-a-time operator (map, flatMap, filter): it can be
	// chained into its producer when the input is forwarded.
	Map
	// MapPartition sees a whole partition of its input.
	MapPartition
	// Reduce groups its input by key and combines each group with an associative
	// function: it may run a combiner before the shuffle.
	Reduce
	// GroupReduce groups its input by key and gives each group to a function.
	GroupReduce
	// Sort sorts each partition of its input by key; with Ordered input it sorts
	// the whole data set (range partitions in key order).
	Sort
	// Join joins two inputs on equal keys.
	Join
	// Sink consumes its input.
	Sink
)

func (k OpKind) String() string {
	switch k {
	case Source:
		return "Source"
	case Partition:
		return "Partition"
	case CoGroup:
		return "CoGroup"
	case Cross:
		return "Cross"
	case Map:
		return "Map"
	case MapPartition:
		return "MapPartition"
	case Reduce:
		return "Reduce"
	case GroupReduce:
		return "GroupReduce"
	case Sort:
		return "Sort"
	case Join:
		return "Join"
	case Sink:
		return "Sink"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Ship says how an input's records move from the producer's subtasks to the
// consumer's.
type Ship uint8

const (
	Forward Ship = iota
	Hash
	Range
	Broadcast
	Rebalance
	Custom
)

func (s Ship) String() string {
	return [...]string{"FORWARD", "HASH", "RANGE", "BROADCAST", "REBALANCE", "CUSTOM"}[s]
}

// Exchange says when the consumer may read the producer's output.
type Exchange uint8

const (
	Pipelined Exchange = iota
	Blocking
)

func (e Exchange) String() string { return [...]string{"PIPELINED", "BLOCKING"}[e] }

// Local is an operator's local (per-subtask) strategy.
type Local uint8

const (
	// NoLocal: the operator has one way to run (sources, maps, sinks).
	NoLocal Local = iota
	// HashAggregate groups with a hash table (Reduce), spilling partitions.
	HashAggregate
	// SortGroup sorts the input by key and walks the groups.
	SortGroup
	// HybridHashBuildFirst joins with a hybrid hash table built from input 0.
	HybridHashBuildFirst
	// HybridHashBuildSecond joins with a hybrid hash table built from input 1.
	HybridHashBuildSecond
	// SortMerge sorts both inputs by key and merges them.
	SortMerge
	// SortLocal sorts each partition (Sort).
	SortLocal
	// SortCoGroup sorts both inputs by key and walks their groups together.
	SortCoGroup
	// NestedLoopsBlockFirst crosses by reading input 0 a memory-full block at a
	// time and scanning input 1 (materialized) for each block.
	NestedLoopsBlockFirst
	// NestedLoopsBlockSecond is NestedLoopsBlockFirst with the inputs' roles swapped.
	NestedLoopsBlockSecond
)

func (l Local) String() string {
	return [...]string{"NONE", "HASH_AGGREGATE", "SORT_GROUP", "HYBRIDHASH_BUILD_FIRST", "HYBRIDHASH_BUILD_SECOND", "SORT_MERGE", "SORT", "SORT_COGROUP",
		"NESTEDLOOP_BLOCKED_OUTER_FIRST", "NESTEDLOOP_BLOCKED_OUTER_SECOND"}[l]
}

// JoinHint forces a join strategy, as Flink's JoinHint does.
type JoinHint uint8

const (
	// OptimizerChooses leaves the choice to the planner.
	OptimizerChooses JoinHint = iota
	// BroadcastHashFirst broadcasts input 0 and builds the hash table from it.
	BroadcastHashFirst
	// BroadcastHashSecond broadcasts input 1 and builds the hash table from it.
	BroadcastHashSecond
	// RepartitionHashFirst hash-partitions both inputs and builds from input 0.
	RepartitionHashFirst
	// RepartitionHashSecond hash-partitions both inputs and builds from input 1.
	RepartitionHashSecond
	// RepartitionSortMerge hash-partitions both inputs and sort-merges them.
	RepartitionSortMerge
)

func (h JoinHint) String() string {
	return [...]string{"OPTIMIZER_CHOOSES", "BROADCAST_HASH_FIRST", "BROADCAST_HASH_SECOND",
		"REPARTITION_HASH_FIRST", "REPARTITION_HASH_SECOND", "REPARTITION_SORT_MERGE"}[h]
}

// CrossHint tells the planner the relative sizes of a cross's inputs, as
// Flink's crossWithTiny and crossWithHuge do.
type CrossHint uint8

const (
	// CrossAny leaves the choice to the planner.
	CrossAny CrossHint = iota
	// SecondIsTiny broadcasts input 1.
	SecondIsTiny
	// SecondIsHuge broadcasts input 0.
	SecondIsHuge
)

// Node is one logical operator of a program.
type Node struct {
	ID          int
	Name        string // what the user calls it, with the caller's file:line
	Kind        OpKind
	Inputs      []*Node
	Parallelism int
	// Keyed reports, per input, whether the operator needs equal keys of that
	// input together (grouping, joining); the key itself stays with the dataset
	// package.
	Keyed []bool
	// Ordered reports, per input, whether the operator needs its input
	// range-partitioned by key in key order (a total sort).
	Ordered []bool
	// Forced holds, per input, a ship strategy the user asked for
	// (partitionByHash, rebalance, a broadcast set, ...); planners honour it.
	Forced map[int]Ship
	// OrderedGather: the node reads its inputs' subtasks one after the other, in
	// subtask order (a gather that keeps the order of a total sort).
	OrderedGather bool
	// Combinable: a Reduce whose function may run before the shuffle.
	Combinable bool
	// JoinHint forces a join strategy.
	JoinHint JoinHint
	// Outer reports, for a Join, whether unmatched records of input 0 / input 1
	// are kept (outer joins cannot broadcast their preserved side).
	Outer [2]bool
	// CrossHint sizes a Cross's inputs.
	CrossHint CrossHint
	// EstimatedRows is the size estimate in rows, -1 when unknown.
	EstimatedRows int64

	// Decision is filled in by a Planner.
	Decision Decision
}

// Decision is what a planner chose for a node.
type Decision struct {
	Ship     []Ship     // per input
	Exchange []Exchange // per input
	Local    Local
	Combine  bool // a Reduce runs a combiner before the shuffle
}

// Plan is a program's logical plan: its nodes in an order where every node comes
// after its inputs, and the sinks.
type Plan struct {
	Nodes []*Node
}

// Planner fills in every node's Decision.
type Planner interface {
	Plan(p *Plan) error
}

// Explain returns one line per node, in plan order: its kind and name, its
// local strategy and each input's ship strategy and exchange mode.
func (p *Plan) Explain() string {
	var b strings.Builder
	for _, n := range p.Nodes {
		fmt.Fprintf(&b, "%d %s %q p=%d", n.ID, n.Kind, n.Name, n.Parallelism)
		if n.Decision.Local != NoLocal {
			fmt.Fprintf(&b, " local=%s", n.Decision.Local)
		}
		if n.Decision.Combine {
			b.WriteString(" combine")
		}
		for i, in := range n.Inputs {
			fmt.Fprintf(&b, " in%d=%d:%s/%s", i, in.ID, n.Decision.Ship[i], n.Decision.Exchange[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}
