package stream

// Filter keeps the records for which keep returns true.
func (ds DataStream[T]) Filter(keep func(T) bool) DataStream[T] {
	n := addNode[T](ds.n.env, "Filter", ds.edge())
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &filterOp[T]{keep: keep, out: newEmitter(outOf[T](outs, ""), rt.batchSize)}
		return []any{op}, op, nil
	}
	return DataStream[T]{n: n}
}

type filterOp[T any] struct {
	base
	keep func(T) bool
	out  *emitter[T]
}

func (f *filterOp[T]) push(b []Record[T]) error {
	for i := range b {
		if f.keep(b[i].Value) {
			f.out.emit(b[i].Value, b[i].Timestamp)
		}
	}
	return f.out.flush()
}
