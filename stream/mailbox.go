package stream

import (
	"context"
	"sync"
	"time"

	"github.com/weirdata/weir/stream/source"
)

// mailKind is what the checkpoint coordinator asks of a task.
type mailKind uint8

const (
	// mailTrigger: a source subtask snapshots for checkpoint id and emits
	// its barrier.
	mailTrigger mailKind = iota
	// mailComplete: checkpoint id completed; the operators are notified.
	mailComplete
	// mailResume: a source subtask stopped by a savepoint that was then
	// aborted reads on.
	mailResume
	// mailAsyncDone: an asynchronous snapshot of the task was written
	// (posted by its goroutine).
	mailAsyncDone
)

type mail struct {
	kind mailKind
	id   int64
	// stop (a trigger): the source subtask reads nothing after its barrier
	// (stop-with-savepoint)
	stop bool
	// done, when set (a completion), is called once the operators were
	// notified
	done func()
}

// mailbox carries the coordinator's requests to a task (Flink's task
// mailbox): the task takes them between batches, on its own goroutine.
type mailbox struct {
	mu    sync.Mutex
	items []mail
	// wake receives when mail arrives; the task waits on it with its gate
	wake chan time.Time
	// cancel ends a source's read in progress, so that it sees the mail
	cancel context.CancelFunc
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan time.Time, 1)} }

func (m *mailbox) post(x mail) {
	m.mu.Lock()
	m.items = append(m.items, x)
	if m.cancel != nil {
		m.cancel()
	}
	m.mu.Unlock()
	select {
	case m.wake <- time.Time{}:
	default:
	}
}

// take returns the mail waiting, oldest first.
func (m *mailbox) take() []mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.items
	m.items = nil
	return out
}

// reading registers cancel as the read in progress (nil: none); it returns
// false when mail is waiting already.
func (m *mailbox) reading(cancel context.CancelFunc) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cancel = cancel
	return len(m.items) == 0
}

// splitValve holds a source's split assignments back between the snapshot
// of its enumerator and each reader's snapshot for the same checkpoint, as
// Flink's OperatorEventValve, so that no split is both pending in the one
// and held by the other.
type splitValve struct {
	source.Enumerator
	mu     sync.Mutex
	closed []bool
}

func newSplitValve(e source.Enumerator, parallelism int) *splitValve {
	return &splitValve{Enumerator: e, closed: make([]bool, parallelism)}
}

// Request answers Later while the subtask's valve is closed.
func (v *splitValve) Request(subtask int) (source.Grant, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if subtask >= 0 && subtask < len(v.closed) && v.closed[subtask] {
		return source.Grant{Status: source.Later, Retry: time.Millisecond}, nil
	}
	return v.Enumerator.Request(subtask)
}

// snapshotAndClose snapshots the enumerator and closes every subtask's
// valve.
func (v *splitValve) snapshotAndClose() source.EnumeratorState {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range v.closed {
		v.closed[i] = true
	}
	return v.Enumerator.Snapshot()
}

// open opens subtask i's valve: its reader snapshotted.
func (v *splitValve) open(i int) {
	v.mu.Lock()
	v.closed[i] = false
	v.mu.Unlock()
}
