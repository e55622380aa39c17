package streamtest

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/state"
)

// A harness snapshot is one subtask's, or the snapshots of every subtask
// of one parallelism repackaged:
//
//	one subtask  's' parallelism subtask (operator)*
//	operator     id state watermark maxParallelism
//	repackaged   'r' n (snapshot)*n
//
// Ids, states and the repackaged snapshots are length-prefixed (uvarint),
// watermarks varints, the other numbers uvarints. maxParallelism is a
// keyed operator's key groups, 0 for others.
const (
	tagSubtask    = 's'
	tagRepackaged = 'r'
)

// harnessSnapshot is the snapshot of one harness: subtask of parallelism.
type harnessSnapshot struct {
	parallelism, subtask int
	ops                  []harnessOperator
}

// harnessOperator is one operator's part of a harness snapshot.
type harnessOperator struct {
	protocol.OperatorSnapshot
	maxParallelism int
}

func (s harnessSnapshot) encode() []byte {
	b := []byte{tagSubtask}
	b = binary.AppendUvarint(b, uint64(s.parallelism))
	b = binary.AppendUvarint(b, uint64(s.subtask))
	for _, o := range s.ops {
		b = binary.AppendUvarint(b, uint64(len(o.ID)))
		b = append(b, o.ID...)
		b = binary.AppendUvarint(b, uint64(len(o.State)))
		b = append(b, o.State...)
		b = binary.AppendVarint(b, o.Watermark)
		b = binary.AppendUvarint(b, uint64(o.maxParallelism))
	}
	return b
}

var errCorrupt = fmt.Errorf("streamtest: %w", state.ErrCorruptSnapshot)

// snapshotReader reads the fields of an encoded snapshot.
type snapshotReader struct {
	b   []byte
	err error
}

func (r *snapshotReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *snapshotReader) varint() int64 {
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[k:]
	return v
}

// count reads a number that is at most max.
func (r *snapshotReader) count(max uint64) int {
	v := r.uvarint()
	if v > max {
		r.err = errCorrupt
		return 0
	}
	return int(v)
}

func (r *snapshotReader) bytes() []byte {
	n := r.count(uint64(len(r.b)))
	if r.err != nil {
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func decodeSnapshot(b []byte) (harnessSnapshot, error) {
	if len(b) == 0 || b[0] != tagSubtask {
		return harnessSnapshot{}, fmt.Errorf("streamtest: not the snapshot of one harness: %w", state.ErrCorruptSnapshot)
	}
	r := &snapshotReader{b: b[1:]}
	s := harnessSnapshot{parallelism: r.count(math.MaxInt32), subtask: r.count(math.MaxInt32)}
	for r.err == nil && len(r.b) > 0 {
		var o harnessOperator
		o.ID = string(r.bytes())
		o.State = r.bytes()
		o.Watermark = r.varint()
		o.maxParallelism = r.count(math.MaxInt32)
		s.ops = append(s.ops, o)
	}
	if r.err != nil {
		return harnessSnapshot{}, r.err
	}
	return s, nil
}

func isRepackaged(b []byte) bool { return len(b) > 0 && b[0] == tagRepackaged }

// Repackage combines the Snapshots of the harnesses of every subtask of
// one parallelism (each taken with Options.Parallelism and its
// Options.Subtask, given in any order) into one snapshot, as Flink's
// AbstractStreamOperatorTestHarness.repackageState. A harness of any
// parallelism, with its own subtask, restores it (Restore) as a job
// restores a checkpoint (coordinator.Assign, Flink's
// StateAssignmentOperation): each key's state and timers go to the subtask
// owning its key group, operator state is redistributed, and each operator
// starts at the least watermark of the old subtasks whose state it takes.
// The new harness's MaxParallelism must be the old ones' when it sets one.
func Repackage(snaps ...[]byte) ([]byte, error) {
	if len(snaps) == 0 {
		return nil, fmt.Errorf("streamtest: Repackage of no snapshot")
	}
	seen := make([]bool, len(snaps))
	for i, b := range snaps {
		s, err := decodeSnapshot(b)
		if err != nil {
			return nil, fmt.Errorf("streamtest: Repackage: snapshot %d: %w", i, err)
		}
		if s.parallelism != len(snaps) || s.subtask >= len(snaps) || seen[s.subtask] {
			return nil, fmt.Errorf("streamtest: Repackage takes the snapshots of every subtask of one parallelism: snapshot %d is of subtask %d of %d, among %d snapshots", i, s.subtask, s.parallelism, len(snaps))
		}
		seen[s.subtask] = true
	}
	b := []byte{tagRepackaged}
	b = binary.AppendUvarint(b, uint64(len(snaps)))
	for _, s := range snaps {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// repackaged returns the checkpoint the snapshots of a Repackage make: per
// operator, in the order the snapshots name them, each old subtask's state
// and watermark.
func repackaged(b []byte) (*checkpoint.Snapshot, error) {
	r := &snapshotReader{b: b[1:]}
	n := r.count(uint64(len(b)))
	if r.err != nil || n == 0 {
		return nil, errCorrupt
	}
	snap := &checkpoint.Snapshot{Kind: checkpoint.Savepoint}
	byID := map[string]int{}
	for range n {
		s, err := decodeSnapshot(r.bytes())
		if r.err != nil {
			return nil, r.err
		}
		if err != nil {
			return nil, err
		}
		if s.parallelism != n || s.subtask >= n {
			return nil, errCorrupt
		}
		for _, o := range s.ops {
			i, ok := byID[o.ID]
			if !ok {
				i = len(snap.Operators)
				byID[o.ID] = i
				os := checkpoint.OperatorState{ID: o.ID, Name: o.ID, Parallelism: n, MaxParallelism: o.maxParallelism,
					Subtasks: make([]checkpoint.SubtaskState, n)}
				for j := range os.Subtasks {
					os.Subtasks[j].Watermark = math.MinInt64
				}
				snap.Operators = append(snap.Operators, os)
			}
			snap.Operators[i].Subtasks[s.subtask] = checkpoint.SubtaskState{State: o.State, Watermark: o.Watermark}
		}
	}
	if len(r.b) != 0 {
		return nil, errCorrupt
	}
	return snap, nil
}

// restoreRepackaged assigns the state of a Repackage to the harness's
// operators as a job's restore does, and keeps its subtask's part.
func (h *harnessCore[O]) restoreRepackaged(b []byte) error {
	snap, err := repackaged(b)
	if err != nil {
		return err
	}
	a, err := coordinator.Assign(snap, "the repackaged harness snapshots", h.r.Topology, false)
	if err != nil {
		return err
	}
	h.r.Restored(a)
	h.restore = &protocol.TaskRestore{}
	for _, t := range h.r.Topology.Tasks {
		if r := a.Task(t.Vertex, h.opts.Subtask); r != nil {
			h.restore.Operators = append(h.restore.Operators, r.Operators...)
		}
	}
	return nil
}

// Repartition turns the Snapshots of the harnesses of every subtask of an
// old parallelism (in subtask order) into one for each of n new subtasks,
// as Flink's AbstractStreamOperatorTestHarness.repartitionOperatorState:
// per operator, operator state is redistributed by
// state.RepartitionOperatorState; keyed state, which a harness restores
// keeping its own key groups, must come from one old subtask and goes to
// every new one (Repackage combines the keyed state of several).
func Repartition(old [][]byte, n int) ([][]byte, error) {
	var ids []string
	states := map[string][][]byte{}
	wms := map[string]int64{}
	maxP := map[string]int{}
	for i, b := range old {
		s, err := decodeSnapshot(b)
		if err != nil {
			return nil, err
		}
		for _, o := range s.ops {
			if _, ok := states[o.ID]; !ok {
				ids = append(ids, o.ID)
				states[o.ID] = make([][]byte, len(old))
				wms[o.ID] = o.Watermark
				maxP[o.ID] = o.maxParallelism
			}
			states[o.ID][i] = o.State
			wms[o.ID] = min(wms[o.ID], o.Watermark)
		}
	}
	out := make([]harnessSnapshot, n)
	for i := range out {
		out[i] = harnessSnapshot{parallelism: n, subtask: i}
	}
	for _, id := range ids {
		blobs := states[id]
		var keyed []byte
		operator := false
		for i, b := range blobs {
			switch {
			case len(b) == 0:
			case state.IsOperatorSnapshot(b):
				operator = true
			case keyed != nil:
				return nil, fmt.Errorf("streamtest: operator %s has keyed state in subtask %d and another: Repartition restores keyed state from one snapshot, Repackage from several", id, i)
			default:
				keyed = b
			}
		}
		parts := make([][]byte, n)
		switch {
		case operator && keyed != nil:
			return nil, fmt.Errorf("streamtest: operator %s has keyed and operator state", id)
		case operator:
			var err error
			if parts, err = state.RepartitionOperatorState(blobs, n); err != nil {
				return nil, err
			}
		default:
			for i := range parts {
				parts[i] = keyed
			}
		}
		for i, p := range parts {
			out[i].ops = append(out[i].ops, harnessOperator{
				OperatorSnapshot: protocol.OperatorSnapshot{ID: id, State: p, Watermark: wms[id]}, maxParallelism: maxP[id]})
		}
	}
	enc := make([][]byte, n)
	for i, s := range out {
		enc[i] = s.encode()
	}
	return enc, nil
}
