package stream

import "github.com/weirdata/weir/stream/source"

// jobRestore is the state a job opens its operators from, as a checkpoint
// or savepoint gives it: per node, the snapshot of each subtask at the job's
// parallelism (operator state already redistributed by
// state.RepartitionOperatorState), and per source the enumerator's state
// (its pending splits, Flink's coordinator state).
type jobRestore struct {
	ops   map[*node][][]byte
	enums map[*node]*source.EnumeratorState
}

// snapshot returns the snapshot subtask i of n opens from, or nil.
func (r *jobRestore) snapshot(n *node, i int) []byte {
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
