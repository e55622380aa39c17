package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
)

// Lifecycle is a rich function's Open and Close, either nil: Close is
// called once, on every path, only after Open was.
type Lifecycle struct {
	Open, Close func() error
	opened      bool
}

func (l *Lifecycle) open() error {
	l.opened = true
	if l.Open != nil {
		return l.Open()
	}
	return nil
}

func (l *Lifecycle) close() error {
	if !l.opened || l.Close == nil {
		return nil
	}
	l.opened = false
	return l.Close()
}

// RichMap is Map with a function that can fail and a Lifecycle (Flink's
// StreamMap of a RichMapFunction).
type RichMap[T, U any] struct {
	task.Base
	life Lifecycle
	fn   func(T) (U, error)
	out  *core.Emitter[U]
}

// NewRichMap returns the RichMap of fn with life into out.
func NewRichMap[T, U any](life Lifecycle, fn func(T) (U, error), out core.Output[U], size int) *RichMap[T, U] {
	return &RichMap[T, U]{life: life, fn: fn, out: core.NewEmitter(out, size)}
}

// Open opens the function.
func (m *RichMap[T, U]) Open(*task.Setup) error { return m.life.open() }

// Close closes the function.
func (m *RichMap[T, U]) Close() error { return m.life.close() }

// Push maps b.
func (m *RichMap[T, U]) Push(b []core.Record[T]) error {
	for i := range b {
		u, err := m.fn(b[i].Value)
		if err != nil {
			return err
		}
		m.out.Emit(u, b[i].Timestamp)
	}
	return m.out.Flush()
}

// RichFilter is Filter with a function that can fail and a Lifecycle.
type RichFilter[T any] struct {
	task.Base
	life Lifecycle
	keep func(T) (bool, error)
	out  *core.Emitter[T]
}

// NewRichFilter returns the RichFilter of keep with life into out.
func NewRichFilter[T any](life Lifecycle, keep func(T) (bool, error), out core.Output[T], size int) *RichFilter[T] {
	return &RichFilter[T]{life: life, keep: keep, out: core.NewEmitter(out, size)}
}

// Open opens the function.
func (f *RichFilter[T]) Open(*task.Setup) error { return f.life.open() }

// Close closes the function.
func (f *RichFilter[T]) Close() error { return f.life.close() }

// Push filters b.
func (f *RichFilter[T]) Push(b []core.Record[T]) error {
	for i := range b {
		ok, err := f.keep(b[i].Value)
		if err != nil {
			return err
		}
		if ok {
			f.out.Emit(b[i].Value, b[i].Timestamp)
		}
	}
	return f.out.Flush()
}

// RichFlatMap is FlatMap with a function that can fail, collecting into
// the API's collector Col (bound to st), and a Lifecycle.
type RichFlatMap[T, U, Col any] struct {
	task.Base
	life Lifecycle
	fn   func(T, Col) error
	col  Col
	st   *Ctx
	out  *core.Emitter[U]
}

// NewRichFlatMap returns the RichFlatMap of fn with life; col emits into
// out with st's timestamp.
func NewRichFlatMap[T, U, Col any](life Lifecycle, fn func(T, Col) error, col Col, st *Ctx, out *core.Emitter[U]) *RichFlatMap[T, U, Col] {
	return &RichFlatMap[T, U, Col]{life: life, fn: fn, col: col, st: st, out: out}
}

// Open opens the function.
func (m *RichFlatMap[T, U, Col]) Open(*task.Setup) error { return m.life.open() }

// Close closes the function.
func (m *RichFlatMap[T, U, Col]) Close() error { return m.life.close() }

// Push calls the function per record of b.
func (m *RichFlatMap[T, U, Col]) Push(b []core.Record[T]) error {
	for i := range b {
		m.st.TS = b[i].Timestamp
		if err := m.fn(b[i].Value, m.col); err != nil {
			return err
		}
	}
	return m.out.Flush()
}

// RichCoFlatMap is CoFlatMap with functions that can fail, collecting
// into the API's collector Col (bound to st), and a Lifecycle (Flink's
// CoStreamFlatMap of a RichCoFlatMapFunction).
type RichCoFlatMap[A, B, O, Col any] struct {
	task.Base
	life   Lifecycle
	f1     func(A, Col) error
	f2     func(B, Col) error
	col    Col
	st     *Ctx
	out    *core.Emitter[O]
	inputs []any
}

// NewRichCoFlatMap returns the RichCoFlatMap of f1 and f2 with life; col
// emits into out with st's timestamp.
func NewRichCoFlatMap[A, B, O, Col any](life Lifecycle, f1 func(A, Col) error, f2 func(B, Col) error, col Col, st *Ctx, out *core.Emitter[O]) *RichCoFlatMap[A, B, O, Col] {
	m := &RichCoFlatMap[A, B, O, Col]{life: life, f1: f1, f2: f2, col: col, st: st, out: out}
	m.inputs = []any{core.PushFunc[A](func(b []core.Record[A]) error { return push(m, b, m.f1) }),
		core.PushFunc[B](func(b []core.Record[B]) error { return push(m, b, m.f2) })}
	return m
}

// push calls f per record of b with m's collector.
func push[A, B, O, Col, T any](m *RichCoFlatMap[A, B, O, Col], b []core.Record[T], f func(T, Col) error) error {
	for i := range b {
		m.st.TS = b[i].Timestamp
		if err := f(b[i].Value, m.col); err != nil {
			return err
		}
	}
	return m.out.Flush()
}

// Inputs returns the operator's two inputs.
func (m *RichCoFlatMap[A, B, O, Col]) Inputs() []any { return m.inputs }

// Open opens the functions.
func (m *RichCoFlatMap[A, B, O, Col]) Open(*task.Setup) error { return m.life.open() }

// Close closes the functions.
func (m *RichCoFlatMap[A, B, O, Col]) Close() error { return m.life.close() }
