package cli

import (
	"context"
	"sync"
)

// Terminator routes the signals of a weir process to its command: SIGINT
// (Interrupt) cancels the command's context; SIGTERM (Terminate) stops a
// stream job started with --savepoint-dir with a savepoint, as Flink's
// `flink stop`, and cancels any other command as SIGINT does.
type Terminator struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	stop   func() // the running job's stop-with-savepoint, if any
}

type terminatorKey struct{}

// WithTerminator returns a context that t's Interrupt cancels, and t.
func WithTerminator(parent context.Context) (context.Context, *Terminator) {
	ctx, cancel := context.WithCancel(parent)
	t := &Terminator{cancel: cancel}
	return context.WithValue(ctx, terminatorKey{}, t), t
}

// Interrupt cancels the command (SIGINT).
func (t *Terminator) Interrupt() { t.cancel() }

// Terminate stops the running stream job with a savepoint when it has a
// --savepoint-dir, and otherwise cancels the command (SIGTERM).
func (t *Terminator) Terminate() {
	t.mu.Lock()
	stop := t.stop
	t.stop = nil // a second SIGTERM cancels
	t.mu.Unlock()
	if stop != nil {
		stop()
		return
	}
	t.cancel()
}

// onTerminate makes fn what the Terminator of ctx (if any) does on SIGTERM
// until release is called.
func onTerminate(ctx context.Context, fn func()) (release func()) {
	t, _ := ctx.Value(terminatorKey{}).(*Terminator)
	if t == nil {
		return func() {}
	}
	t.mu.Lock()
	t.stop = fn
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.stop = nil
		t.mu.Unlock()
	}
}
