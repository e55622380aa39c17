package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
)

// Map applies a function to every record; the result keeps the record's
// timestamp.
type Map[T, U any] struct {
	task.Base
	fn  func(T) U
	out *core.Emitter[U]
}

// NewMap returns the Map of fn into out.
func NewMap[T, U any](fn func(T) U, out core.Output[U], size int) *Map[T, U] {
	return &Map[T, U]{fn: fn, out: core.NewEmitter(out, size)}
}

// Push maps b.
func (m *Map[T, U]) Push(b []core.Record[T]) error {
	for i := range b {
		m.out.Emit(m.fn(b[i].Value), b[i].Timestamp)
	}
	return m.out.Flush()
}

// Filter keeps the records for which a function returns true.
type Filter[T any] struct {
	task.Base
	keep func(T) bool
	out  *core.Emitter[T]
}

// NewFilter returns the Filter of keep into out.
func NewFilter[T any](keep func(T) bool, out core.Output[T], size int) *Filter[T] {
	return &Filter[T]{keep: keep, out: core.NewEmitter(out, size)}
}

// Push filters b.
func (f *Filter[T]) Push(b []core.Record[T]) error {
	for i := range b {
		if f.keep(b[i].Value) {
			f.out.Emit(b[i].Value, b[i].Timestamp)
		}
	}
	return f.out.Flush()
}

// FlatMap calls a function for every record with an emit function;
// everything it emits keeps the record's timestamp.
type FlatMap[T, U any] struct {
	task.Base
	fn   func(T, func(U))
	emit func(U)
	ts   int64
	out  *core.Emitter[U]
}

// NewFlatMap returns the FlatMap of fn into out.
func NewFlatMap[T, U any](fn func(T, func(U)), out core.Output[U], size int) *FlatMap[T, U] {
	m := &FlatMap[T, U]{fn: fn, out: core.NewEmitter(out, size)}
	m.emit = func(u U) { m.out.Emit(u, m.ts) }
	return m
}

// Push calls the function per record of b.
func (m *FlatMap[T, U]) Push(b []core.Record[T]) error {
	for i := range b {
		m.ts = b[i].Timestamp
		m.fn(b[i].Value, m.emit)
	}
	return m.out.Flush()
}

// Union passes its inputs' batches on, in no particular order between
// them.
type Union[T any] struct {
	task.Base
	Out core.Output[T]
}

// Push passes b on.
func (u *Union[T]) Push(b []core.Record[T]) error { return u.Out.Push(b) }

// CoFlatMap calls one function for the records of its first input and
// another for those of its second, each with an emit function.
type CoFlatMap[A, B, O any] struct {
	task.Base
	f1   func(A, func(O))
	f2   func(B, func(O))
	out  *core.Emitter[O]
	ts   int64
	emit func(O)
}

// NewCoFlatMap returns the CoFlatMap of f1 and f2 into out.
func NewCoFlatMap[A, B, O any](f1 func(A, func(O)), f2 func(B, func(O)), out core.Output[O], size int) *CoFlatMap[A, B, O] {
	m := &CoFlatMap[A, B, O]{f1: f1, f2: f2, out: core.NewEmitter(out, size)}
	m.emit = func(o O) { m.out.Emit(o, m.ts) }
	return m
}

// Inputs returns the operator's two inputs.
func (m *CoFlatMap[A, B, O]) Inputs() []any {
	return []any{core.PushFunc[A](func(b []core.Record[A]) error {
		for i := range b {
			m.ts = b[i].Timestamp
			m.f1(b[i].Value, m.emit)
		}
		return m.out.Flush()
	}), core.PushFunc[B](func(b []core.Record[B]) error {
		for i := range b {
			m.ts = b[i].Timestamp
			m.f2(b[i].Value, m.emit)
		}
		return m.out.Flush()
	})}
}

// Sink writes batches with a function.
type Sink[T any] struct {
	task.Base
	Write func([]core.Record[T]) error
}

// Push writes b.
func (s *Sink[T]) Push(b []core.Record[T]) error { return s.Write(b) }
