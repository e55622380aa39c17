package stream

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
)

// jobRestore is the state a job opens its operators from, as a checkpoint
// or savepoint gives it (Flink's StateAssignmentOperation): per node and
// subtask at the job's parallelism the snapshots it restores (operator
// state already redistributed by state.RepartitionOperatorState, one
// snapshot; keyed state every old subtask's whose key groups overlap the
// subtask's), and per source the enumerator's state (its pending splits,
// Flink's coordinator state).
type jobRestore struct {
	where string // the snapshot restored, for messages
	ops   map[*node][][][]byte
	enums map[*node]*source.EnumeratorState
	// channels is the channel state of an unaligned checkpoint by edge
	// (Env.edgeKey), in the order a restore sends it again
	channels map[string][]channelEntry
	// finished are the operators recorded as finished (FLIP-147)
	finished map[*node]bool
}

// snapshot returns the first snapshot subtask i of n opens from, or nil.
func (r *jobRestore) snapshot(n *node, i int) []byte {
	if s := r.all(n, i); len(s) > 0 {
		return s[0]
	}
	return nil
}

// all returns every snapshot subtask i of n opens from.
func (r *jobRestore) all(n *node, i int) [][]byte {
	if s := r.ops[n]; i < len(s) {
		return s[i]
	}
	return nil
}

// enumerator returns the enumerator state source n starts from, or nil.
func (r *jobRestore) enumerator(n *node) *source.EnumeratorState {
	if r == nil {
		return nil
	}
	return r.enums[n]
}

// single wraps per-subtask snapshots as a jobRestore's lists of one.
func single(snaps [][]byte) [][][]byte {
	out := make([][][]byte, len(snaps))
	for i, s := range snaps {
		if s != nil {
			out[i] = [][]byte{s}
		}
	}
	return out
}

// buildRestore maps snap's state onto the program's operators by stable id,
// with Flink's rules: state of an operator the program lacks fails the
// restore unless allowNonRestored; a keyed operator keeps the snapshot's
// max parallelism when the program did not set one, and fails when it set
// another; its subtasks restore every old subtask whose key groups overlap
// theirs. Operator state is redistributed (state.RepartitionOperatorState),
// other state (broadcast state) copied to every new subtask. Called after
// resolve, before the edges are made.
func (e *Env) buildRestore(snap *checkpoint.Snapshot, where string, allowNonRestored bool) (*jobRestore, error) {
	ids := e.operatorIDs()
	byID := make(map[string]*node, len(ids))
	for n, id := range ids {
		byID[id] = n
	}
	r := &jobRestore{where: where, ops: map[*node][][][]byte{}, enums: map[*node]*source.EnumeratorState{}}
	if err := e.restoreChannels(r, snap, where, allowNonRestored); err != nil {
		return nil, err
	}
	for i := range snap.Operators {
		os := &snap.Operators[i]
		n := byID[os.ID]
		if n == nil {
			if allowNonRestored || !hasState(os) {
				continue
			}
			return nil, fmt.Errorf("stream: Failed to rollback to checkpoint/savepoint %s. Cannot map checkpoint/savepoint state for operator %s to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.", where, os.ID)
		}
		if os.Coordinator != nil {
			st, err := decodeEnumeratorState(os.Coordinator)
			if err != nil {
				return nil, fmt.Errorf("stream: %s: restore: %w", n.name, err)
			}
			r.enums[n] = st
		}
		if os.Finished {
			if r.finished == nil {
				r.finished = map[*node]bool{}
			}
			r.finished[n] = true
		}
		old := make([][]byte, len(os.Subtasks))
		any := false
		for j, st := range os.Subtasks {
			old[j] = st.State
			any = any || len(st.State) > 0
		}
		if !any {
			continue
		}
		switch {
		case n.keyed:
			if os.MaxParallelism != n.maxP {
				if e.opts.MaxParallelism != 0 {
					return nil, fmt.Errorf("stream: The maximum parallelism (%d) with which the latest checkpoint of the execution job vertex %s has been taken and the current maximum parallelism (%d) changed. This is currently not supported.", os.MaxParallelism, n.name, n.maxP)
				}
				if os.MaxParallelism < n.parallelism {
					return nil, fmt.Errorf("stream: %s: the parallelism %d is above the max parallelism %d of the restored state", n.name, n.parallelism, os.MaxParallelism)
				}
				n.maxP = os.MaxParallelism
			}
			subs := make([][][]byte, n.parallelism)
			for i := range subs {
				mine, err := state.RangeForOperatorIndex(n.maxP, n.parallelism, i)
				if err != nil {
					return nil, err
				}
				for j, b := range old {
					theirs, err := state.RangeForOperatorIndex(n.maxP, len(old), j)
					if err != nil {
						return nil, err
					}
					if len(b) > 0 && mine.Intersect(theirs).Len() > 0 {
						subs[i] = append(subs[i], b)
					}
				}
			}
			r.ops[n] = subs
		case state.IsOperatorSnapshot(firstNonEmpty(old)):
			parts, err := state.RepartitionOperatorState(old, n.parallelism)
			if err != nil {
				return nil, fmt.Errorf("stream: %s: restore: %w", n.name, err)
			}
			r.ops[n] = single(parts)
		default:
			subs := make([][]byte, n.parallelism)
			for i := range subs {
				subs[i] = old[i%len(old)]
			}
			r.ops[n] = single(subs)
		}
	}
	return r, nil
}

// restoreChannels gathers the channel state of snap by edge. Every edge
// must be in the program, unless allowNonRestored (its records are then
// dropped). Records in flight on a keyed, rebalanced or forward edge are
// sent again through the edge's partitioner at any parallelism, as Flink
// redistributes them; on a broadcast edge each goes to its old consumer,
// so a restore at another parallelism of its producer or consumer is
// refused.
func (e *Env) restoreChannels(r *jobRestore, snap *checkpoint.Snapshot, where string, allowNonRestored bool) error {
	edges := map[string]*edge{}
	for _, n := range e.nodes {
		for _, in := range n.inputs {
			edges[e.edgeKey(in)] = in
		}
	}
	for _, os := range snap.Operators {
		for j, st := range os.Subtasks {
			es, err := decodeChannelState(st.InFlight)
			if err != nil {
				return fmt.Errorf("stream: restore %s: %s subtask %d: %w", where, os.Name, j, err)
			}
			for _, ce := range es {
				ed := edges[ce.Edge]
				if ed == nil || chained(ed) {
					if allowNonRestored {
						continue
					}
					return fmt.Errorf("stream: restore %s: records in flight on edge %s, which the program does not have between two tasks; set AllowNonRestoredState to drop them", where, ce.Edge)
				}
				if ed.part.kind == partBroadcast && (ce.Producers != ed.from.parallelism || ce.Consumers != ed.to.parallelism) {
					return fmt.Errorf("stream: restore %s: the unaligned checkpoint has records in flight on the broadcast edge %s -> %s at parallelism %d -> %d; a restore at %d -> %d is not supported: restore at the same parallelism, or from an aligned checkpoint or savepoint", where, ed.from.name, ed.to.name, ce.Producers, ce.Consumers, ed.from.parallelism, ed.to.parallelism)
				}
				if r.channels == nil {
					r.channels = map[string][]channelEntry{}
				}
				r.channels[ce.Edge] = append(r.channels[ce.Edge], ce)
			}
		}
	}
	for _, es := range r.channels {
		sortEntries(es)
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

// encodeEnumeratorState writes a source enumerator's state: the pending
// splits (each its MarshalBinary form) and the files discovered, each list
// counted and each item length-prefixed.
func encodeEnumeratorState(st source.EnumeratorState) ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(len(st.Pending)))
	for _, s := range st.Pending {
		enc, err := s.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(enc)))
		b = append(b, enc...)
	}
	b = binary.AppendUvarint(b, uint64(len(st.Processed)))
	for _, p := range st.Processed {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b, nil
}

var errEnumeratorState = errors.New("corrupt source enumerator state")

func decodeEnumeratorState(b []byte) (*source.EnumeratorState, error) {
	item := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errEnumeratorState
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, nil
	}
	count := func() (int, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return 0, errEnumeratorState
		}
		b = b[k:]
		return int(n), nil
	}
	st := &source.EnumeratorState{}
	n, err := count()
	if err != nil {
		return nil, err
	}
	for range n {
		enc, err := item()
		if err != nil {
			return nil, err
		}
		var s source.Split
		if err := s.UnmarshalBinary(enc); err != nil {
			return nil, err
		}
		st.Pending = append(st.Pending, s)
	}
	if n, err = count(); err != nil {
		return nil, err
	}
	for range n {
		p, err := item()
		if err != nil {
			return nil, err
		}
		st.Processed = append(st.Processed, string(p))
	}
	if len(b) != 0 {
		return nil, errEnumeratorState
	}
	return st, nil
}
