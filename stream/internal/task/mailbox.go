package task

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/stream/internal/protocol"
)

// mail is a message of the coordinator, or the task's own note that an
// asynchronous snapshot was written.
type mail struct {
	m         protocol.Message
	asyncDone bool
}

// mailbox carries the coordinator's messages to a task (Flink's task
// mailbox): the task takes them between batches, on its own goroutine. It
// is the task's protocol.Task. It also wakes the task for its operators'
// mail (opMail, see Mail).
type mailbox struct {
	mu    sync.Mutex
	items []mail
	// opMail says an operator's Mail was posted since the task last looked
	opMail atomic.Bool
	// wake receives when mail arrives; the task waits on it with its input
	wake chan time.Time
	// cancel ends a source's read in progress, so that it sees the mail
	cancel context.CancelFunc
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan time.Time, 1)} }

// Deliver posts m; it does not block.
func (m *mailbox) Deliver(x protocol.Message) { m.post(mail{m: x}) }

func (m *mailbox) post(x mail) {
	m.mu.Lock()
	m.items = append(m.items, x)
	if m.cancel != nil {
		m.cancel()
	}
	m.mu.Unlock()
	m.wakeUp()
}

// signal says an operator's Mail was posted; it does not block.
func (m *mailbox) signal() {
	m.opMail.Store(true)
	m.mu.Lock()
	if m.cancel != nil {
		m.cancel()
	}
	m.mu.Unlock()
	m.wakeUp()
}

func (m *mailbox) wakeUp() {
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
	return len(m.items) == 0 && !m.opMail.Load()
}
