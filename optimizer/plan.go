package optimizer

import (
	"fmt"
	"time"
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
	// JoinKind is, for a Join, which records it emits; size estimates use it.
	JoinKind JoinKind
	// CrossHint sizes a Cross's inputs.
	CrossHint CrossHint
	// EstimatedRows is the size estimate in rows, -1 when unknown: a source's
	// statistics or the user's size hint (dataset's WithEstimate).
	EstimatedRows int64
	// EstimatedBytes is a source's size in bytes (file sizes), -1 when unknown.
	EstimatedBytes int64
	// SourceRows is, for a source whose EstimatedRows counts the rows its
	// filters keep, how many rows it holds in all (0 when unknown).
	SourceRows int64
	// RowBytes is the estimated in-memory size of one output record (0:
	// unknown; planners then assume DefaultRowBytes).
	RowBytes int64
	// Selectivity is the user's declared ratio of output rows to input rows
	// (dataset's WithSelectivity); 0 means the planner's default for the kind.
	Selectivity float64

	// Keys names, per input, the logical fields of the operator's key on that
	// input, in key order; nil when the key is opaque to the optimizer (a key
	// function without declared fields). Equal names mean equal values: a
	// join's key fields on both inputs, and the same field on later operators.
	Keys [][]string
	// KeyTypes is, per keyed input, the Go type of its key: two inputs hashed
	// by keys of the same type and values land in the same subtasks.
	KeyTypes []string
	// Descending holds, for a Sort, the direction of each key field.
	Descending []bool
	// Forwards lists, per input, the logical fields the operator passes from
	// that input to its output unchanged, as "f" or renamed as "f->g" (Flink's
	// withForwardedFields); partitioning and order on them survive.
	Forwards [][]string
	// PreservesAll: the operator emits its input records unchanged (filter,
	// sort, partition, first), so every property of its input survives.
	PreservesAll bool
	// Sorted declares, in key order, the logical fields every subtask of the
	// operator emits its records sorted on (the user's word, as Flink's
	// splitsOrderedBy: dataset's SortedOn), by the fields' values in their
	// natural order, descending where SortedDesc says so. Planners take it as
	// the output's order: a Sort on exactly these fields whose input arrives
	// forwarded sorts nothing.
	Sorted     []string
	SortedDesc []bool

	// Iterations is how many times the node runs: 0 or 1 outside iterations;
	// for a node of an iteration's step (its head, operators, replayed inputs
	// and tails) the supersteps the planner expects: the iteration's maximum,
	// or at most DefaultIterations when it may end earlier. Its cost is the
	// cost of one superstep times Iterations, except the work on Static
	// inputs, which is paid once.
	Iterations int
	// Static reports, per input (nil: none), whether the input is
	// loop-invariant: computed outside the iteration, its records reach the
	// node once, in the first superstep, and the node keeps them (the initial
	// partial solution, a replayed input's spool, the side a join of the step
	// keeps as a hash index across supersteps). Shipping a static input is
	// paid once; a Join with a static input builds on it, once, so the
	// planner considers only the strategies that build on it.
	Static []bool
	// SizeOf is, for a source that emits another node's records (an
	// iteration's result: the last partial solution, as large as the initial
	// one, or the solution set), that node, which comes before it in the
	// plan: the source is estimated as its size unless EstimatedRows is set.
	SizeOf *Node
	// Loop is the iteration the node runs in, numbered from 1 in program
	// order; 0 outside iterations. Every node of an iteration has one of the
	// roles of LoopRole.
	Loop int
	// LoopRole is the node's part in its iteration (Loop > 0).
	LoopRole LoopRole

	// Decision is filled in by Optimize: the planner's choices, then the rules'.
	Decision Decision
	// Actual is filled in after the program ran (EXPLAIN ANALYZE).
	Actual *Actual
}

// LoopRole is a node's part in an iteration.
type LoopRole uint8

const (
	// LoopHead emits the partial solution (or workset) every superstep: its
	// input 0 is the initial one, read in the first superstep.
	LoopHead LoopRole = iota + 1
	// LoopReplay reads a loop-invariant input (its input 0, from outside the
	// iteration) once and replays it every superstep.
	LoopReplay
	// LoopStep is an operator of the step function: it runs every superstep.
	LoopStep
	// LoopTail receives what a superstep produced: the next partial
	// solution, workset or delta, or a termination criterion.
	LoopTail
)

func (r LoopRole) String() string {
	switch r {
	case LoopHead:
		return "head"
	case LoopReplay:
		return "replay"
	case LoopStep:
		return "step"
	case LoopTail:
		return "tail"
	}
	return fmt.Sprintf("LoopRole(%d)", uint8(r))
}

// source reports whether the role emits every superstep without reading the
// step: a head or a replayer.
func (r LoopRole) source() bool { return r == LoopHead || r == LoopReplay }

// DefaultRowBytes is the record size planners assume when a node's is unknown.
const DefaultRowBytes = 64

// Estimate is a planner's estimate of a node's output.
type Estimate struct {
	Rows  int64 // -1 when unknown
	Bytes int64 // -1 when unknown

	// frac is the share of its base relation's rows the data set keeps after
	// the filters (and semi joins) on its way from the sources; base is that
	// relation's size in rows: the largest source a chain of many-to-one
	// joins starts from. Join estimates use them (see estimate).
	frac, base float64
}

// JoinKind is which records a Join emits.
type JoinKind uint8

// The join kinds.
const (
	InnerJoin      JoinKind = iota // matched pairs
	LeftOuterJoin                  // and the unmatched records of input 0
	RightOuterJoin                 // and the unmatched records of input 1
	FullOuterJoin                  // and the unmatched records of both
	SemiJoin                       // the records of input 0 with a match
	AntiJoin                       // the records of input 0 without a match
)

// Costs are a plan's estimated costs, compared in Flink's order: network
// (bytes shipped between subtasks), then disk (bytes spilled and read back),
// then CPU (abstract units of per-record work).
type Costs struct {
	Network float64
	Disk    float64
	CPU     float64
}

// Add returns c + d.
func (c Costs) Add(d Costs) Costs {
	return Costs{Network: c.Network + d.Network, Disk: c.Disk + d.Disk, CPU: c.CPU + d.CPU}
}

// Compare orders costs by network, then disk, then CPU; differences under
// one part in a thousand count as ties.
func (c Costs) Compare(d Costs) int {
	for _, p := range [][2]float64{{c.Network, d.Network}, {c.Disk, d.Disk}, {c.CPU, d.CPU}} {
		if r := compareApprox(p[0], p[1]); r != 0 {
			return r
		}
	}
	return 0
}

func compareApprox(a, b float64) int {
	tol := 1e-3 * max(a, b)
	switch {
	case a < b-tol:
		return -1
	case a > b+tol:
		return 1
	}
	return 0
}

// InputLocal is what an operator does to one input within a subtask before
// its driver strategy runs (Flink's local strategy of a channel).
type InputLocal uint8

const (
	// LocalNone: the input is consumed as it arrives.
	LocalNone InputLocal = iota
	// LocalSort: the input is sorted by the key.
	LocalSort
	// LocalCombiningSort: the input is sorted and pre-combined by key.
	LocalCombiningSort
)

func (l InputLocal) String() string { return [...]string{"NONE", "SORT", "COMBININGSORT"}[l] }

// Actual is what a node did when the program ran (EXPLAIN ANALYZE).
type Actual struct {
	Rows       int64         // records the node emitted
	Time       time.Duration // busy time of the node's task (shared by chained operators)
	PeakMemory int64         // peak managed memory of the node's task
	Spilled    int64         // bytes its task spilled
	// Replanned: the adaptive planner changed this node's strategy after
	// measuring its inputs.
	Replanned bool
	// KeyFilter names the key column a runtime join filter tested in this
	// source (dataset's KeyColumns), empty for none; KeyFiltered is the rows
	// it removed.
	KeyFilter   string
	KeyFiltered int64
	// Variant names the physical variants the node's subtasks ran, as the
	// runtime chose them within the planned strategy, joined by "+" when
	// subtasks differed; empty for operators with a single variant. See
	// Variants for the names.
	Variant string
}

// Variants names the physical variants Actual.Variant reports, with what
// each means. A Reduce's final phase: "typed-dense", "typed-hash",
// "serialized-hash-after-overflow", "serialized-hash", "sorted-input" (a
// SORT_GROUP over input that arrived sorted) or "sorter" (SORT_GROUP that
// sorted first). A ReduceGroup: "counting-sort" or "sorter". A Join: "typed-join-dense", "typed-join-hash",
// "hybrid-hash-after-overflow", "hybrid-hash", "sort-merge", and inside an
// iteration "cached-typed-join-dense", "cached-typed-join-hash" or
// "cached-index". A Sort: "self-key" when it stored each record once, as its
// own key (dataset.Self), none otherwise. A Reduce whose combiner passed its
// input through adds "combiner-passed-through".
var Variants = map[string]string{
	"typed-dense":                    "groups as Go values in an array indexed by the key's word",
	"typed-hash":                     "groups as Go values in a hash table",
	"combiner-passed-through":        "a combiner's first records were more than four groups in five: it passed its input through",
	"serialized-hash-after-overflow": "typed groups outgrew their memory and went to the serialized, spilling hash aggregation",
	"serialized-hash":                "serialized, spilling hash aggregation throughout",
	"sorted-input":                   "groups folded as they came, the input sorted on the key",
	"counting-sort":                  "records grouped by a counting sort on dense key words",
	"sorter":                         "records sorted by the external, spilling sorter",
	"typed-join-dense":               "typed hash join, build side indexed by the key's word",
	"typed-join-hash":                "typed hash join, build side in hash slots",
	"hybrid-hash-after-overflow":     "typed build side outgrew its memory and went to the serialized hybrid hash join",
	"hybrid-hash":                    "serialized hybrid hash join throughout",
	"sort-merge":                     "sort-merge join",
	"cached-typed-join-dense":        "iteration: loop-invariant side kept typed, indexed by the key's word",
	"cached-typed-join-hash":         "iteration: loop-invariant side kept typed, in hash slots",
	"cached-index":                   "iteration: loop-invariant side kept in a spilling sortjoin.Index",
	"self-key":                       "each record stored once, as its own key (dataset.Self)",
}

// Decision is what a planner chose for a node.
type Decision struct {
	Ship       []Ship       // per input
	Exchange   []Exchange   // per input
	InputLocal []InputLocal // per input; nil means LocalNone for every input
	Local      Local        // the driver strategy
	Combine    bool         // a Reduce runs a combiner before the shuffle
	// ShipFor is set on a node that ships its input 0 for one consumer's
	// input (a replayer of a loop-invariant input, see shipBeforeReplay):
	// the edge is partitioned with that input's key, and the consumer reads
	// the node forward.
	ShipFor *Port
	// MemoryShare is the managed memory, in bytes, each subtask of the node
	// may reserve (0: no budget); see memoryShare.
	MemoryShare int64
	// Estimate is the planner's estimate of the node's output (Rows -1 when the
	// planner makes none).
	Estimate Estimate
	// Cost is the node's own cost (shipping its inputs and running its
	// strategy); Cumulative adds the costs of everything it depends on.
	Cost, Cumulative Costs
	// Notes say why, in a few words per choice ("reuses HASH(orderkey) of #5").
	Notes []string
}

// Port names an input of a node: the node's ID and the input's index.
type Port struct {
	Node, Input int
}

// Plan is a program's logical plan: its nodes in an order where every node comes
// after its inputs, and the sinks.
type Plan struct {
	Nodes []*Node
	// Memory is the job's managed memory budget in bytes (0: unlimited);
	// planners weigh spilling against it.
	Memory int64
	// Mode sets the exchange modes of the whole job, as Flink's
	// ExecutionMode does (see executionMode).
	Mode ExecutionMode
}

// Planner chooses every node's strategies: it fills in each Decision's ship
// strategies, exchanges, local strategies and estimates. Optimize runs it and
// then the rules.
type Planner interface {
	Plan(p *Plan) error
}

// Explain returns the plan as Text does: the tree the CLI prints.
func (p *Plan) Explain() string { return p.Text() }
