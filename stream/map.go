package stream

// Map applies fn to every record; the result keeps the record's timestamp.
func Map[T, U any](ds DataStream[T], fn func(T) U) DataStream[U] {
	n := addNode[U](ds.n.env, "Map", ds.edge())
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &mapOp[T, U]{fn: fn, out: newEmitter(outOf[U](outs, ""), rt.batchSize)}
		return []any{op}, op, nil
	}
	return DataStream[U]{n: n}
}

type mapOp[T, U any] struct {
	base
	fn  func(T) U
	out *emitter[U]
}

func (m *mapOp[T, U]) push(b []Record[T]) error {
	for i := range b {
		m.out.emit(m.fn(b[i].Value), b[i].Timestamp)
	}
	return m.out.flush()
}

// outOf returns the output of a port, discarding when it has no consumers.
func outOf[T any](outs map[string]any, port string) output[T] {
	if o, ok := outs[port].(output[T]); ok {
		return o
	}
	return discard[T]{}
}
