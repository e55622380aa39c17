package op

import (
	"bytes"
	"errors"
	"io"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
)

// ProcessFns are a ProcessFunction's functions, typed by the API's context
// C and collector Col (stream.ProcessFunction).
type ProcessFns[I, C, Col any] struct {
	Open            func() error
	ProcessElement  func(v I, ctx C, out Col) error
	Close           func() error
	InitializeState func(store *state.OperatorStore, restored bool) error
	SnapshotState   func(checkpointID int64) error
	// CheckpointComplete and CheckpointAborted, when set, are told of
	// completed and aborted checkpoints (Flink's CheckpointListener).
	CheckpointComplete func(id int64) error
	CheckpointAborted  func(id int64) error
}

// Process is Flink's ProcessOperator: a function per record of a plain
// stream, with operator state when the function keeps some.
type Process[I, O, C, Col any] struct {
	task.Base
	fn     ProcessFns[I, C, Col]
	ctx    C
	col    Col
	st     *Ctx
	outs   *Outputs[O]
	opened bool
	name   string
	store  *state.OperatorStore // with InitializeState
}

// NewProcess returns the operator of fn, whose context ctx reads st.
func NewProcess[I, O, C, Col any](fn ProcessFns[I, C, Col], ctx C, col Col, st *Ctx, outs *Outputs[O]) *Process[I, O, C, Col] {
	return &Process[I, O, C, Col]{fn: fn, ctx: ctx, col: col, st: st, outs: outs}
}

// Open restores the function's operator state and opens it.
func (p *Process[I, O, C, Col]) Open(s *task.Setup) error {
	p.name = s.Name
	if p.fn.InitializeState != nil {
		p.store = state.NewOperatorStore(state.OperatorOptions{Name: s.Name, Memory: s.Memory()})
		snap := s.RestoredOne()
		if snap != nil {
			if err := p.store.Restore(bytes.NewReader(snap)); err != nil {
				return err
			}
		}
		if err := p.fn.InitializeState(p.store, snap != nil); err != nil {
			return err
		}
	}
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

// Snapshot lets the function update its operator state and writes it.
func (p *Process[I, O, C, Col]) Snapshot(id int64, w io.Writer) error {
	if p.store == nil {
		return nil
	}
	if p.fn.SnapshotState != nil {
		if err := p.fn.SnapshotState(id); err != nil {
			return err
		}
	}
	if err := p.store.Err(); err != nil {
		return err
	}
	return p.store.Snapshot(w)
}

// Close closes the function and disposes of its state.
func (p *Process[I, O, C, Col]) Close() error {
	var err error
	if p.fn.Close != nil && p.opened {
		p.opened = false
		err = p.fn.Close()
	}
	if p.store != nil {
		err = errors.Join(err, p.store.Dispose())
		p.store = nil
	}
	return err
}

// Push calls the function per record of b.
func (p *Process[I, O, C, Col]) Push(b []core.Record[I]) error {
	for i := range b {
		p.st.TS = b[i].Timestamp
		if err := p.fn.ProcessElement(b[i].Value, p.ctx, p.col); err != nil {
			return err
		}
	}
	if p.store != nil {
		if err := p.store.Err(); err != nil {
			return err
		}
	}
	return p.outs.Flush()
}

// CoProcessFns are a CoProcessFunction's functions
// (stream.CoProcessFunction).
type CoProcessFns[A, B, C, Col any] struct {
	Open            func() error
	ProcessElement1 func(v A, ctx C, out Col) error
	ProcessElement2 func(v B, ctx C, out Col) error
	Close           func() error
	// CheckpointComplete and CheckpointAborted, when set, are told of
	// completed and aborted checkpoints (Flink's CheckpointListener).
	CheckpointComplete func(id int64) error
	CheckpointAborted  func(id int64) error
}

// CoProcess is Flink's CoProcessOperator: a function per record of each
// of two plain streams.
type CoProcess[A, B, O, C, Col any] struct {
	task.Base
	fn     CoProcessFns[A, B, C, Col]
	ctx    C
	col    Col
	st     *Ctx
	outs   *Outputs[O]
	opened bool
}

// NewCoProcess returns the operator of fn, whose context ctx reads st.
func NewCoProcess[A, B, O, C, Col any](fn CoProcessFns[A, B, C, Col], ctx C, col Col, st *Ctx, outs *Outputs[O]) *CoProcess[A, B, O, C, Col] {
	return &CoProcess[A, B, O, C, Col]{fn: fn, ctx: ctx, col: col, st: st, outs: outs}
}

// Open opens the function.
func (p *CoProcess[A, B, O, C, Col]) Open(*task.Setup) error {
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

// Close closes the function.
func (p *CoProcess[A, B, O, C, Col]) Close() error {
	if p.fn.Close != nil && p.opened {
		p.opened = false
		return p.fn.Close()
	}
	return nil
}

// Inputs returns the operator's two inputs.
func (p *CoProcess[A, B, O, C, Col]) Inputs() []any {
	return []any{core.PushFunc[A](func(b []core.Record[A]) error {
		for i := range b {
			p.st.TS = b[i].Timestamp
			if err := p.fn.ProcessElement1(b[i].Value, p.ctx, p.col); err != nil {
				return err
			}
		}
		return p.outs.Flush()
	}), core.PushFunc[B](func(b []core.Record[B]) error {
		for i := range b {
			p.st.TS = b[i].Timestamp
			if err := p.fn.ProcessElement2(b[i].Value, p.ctx, p.col); err != nil {
				return err
			}
		}
		return p.outs.Flush()
	})}
}

// notify calls fn, if set, with checkpoint id.
func notify(fn func(int64) error, id int64) error {
	if fn == nil {
		return nil
	}
	return fn(id)
}

// NotifyCheckpointComplete tells the function.
func (p *Process[I, O, C, Col]) NotifyCheckpointComplete(id int64) error {
	return notify(p.fn.CheckpointComplete, id)
}

// NotifyCheckpointAborted tells the function.
func (p *Process[I, O, C, Col]) NotifyCheckpointAborted(id int64) error {
	return notify(p.fn.CheckpointAborted, id)
}

// NotifyCheckpointComplete tells the function.
func (p *CoProcess[A, B, O, C, Col]) NotifyCheckpointComplete(id int64) error {
	return notify(p.fn.CheckpointComplete, id)
}

// NotifyCheckpointAborted tells the function.
func (p *CoProcess[A, B, O, C, Col]) NotifyCheckpointAborted(id int64) error {
	return notify(p.fn.CheckpointAborted, id)
}
