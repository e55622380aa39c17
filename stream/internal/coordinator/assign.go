package coordinator

import (
	"fmt"
	"math"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
)

// Assignment is a snapshot's state assigned to the subtasks of a
// topology (Flink's StateAssignmentOperation).
type Assignment struct {
	// Tasks are the restores of each task's subtasks, by vertex.
	Tasks map[string][]*protocol.TaskRestore
	// Enumerators are the sources' enumerator states, by operator.
	Enumerators map[string]*source.EnumeratorState
	// MaxParallelism are the key groups of the keyed operators that take
	// the snapshot's (their program set none), by operator.
	MaxParallelism map[string]int
}

// Task returns the restore of subtask i of vertex v, or nil.
func (a *Assignment) Task(v string, i int) *protocol.TaskRestore {
	if a == nil {
		return nil
	}
	if s := a.Tasks[v]; i < len(s) {
		return s[i]
	}
	return nil
}

// Enumerator returns the enumerator state source operator id starts from,
// or nil.
func (a *Assignment) Enumerator(id string) *source.EnumeratorState {
	if a == nil {
		return nil
	}
	return a.Enumerators[id]
}

// mismatchError is a snapshot that does not fit the program: no restart
// can cure it.
type mismatchError struct{ error }

func (e *mismatchError) Unwrap() error       { return e.error }
func (e *mismatchError) Unrecoverable() bool { return true }

// refuse returns the unrecoverable error of a snapshot that does not fit.
func refuse(format string, args ...any) error {
	return &mismatchError{fmt.Errorf(format, args...)}
}

// describe names an operator in messages: its name, and its uid when set.
func describe(name, uid, id string) string {
	if uid != "" {
		return fmt.Sprintf("%q (uid %q, id %s)", name, uid, id)
	}
	return fmt.Sprintf("%q (id %s)", name, id)
}

// Assign maps snap's state (found at where) onto topo's operators by
// stable id, with Flink's rules: state of an operator the topology lacks
// fails the restore unless allowNonRestored; state of another kind of
// operator fails it; a keyed operator keeps the snapshot's max
// parallelism when the program set none, and fails when it set another;
// its subtasks restore every old subtask whose key groups overlap theirs.
// Operator state is redistributed (state.RepartitionOperatorState), other
// state (broadcast state) copied to every new subtask. Each new subtask
// starts at the least watermark of the old subtasks whose state it takes.
func Assign(snap *checkpoint.Snapshot, where string, topo *Topology, allowNonRestored bool) (*Assignment, error) {
	a := &Assignment{Tasks: map[string][]*protocol.TaskRestore{}, Enumerators: map[string]*source.EnumeratorState{},
		MaxParallelism: map[string]int{}}
	restore := func(o *Operator, i int) *protocol.TaskRestore {
		s := a.Tasks[o.Vertex]
		if s == nil {
			s = make([]*protocol.TaskRestore, topo.task(o.Vertex).Parallelism)
			a.Tasks[o.Vertex] = s
		}
		if s[i] == nil {
			s[i] = &protocol.TaskRestore{}
		}
		return s[i]
	}
	if err := assignChannels(a, snap, where, topo, allowNonRestored, restore); err != nil {
		return nil, err
	}
	finished := map[string]bool{}
	for i := range snap.Operators {
		os := &snap.Operators[i]
		o := topo.operator(os.ID)
		if o == nil {
			if allowNonRestored || !hasState(os) {
				continue
			}
			return nil, refuse("stream: restore from %s: the snapshot has state of operator %s, which the program does not have; give the operator its uid again, or set AllowNonRestoredState (--allow-non-restored-state) to skip this state", where, describe(os.Name, "", os.ID))
		}
		if os.Kind != "" && o.Kind != "" && os.Kind != o.Kind {
			fix := "give each stateful operator a uid (DataStream.UID) so that ids do not depend on the program's shape"
			if o.UID != "" {
				fix = "the uid now names another operator; give it back to the operator it named"
			}
			return nil, refuse("stream: restore from %s: operator %s is a %s, but the snapshot holds the state of a %s named %q under its id: the program changed; %s", where, describe(o.Name, o.UID, o.ID), o.Kind, os.Kind, os.Name, fix)
		}
		if os.Coordinator != nil {
			st, err := DecodeEnumeratorState(os.Coordinator)
			if err != nil {
				return nil, fmt.Errorf("stream: %s: restore: %w", o.Name, err)
			}
			a.Enumerators[o.ID] = st
		}
		if os.Finished {
			finished[o.ID] = true
		}
		old := make([][]byte, len(os.Subtasks))
		wms := make([]int64, len(os.Subtasks))
		anyState, anyWM := false, false
		for j, st := range os.Subtasks {
			old[j], wms[j] = st.State, st.Watermark
			anyState = anyState || len(st.State) > 0
			anyWM = anyWM || st.Watermark != math.MinInt64
		}
		if !anyState && !anyWM {
			continue
		}
		maxP := o.MaxParallelism
		if o.Keyed && anyState && os.MaxParallelism != o.MaxParallelism {
			if o.MaxParallelismSet {
				return nil, fmt.Errorf("stream: The maximum parallelism (%d) with which the latest checkpoint of the execution job vertex %s has been taken and the current maximum parallelism (%d) changed. This is currently not supported.", os.MaxParallelism, o.Name, o.MaxParallelism)
			}
			if os.MaxParallelism < o.Parallelism {
				return nil, fmt.Errorf("stream: %s: the parallelism %d is above the max parallelism %d of the restored state", o.Name, o.Parallelism, os.MaxParallelism)
			}
			maxP = os.MaxParallelism
			a.MaxParallelism[o.ID] = maxP
		}
		subs := make([][][]byte, o.Parallelism)
		subWM := make([]int64, o.Parallelism)
		for i := range subWM {
			subWM[i] = math.MaxInt64
		}
		switch {
		case o.Keyed && anyState:
			for i := range subs {
				mine, err := state.RangeForOperatorIndex(maxP, o.Parallelism, i)
				if err != nil {
					return nil, err
				}
				for j, b := range old {
					theirs, err := state.RangeForOperatorIndex(maxP, len(old), j)
					if err != nil {
						return nil, err
					}
					if mine.Intersect(theirs).Len() > 0 {
						if len(b) > 0 {
							subs[i] = append(subs[i], b)
						}
						subWM[i] = min(subWM[i], wms[j])
					}
				}
			}
		case anyState && state.IsOperatorSnapshot(firstNonEmpty(old)):
			parts, err := state.RepartitionOperatorState(old, o.Parallelism)
			if err != nil {
				return nil, fmt.Errorf("stream: %s: restore: %w", o.Name, err)
			}
			for i, p := range parts {
				if p != nil {
					subs[i] = [][]byte{p}
				}
			}
			spread(subWM, wms)
		default:
			for i := range subs {
				if b := old[i%len(old)]; len(b) > 0 {
					subs[i] = [][]byte{b}
				}
			}
			spread(subWM, wms)
		}
		for i := range subs {
			r := restore(o, i)
			wm := subWM[i]
			if wm == math.MaxInt64 {
				wm = math.MinInt64
			}
			r.Operators = append(r.Operators, protocol.OperatorRestore{ID: o.ID, States: subs[i], Watermark: wm})
		}
	}
	for _, t := range topo.Tasks {
		all := len(t.Operators) > 0
		for _, op := range t.Operators {
			all = all && finished[op]
		}
		if all {
			for i := range t.Parallelism {
				restore(topo.operator(t.Operators[0]), i).Finished = true
			}
		}
	}
	return a, nil
}

// spread sets each new subtask's watermark from the old ones': its own at
// the same parallelism, else the least of all (the state of every old
// subtask may reach it).
func spread(dst, old []int64) {
	if len(dst) == len(old) {
		copy(dst, old)
		return
	}
	least := int64(math.MaxInt64)
	for _, w := range old {
		least = min(least, w)
	}
	for i := range dst {
		dst[i] = least
	}
}

// assignChannels gathers the channel state of snap by edge and gives each
// producer task's subtask the entries it sends again. Every edge must be in
// the topology, unless allowNonRestored (its records are then dropped).
// Records in flight on a keyed, rebalanced or forward edge are sent again
// through the edge's partitioner at any parallelism, as Flink redistributes
// them; on a broadcast edge each goes to its old consumer, so a restore at
// another parallelism of its producer or consumer is refused.
func assignChannels(a *Assignment, snap *checkpoint.Snapshot, where string, topo *Topology, allowNonRestored bool,
	restore func(o *Operator, i int) *protocol.TaskRestore) error {
	edges := map[string]*Edge{}
	for i := range topo.Edges {
		edges[topo.Edges[i].Key] = &topo.Edges[i]
	}
	var all []protocol.ChannelEntry
	for _, os := range snap.Operators {
		for j, st := range os.Subtasks {
			es, err := protocol.DecodeChannels(st.InFlight)
			if err != nil {
				return fmt.Errorf("stream: restore %s: %s subtask %d: %w", where, os.Name, j, err)
			}
			for _, ce := range es {
				ed := edges[ce.Edge]
				if ed == nil {
					if allowNonRestored {
						continue
					}
					return fmt.Errorf("stream: restore %s: records in flight on edge %s, which the program does not have between two tasks; set AllowNonRestoredState (--allow-non-restored-state) to drop them", where, ce.Edge)
				}
				if ed.Broadcast && (ce.Producers != ed.Producers || ce.Consumers != ed.Consumers) {
					return fmt.Errorf("stream: restore %s: the unaligned checkpoint has records in flight on the broadcast edge %s -> %s at parallelism %d -> %d; a restore at %d -> %d is not supported: restore at the same parallelism, or from an aligned checkpoint or savepoint", where, ed.FromName, ed.ToName, ce.Producers, ce.Consumers, ed.Producers, ed.Consumers)
				}
				all = append(all, ce)
			}
		}
	}
	protocol.SortChannels(all)
	for _, ce := range all {
		ed := edges[ce.Edge]
		head := topo.operator(topo.task(ed.From).Operators[0])
		r := restore(head, ce.Producer%ed.Producers)
		r.Channels = append(r.Channels, ce)
	}
	return nil
}

func hasState(os *checkpoint.OperatorState) bool {
	if os.Coordinator != nil {
		return true
	}
	for _, st := range os.Subtasks {
		if len(st.State) > 0 || len(st.InFlight) > 0 {
			return true
		}
	}
	return false
}

func firstNonEmpty(bs [][]byte) []byte {
	for _, b := range bs {
		if len(b) > 0 {
			return b
		}
	}
	return nil
}
