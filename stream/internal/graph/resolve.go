package graph

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
)

// Mode is a job's execution mode (stream.Mode).
type Mode uint8

// The execution modes.
const (
	Streaming Mode = iota
	Batch
	Automatic
)

// Options are what a job resolves and runs its program with.
type Options struct {
	Job            string
	Parallelism    int
	MaxParallelism int
	Mode           Mode
	BatchSize      int
	// AutoWatermarkInterval, SourceRate, Clock: see task.Config.
	AutoWatermarkInterval time.Duration
	SourceRate            float64
	Clock                 clock.Clock
	StateBackend          task.StateBackend
	TmpDir                string
	Incremental           bool
	// Checkpoints, nil without checkpoints.
	Checkpoints *Checkpoints
	// Codecs gives the network edges their record codecs: the edges of a
	// job spread over processes.
	Codecs bool
	// Here, when set, reports whether subtask i of every task runs in
	// this process (a spread job): a sink's Reset counts only those.
	Here func(i int) bool
	// Splits, when set, returns the split enumerator of source id that
	// runs in another process (a spread job's part other than 0): the
	// attempt makes no enumerator of its own.
	Splits func(id string) source.Enumerator
	// Aligners, when set with Splits, returns the watermark alignment of
	// aligned source id, whose coordinator runs in another process.
	Aligners func(id string, interval time.Duration) Aligner
}

// Aligner is a source subtask's watermark alignment (task.Aligner).
type Aligner = task.Aligner

// local returns how many of p subtasks run in this process.
func (o *Options) local(p int) int {
	if o.Here == nil {
		return p
	}
	n := 0
	for i := range p {
		if o.Here(i) {
			n++
		}
	}
	return n
}

// Checkpoints is how a job checkpoints, as its tasks need to know.
type Checkpoints struct {
	AtLeastOnce    bool
	Unaligned      bool
	AlignedTimeout time.Duration
	Storage        checkpoint.Storage
}

// Resolved is a program resolved for one job attempt: each node's
// parallelism and max parallelism, each edge's partitioning, the chains,
// the stable ids and the coordinator's topology. The program's nodes are
// not changed.
type Resolved struct {
	Program  *Program
	Opts     Options
	Batch    bool
	IDs      map[*Node]string
	Par      map[*Node]int
	MaxP     map[*Node]int
	Part     map[*Edge]PartKind
	Tasks    []*TaskPlan
	Topology *coordinator.Topology
	taskOf   map[*Node]*TaskPlan
}

// TaskPlan is one task: a head node and the nodes chained to it.
type TaskPlan struct {
	Head *Node
	// Nodes are the chain's nodes, head first (a chained node after the
	// node it reads).
	Nodes []*Node
	// Inputs are the network inputs in input order.
	Inputs []*Edge
	vertex *flow.Vertex
	out    map[*Edge]int // a network edge's output index in this task
	in     map[*Edge]int // and its input index
}

// Chained says whether e's consumer runs in its producer's task, as Flink
// chains: a forward edge between equal parallelisms into a one-input
// operator that does not make its own watermarks.
func (r *Resolved) Chained(e *Edge) bool {
	return r.Part[e] == PartForward && len(e.To.Inputs) == 1 && !e.To.Source && e.To.Iter == nil && !e.To.Watermarks
}

// TaskOf returns the task n runs in.
func (r *Resolved) TaskOf(n *Node) *TaskPlan { return r.taskOf[n] }

// Resolve resolves p for a job attempt with o.
func Resolve(p *Program, o Options) (*Resolved, error) {
	r := &Resolved{Program: p, Opts: o, Par: map[*Node]int{}, MaxP: map[*Node]int{}, Part: map[*Edge]PartKind{},
		taskOf: map[*Node]*TaskPlan{}}
	for _, n := range p.Nodes {
		par := n.Parallelism
		if par == 0 {
			par = o.Parallelism
		}
		r.Par[n] = par
	}
	for _, it := range p.Iterations {
		if it.Tail == nil {
			return nil, fmt.Errorf("stream: the iteration of %s has no feedback: call CloseWith", it.Head.Inputs[0].From.Name)
		}
		fb := it.Tail.Inputs[0].From
		r.Par[it.Tail] = r.Par[fb]
		if r.Par[fb] != r.Par[it.Head] {
			return nil, fmt.Errorf("stream: parallelism of the feedback stream (%s, %d) must match the parallelism of the original stream (%d)", fb.Name, r.Par[fb], r.Par[it.Head])
		}
	}
	for _, n := range p.Nodes {
		if !n.Keyed {
			continue
		}
		maxP := n.MaxParallelism
		if maxP == 0 {
			maxP = o.MaxParallelism
		}
		if maxP == 0 {
			mp, err := state.DefaultMaxParallelism(r.Par[n])
			if err != nil {
				return nil, fmt.Errorf("stream: %s: %w", n.Name, err)
			}
			maxP = mp
		}
		if maxP < r.Par[n] {
			return nil, fmt.Errorf("stream: %s: parallelism %d above max parallelism %d", n.Name, r.Par[n], maxP)
		}
		r.MaxP[n] = maxP
	}
	for _, n := range p.Nodes {
		for _, in := range n.Inputs {
			k := in.Part.Kind
			switch {
			case k == PartDefault && r.Par[in.From] == r.Par[n]:
				k = PartForward
			case k == PartDefault:
				k = PartRebalance
			case k == PartForward && r.Par[in.From] != r.Par[n]:
				return nil, fmt.Errorf("stream: forward edge %s -> %s between parallelisms %d and %d", in.From.Name, n.Name, r.Par[in.From], r.Par[n])
			}
			r.Part[in] = k
		}
	}
	batch, err := batchMode(p, o.Mode)
	if err != nil {
		return nil, err
	}
	r.Batch = batch
	if batch && len(p.Iterations) > 0 {
		return nil, fmt.Errorf("stream: iterations are not supported in BATCH execution mode: run the program in STREAMING mode")
	}
	r.IDs = OperatorIDs(p)
	r.chain()
	r.topology()
	return r, nil
}

// batchMode says whether the job runs in BATCH mode: asked for, or
// Automatic with every source bounded.
func batchMode(p *Program, m Mode) (bool, error) {
	bounded := true
	for _, n := range p.Nodes {
		if n.Source && !n.Bounded {
			bounded = false
		}
	}
	switch m {
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

// chain makes the tasks: a task per node that is not chained to its input,
// with the nodes chained after it.
func (r *Resolved) chain() {
	for _, n := range r.Program.Nodes {
		if len(n.Inputs) == 1 && r.Chained(n.Inputs[0]) {
			tp := r.taskOf[n.Inputs[0].From]
			tp.Nodes = append(tp.Nodes, n)
			r.taskOf[n] = tp
			continue
		}
		tp := &TaskPlan{Head: n, Nodes: []*Node{n}, out: map[*Edge]int{}, in: map[*Edge]int{}}
		r.Tasks = append(r.Tasks, tp)
		r.taskOf[n] = tp
	}
	for _, n := range r.Program.Nodes {
		for _, in := range n.Inputs {
			if r.Chained(in) {
				continue
			}
			from, to := r.taskOf[in.From], r.taskOf[n]
			from.out[in], to.in[in] = len(from.out), len(to.in)
			to.Inputs = append(to.Inputs, in)
		}
	}
}

// EdgeKey names network edge e in a checkpoint's channel state: its
// consumer's stable id and the index of the input.
func (r *Resolved) EdgeKey(e *Edge) string {
	return r.IDs[e.To] + "/" + strconv.Itoa(slices.Index(e.To.Inputs, e))
}

// topology makes the coordinator's view of the attempt.
func (r *Resolved) topology() {
	t := &coordinator.Topology{Job: r.Opts.Job}
	for _, tp := range r.Tasks {
		ct := coordinator.Task{Vertex: r.IDs[tp.Head], Name: tp.Head.Name, Parallelism: r.Par[tp.Head], Source: tp.Head.Source}
		for _, n := range tp.Nodes {
			ct.Operators = append(ct.Operators, r.IDs[n])
		}
		t.Tasks = append(t.Tasks, ct)
	}
	for _, n := range r.Program.Nodes {
		o := coordinator.Operator{ID: r.IDs[n], Name: n.Name, UID: n.UID, Kind: n.Kind, Parallelism: r.Par[n], Keyed: n.Keyed,
			Vertex: r.IDs[r.taskOf[n].Head]}
		if n.Keyed {
			o.MaxParallelism = r.MaxP[n]
			o.MaxParallelismSet = n.MaxParallelism != 0 || r.Opts.MaxParallelism != 0
		}
		t.Operators = append(t.Operators, o)
	}
	for _, tp := range r.Tasks {
		for _, e := range tp.Inputs {
			t.Edges = append(t.Edges, coordinator.Edge{Key: r.EdgeKey(e), From: r.IDs[r.taskOf[e.From].Head], To: r.IDs[tp.Head],
				FromName: e.From.Name, ToName: e.To.Name, Producers: r.Par[e.From], Consumers: r.Par[e.To],
				Broadcast: r.Part[e] == PartBroadcast})
		}
	}
	r.Topology = t
}

// OperatorMaxParallelism returns n's max parallelism: its key groups when
// it is keyed, else the node's, the job's or state.DefaultMaxParallelism
// of its parallelism, as Flink gives every operator one.
func (r *Resolved) OperatorMaxParallelism(n *Node) int {
	if mp := r.MaxP[n]; mp > 0 {
		return mp
	}
	if n.MaxParallelism > 0 {
		return n.MaxParallelism
	}
	if r.Opts.MaxParallelism > 0 {
		return r.Opts.MaxParallelism
	}
	mp, err := state.DefaultMaxParallelism(r.Par[n])
	if err != nil {
		return r.Par[n]
	}
	return mp
}

// Restored applies an assignment's max parallelisms: keyed operators whose
// program set none take their snapshot's.
func (r *Resolved) Restored(a *coordinator.Assignment) {
	if a == nil {
		return
	}
	for _, n := range r.Program.Nodes {
		if mp, ok := a.MaxParallelism[r.IDs[n]]; ok {
			r.MaxP[n] = mp
		}
	}
	for i := range r.Topology.Operators {
		if mp, ok := a.MaxParallelism[r.Topology.Operators[i].ID]; ok {
			r.Topology.Operators[i].MaxParallelism = mp
		}
	}
}
