package stream

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/weirdata/weir/flow"
)

// asyncSnapshotter is an operator whose snapshot has a synchronous part,
// taken on the barrier, and an asynchronous one, written off the task
// goroutine while the task goes on processing (Flink's
// AsyncSnapshotCallable): a keyed operator on the heap backend captures
// its state copy-on-write (state.Backend.Capture).
type asyncSnapshotter interface {
	// snapshotAsync takes the synchronous part of the snapshot for
	// checkpoint id; a nil part means the operator snapshots
	// synchronously (snapshot).
	snapshotAsync(id int64) (asyncPart, error)
}

// asyncPart is the asynchronous part of an operator's snapshot.
type asyncPart interface {
	// WriteTo writes the snapshot; it runs on another goroutine.
	WriteTo(w io.Writer) (int64, error)
	// Release ends the part on the task goroutine, once WriteTo returned
	// or will not be called.
	Release()
}

// asyncCheckpoint is the task's part of a checkpoint while its
// asynchronous parts are written (Flink's AsyncCheckpointRunnable).
type asyncCheckpoint struct {
	id        int64
	alignment time.Duration
	states    map[*node][]byte // the synchronous snapshots
	parts     map[*node]asyncPart
	// written and err are set by the writing goroutine before done closes
	written map[*node][]byte
	err     error
	done    chan struct{}
}

// asyncWriteHook, when set (by tests), runs on the goroutine of each
// asynchronous snapshot before it writes (an error fails the write) and
// after the task was told it was written.
var asyncWriteHook func(id int64, written bool) error

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
func (rt *taskRuntime) captureOperators(id int64) (*asyncCheckpoint, error) {
	ac := &asyncCheckpoint{id: id, states: map[*node][]byte{}, parts: map[*node]asyncPart{}, written: map[*node][]byte{},
		done: make(chan struct{})}
	for i, op := range rt.ops {
		n := rt.nodes[len(rt.nodes)-1-i]
		if a, ok := op.(asyncSnapshotter); ok {
			p, err := a.snapshotAsync(id)
			if err != nil {
				ac.release()
				return nil, fmt.Errorf("stream: %s: checkpoint %d: %w", n.name, id, err)
			}
			if p != nil {
				ac.parts[n] = p
				continue
			}
		}
		var buf bytesBuffer
		if err := op.snapshot(id, &buf); err != nil {
			ac.release()
			return nil, fmt.Errorf("stream: %s: checkpoint %d: %w", n.name, id, err)
		}
		if len(buf) > 0 {
			ac.states[n] = buf
		}
	}
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
func (rt *taskRuntime) checkpointAsync(id int64, alignment time.Duration) error {
	ac, err := rt.captureOperators(id)
	if err != nil {
		return err
	}
	ac.alignment = alignment
	a := &rt.async
	a.pending = append(a.pending, ac)
	if err := rt.event(flow.Event{Kind: flow.Barrier, Value: id}); err != nil {
		return err
	}
	if len(ac.parts) == 0 {
		close(ac.done)
		rt.ackAsync()
		return nil
	}
	if a.ctx == nil {
		parent := context.Background()
		if rt.tc != nil {
			parent = rt.tc.Context()
		}
		a.ctx, a.cancel = context.WithCancel(parent)
	}
	ctx, mb := a.ctx, rt.ck.mb
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if asyncWriteHook != nil {
			ac.err = asyncWriteHook(id, false)
		}
		if ac.err == nil {
			ac.write(ctx)
		}
		close(ac.done)
		mb.post(mail{kind: mailAsyncDone, id: id})
		if asyncWriteHook != nil {
			_ = asyncWriteHook(id, true)
		}
	}()
	return nil
}

// write writes the asynchronous parts, on the checkpoint's goroutine.
func (ac *asyncCheckpoint) write(ctx context.Context) {
	for n, p := range ac.parts {
		var buf bytesBuffer
		if _, err := p.WriteTo(&ctxWriter{ctx: ctx, w: &buf}); err != nil {
			ac.err = fmt.Errorf("stream: %s: checkpoint %d: asynchronous task checkpoint failed: %w", n.name, ac.id, err)
			return
		}
		if len(buf) > 0 {
			ac.written[n] = buf
		}
	}
}

// ackAsync acknowledges the asynchronous checkpoints written, in barrier
// order, releasing their captures; one whose write failed is declined.
func (rt *taskRuntime) ackAsync() {
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
			rt.ck.c.decline(ac.id, rt.ck.key, ac.err)
			continue
		}
		maps.Copy(ac.states, ac.written)
		rt.ck.c.ack(ac.id, rt.ck.key, ac.states, nil, ac.alignment)
	}
}

// endAsync waits for the asynchronous snapshots in progress when the task
// ends: it acknowledges them when the task finished (before the task
// counts as finished), and otherwise stops their writes and drops them.
// Every capture is released.
func (rt *taskRuntime) endAsync(finished bool) {
	a := &rt.async
	if !finished && a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	if finished {
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

// snapshotAsync captures the heap backend's state copy-on-write; an
// incremental snapshot of a disk backend is synchronous.
func (k *keyedBase[K]) snapshotAsync(id int64) (asyncPart, error) {
	if k.incremental != nil && !k.incremental.isSavepoint(id) {
		return nil, nil
	}
	c, err := k.backend.Capture(k.backend.Groups())
	if err != nil {
		return nil, err
	}
	return c, nil
}
