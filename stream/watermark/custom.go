package watermark

// Funcs makes a Generator of two functions, for custom generators written
// inline; a nil function does nothing.
type Funcs[T any] struct {
	Event    func(event T, timestamp int64, out Output)
	Periodic func(out Output)
}

// OnEvent calls f.Event.
func (f Funcs[T]) OnEvent(event T, timestamp int64, out Output) {
	if f.Event != nil {
		f.Event(event, timestamp, out)
	}
}

// OnPeriodicEmit calls f.Periodic.
func (f Funcs[T]) OnPeriodicEmit(out Output) {
	if f.Periodic != nil {
		f.Periodic(out)
	}
}

// Periodic returns a periodic generator: observe sees every event, and every
// periodic emission emits current()'s watermark (nothing when ok is false).
func Periodic[T any](observe func(event T, timestamp int64), current func() (wm int64, ok bool)) Generator[T] {
	return Funcs[T]{
		Event: func(event T, timestamp int64, _ Output) { observe(event, timestamp) },
		Periodic: func(out Output) {
			if wm, ok := current(); ok {
				out.EmitWatermark(wm)
			}
		},
	}
}

// Punctuated returns a punctuated generator: it emits a watermark on the
// event itself when mark says so (an event carrying a watermark, as Flink's
// punctuated generators do), and nothing periodically.
func Punctuated[T any](mark func(event T, timestamp int64) (wm int64, ok bool)) Generator[T] {
	return Funcs[T]{Event: func(event T, timestamp int64, out Output) {
		if wm, ok := mark(event, timestamp); ok {
			out.EmitWatermark(wm)
		}
	}}
}
