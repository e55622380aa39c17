package stream

// FlatMap calls fn for every record with an emit function; everything it
// emits keeps the record's timestamp.
func FlatMap[T, U any](ds DataStream[T], fn func(v T, emit func(U))) DataStream[U] {
	n := addNode[U](ds.n.env, "FlatMap", ds.edge())
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &flatMapOp[T, U]{fn: fn, out: newEmitter(outOf[U](outs, ""), rt.batchSize)}
		op.emit = func(u U) { op.out.emit(u, op.ts) }
		return []any{op}, op, nil
	}
	return DataStream[U]{n: n}
}

type flatMapOp[T, U any] struct {
	base
	fn   func(T, func(U))
	emit func(U)
	ts   int64
	out  *emitter[U]
}

func (m *flatMapOp[T, U]) push(b []Record[T]) error {
	for i := range b {
		m.ts = b[i].Timestamp
		m.fn(b[i].Value, m.emit)
	}
	return m.out.flush()
}
