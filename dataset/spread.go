package dataset

import (
	"errors"
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// Spread runs a program in several processes at once: one Env per
// process, each built by the same program with the same Options but for
// Spread.Part, each executing its share (Flink's subtasks in the slots of
// several TaskManagers). Every process plans the same plan and runs the
// subtasks placed on it; the channels between processes go over the
// Transport.
//
// Placement: the processes' slots are numbered process by process, and
// subtask i of every operator runs in the process that holds slot i modulo
// the total (Flink's slot sharing: subtask i of each operator shares slot
// i). Collect and Count gather into every process: their subtask j runs in
// process j and reads every producer subtask's records in subtask order, so
// each process sees the whole result, in the order one process would.
//
// Iterations run spread too: each process's superstep barrier meets the
// subtasks it runs, then the processes meet over control channels on the
// Transport (flow.Link, vertex flow.LinkVertex): part 0 adds up what every
// process's superstep did (the records its tails received, its loop
// aggregators' values, which need a serializer), runs the termination
// criteria (ConvergeWhen runs in part 0 only) and tells the others the
// totals and whether another superstep follows. Each process keeps its
// partitions of the partial solution, the solution set and the cached
// inputs; SuperstepStats.SolutionSpilled is its own.
//
// What differs from one process: a source's subtask i reads splits i, i+n,
// i+2n, ... of its n subtasks (no work stealing between processes);
// Options.Adaptive is refused (its second planning needs the sizes every
// process measured); each process commits the output of its own subtasks once
// its share succeeded, so a job that fails in one process after another
// committed leaves that one's files (the caller removes them). Every edge between
// processes needs a codec (typed.CodecOrNil): Execute fails, naming the
// operator, for a record type without one.
type Spread struct {
	// Part is this process's index in Slots.
	Part int
	// Slots are the slots of each process (at least one each).
	Slots []int
	// Transport returns the transport of execution number stage (0, 1,
	// ... in the order this Env executes), given the process part(v, i)
	// that runs subtask i of flow vertex v.
	Transport func(stage int, part func(v, i int) int) (Transport, error)
}

// Transport carries a spread execution's channels between processes
// (cluster/dataplane's over a TaskManager's shuffle).
type Transport = flow.Transport

// check validates s.
func (s *Spread) check() error {
	if err := flow.CheckSlots(s.Part, s.Slots); err != nil {
		return fmt.Errorf("dataset: Spread: %w", err)
	}
	if s.Transport == nil {
		return errors.New("dataset: Spread without a Transport")
	}
	return nil
}

// slotPart returns the process that holds slot i modulo the total.
func (s *Spread) slotPart(i int) int { return flow.SlotPart(s.Slots, i) }

// partOf returns the process that runs subtask i of a task: a gathering
// sink's (gathered) in process i, any other's in the process of slot i.
func (s *Spread) partOf(gathered bool, i int) int {
	if gathered {
		return i
	}
	return s.slotPart(i)
}

// gather rewrites plan, whose nodes nodes run as, for a spread execution:
// each gathering sink runs one subtask per process and reads a broadcast
// of its input, blocking, so producer subtask after producer subtask.
func (s *Spread) gather(plan *optimizer.Plan, nodes []*node) {
	for i, pn := range plan.Nodes {
		if !nodes[i].gathered {
			continue
		}
		pn.Parallelism = len(s.Slots)
		for k := range pn.Decision.Ship {
			pn.Decision.Ship[k] = optimizer.Broadcast
			pn.Decision.Exchange[k] = optimizer.Blocking
		}
		pn.OrderedGather = true
	}
}

// remote returns the placement of graph g's subtasks for execution stage,
// in which the vertices gathered are gathering sinks.
func (s *Spread) remote(stage int, gathered map[int]bool) (*flow.Remote, error) {
	part := func(v, i int) int {
		if v == flow.LinkVertex { // the iterations' control channels
			return i
		}
		return s.partOf(gathered[v], i)
	}
	t, err := s.Transport(stage, part)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return &flow.Remote{Here: func(v, i int) bool { return part(v, i) == s.Part }, Transport: t}, nil
}
