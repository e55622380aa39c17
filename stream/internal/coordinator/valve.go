package coordinator

import (
	"sync"
	"time"

	"github.com/weirdata/weir/stream/source"
)

// Valve holds a source's split assignments back between the snapshot of
// its enumerator and each reader's snapshot for the same checkpoint, as
// Flink's OperatorEventValve, so that no split is both pending in the one
// and held by the other. The coordinator closes it when it snapshots the
// enumerator and opens a subtask's side when that subtask acknowledged
// (or declined) the checkpoint.
type Valve struct {
	source.Enumerator
	mu     sync.Mutex
	closed []bool
}

// NewValve returns the valve of enumerator e of a source of parallelism
// subtasks.
func NewValve(e source.Enumerator, parallelism int) *Valve {
	return &Valve{Enumerator: e, closed: make([]bool, parallelism)}
}

// Request answers Later while the subtask's valve is closed.
func (v *Valve) Request(subtask int) (source.Grant, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if subtask >= 0 && subtask < len(v.closed) && v.closed[subtask] {
		return source.Grant{Status: source.Later, Retry: time.Millisecond}, nil
	}
	return v.Enumerator.Request(subtask)
}

// snapshotAndClose snapshots the enumerator and closes every subtask's
// side.
func (v *Valve) snapshotAndClose() source.EnumeratorState {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range v.closed {
		v.closed[i] = true
	}
	return v.Enumerator.Snapshot()
}

// open opens subtask i's side: its reader snapshotted.
func (v *Valve) open(i int) {
	v.mu.Lock()
	if i >= 0 && i < len(v.closed) {
		v.closed[i] = false
	}
	v.mu.Unlock()
}
