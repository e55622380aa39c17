package task

import (
	"context"
	"io"
	"sync"
	"time"
)

// asyncCheckpoint is the task's part of a checkpoint while its
// asynchronous parts are written (Flink's AsyncCheckpointRunnable).
type asyncCheckpoint struct {
	id        int64
	alignment time.Duration
	wm        int64
	snaps     *snapshots          // the synchronous snapshots, by operator
	parts     map[int]AsyncPart   // by operator
	written   map[int]bytesBuffer // set by the writing goroutine before done closes
	err       error
	done      chan struct{}
}

// asyncSnapshots is a task's asynchronous checkpoints in progress, in
// barrier order.
type asyncSnapshots struct {
	on      bool // the task loop waits on its mailbox: snapshots may be asynchronous
	pending []*asyncCheckpoint
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// captureOperators takes every operator's snapshot for checkpoint id: the
// synchronous ones into buffers, the asynchronous parts captured.
func (rt *Runtime) captureOperators(id int64) (*asyncCheckpoint, error) {
	ac := &asyncCheckpoint{id: id, parts: map[int]AsyncPart{}, written: map[int]bytesBuffer{}, done: make(chan struct{}),
		snaps: &snapshots{states: make([][]byte, len(rt.ops))}}
	rt.shared = &sharedNames{id: id, names: make([][]string, len(rt.ops))}
	defer func() { rt.shared = nil }()
	for i, op := range rt.ops {
		if a, ok := op.(AsyncSnapshotter); ok {
			p, err := a.SnapshotAsync(id)
			if err != nil {
				ac.release()
				return nil, rt.operatorError(i, id, err)
			}
			if p != nil {
				ac.parts[i] = p
				continue
			}
		}
		var buf bytesBuffer
		if err := op.Snapshot(id, &buf); err != nil {
			ac.release()
			return nil, rt.operatorError(i, id, err)
		}
		ac.snaps.states[i] = buf
	}
	ac.snaps.shared = rt.shared.names
	return ac, nil
}

func (ac *asyncCheckpoint) release() {
	for _, p := range ac.parts {
		p.Release()
	}
}

// checkpointAsync is checkpoint with asynchronous snapshots: the
// operators capture their state, the barrier goes on, and a goroutine
// writes the captures; the task acknowledges once they are written, in
// barrier order (ackAsync), and processes records meanwhile.
func (rt *Runtime) checkpointAsync(id, meta int64, alignment time.Duration) error {
	ac, err := rt.captureOperators(id)
	if err != nil {
		return err
	}
	ac.alignment, ac.wm = alignment, rt.watermark
	a := &rt.async
	a.pending = append(a.pending, ac)
	if err := rt.event(barrier(id, meta)); err != nil {
		return err
	}
	if len(ac.parts) == 0 {
		close(ac.done)
		rt.ackAsync()
		return nil
	}
	if a.ctx == nil {
		a.ctx, a.cancel = context.WithCancel(rt.Context())
	}
	ctx, mb := a.ctx, rt.mb
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ac.write(ctx, rt)
		close(ac.done)
		mb.post(mail{asyncDone: true})
	}()
	return nil
}

// write writes the asynchronous parts, on the checkpoint's goroutine.
func (ac *asyncCheckpoint) write(ctx context.Context, rt *Runtime) {
	for i, p := range ac.parts {
		var buf bytesBuffer
		if _, err := p.WriteTo(&ctxWriter{ctx: ctx, w: &buf}); err != nil {
			ac.err = rt.operatorError(i, ac.id, errAsync(err))
			return
		}
		ac.written[i] = buf
	}
}

type asyncError struct{ err error }

func errAsync(err error) error { return asyncError{err} }
func (e asyncError) Error() string {
	return "asynchronous task checkpoint failed: " + e.err.Error()
}
func (e asyncError) Unwrap() error { return e.err }

// ackAsync acknowledges the asynchronous checkpoints written, in barrier
// order, releasing their captures; one whose write failed is declined.
func (rt *Runtime) ackAsync() {
	a := &rt.async
	for len(a.pending) > 0 {
		ac := a.pending[0]
		select {
		case <-ac.done:
		default:
			return
		}
		a.pending = a.pending[1:]
		ac.release()
		if ac.err != nil {
			rt.decline(ac.id, ac.err)
			continue
		}
		for i, b := range ac.written {
			ac.snaps.states[i] = b
		}
		rt.ack(ac.id, ac.snaps, ac.wm, nil, ac.alignment)
	}
}

// endAsync waits for the asynchronous snapshots in progress when the task
// ends: it acknowledges them when the task finished (before the task
// counts as finished), and otherwise stops their writes and drops them.
// Every capture is released.
func (rt *Runtime) endAsync(finished bool) {
	a := &rt.async
	if !finished && a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	if finished && rt.ck != nil {
		rt.ackAsync()
	}
	for _, ac := range a.pending {
		ac.release()
	}
	a.pending = nil
	if a.cancel != nil {
		a.cancel()
	}
}

// ctxWriter fails its writes once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
