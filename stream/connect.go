package stream

// ConnectedStreams are two streams, possibly of different types, read by
// one two-input operator (CoMap, CoFlatMap, CoProcess) that may share
// state between them.
type ConnectedStreams[A, B any] struct {
	a DataStream[A]
	b DataStream[B]
}

// Connect connects a and b.
func Connect[A, B any](a DataStream[A], b DataStream[B]) ConnectedStreams[A, B] {
	return ConnectedStreams[A, B]{a: a, b: b}
}

// CoMap maps the records of the first stream with f1 and of the second
// with f2 into one stream; results keep their records' timestamps.
func CoMap[A, B, O any](cs ConnectedStreams[A, B], f1 func(A) O, f2 func(B) O) DataStream[O] {
	return CoFlatMap(cs,
		func(a A, emit func(O)) { emit(f1(a)) },
		func(b B, emit func(O)) { emit(f2(b)) })
}

// CoFlatMap calls f1 for the records of the first stream and f2 for those
// of the second, each with an emit function.
func CoFlatMap[A, B, O any](cs ConnectedStreams[A, B], f1 func(A, func(O)), f2 func(B, func(O))) DataStream[O] {
	n := addNode[O](cs.a.n.env, "CoFlatMap", cs.a.edge(), cs.b.edge())
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		out := newEmitter(outOf[O](outs, ""), rt.batchSize)
		var ts int64
		emit := func(o O) { out.emit(o, ts) }
		in1 := pushFunc[A](func(b []Record[A]) error {
			for i := range b {
				ts = b[i].Timestamp
				f1(b[i].Value, emit)
			}
			return out.flush()
		})
		in2 := pushFunc[B](func(b []Record[B]) error {
			for i := range b {
				ts = b[i].Timestamp
				f2(b[i].Value, emit)
			}
			return out.flush()
		})
		return []any{in1, in2}, base{}, nil
	}
	return DataStream[O]{n: n}
}
