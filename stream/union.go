package stream

// Union merges ds with others of the same type into one stream, in no
// particular order between them.
func (ds DataStream[T]) Union(others ...DataStream[T]) DataStream[T] {
	ins := []*edge{ds.edge()}
	for _, o := range others {
		ins = append(ins, o.edge())
	}
	n := addNode[T](ds.n.env, "Union", ins...)
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &unionOp[T]{out: outOf[T](outs, "")}
		ins := make([]any, len(n.inputs))
		for i := range ins {
			ins[i] = op
		}
		return ins, op, nil
	}
	return DataStream[T]{n: n}
}

type unionOp[T any] struct {
	base
	out output[T]
}

func (u *unionOp[T]) push(b []Record[T]) error { return u.out.push(b) }

// pushFunc is an output that calls a function: a two-input operator's
// inputs.
type pushFunc[T any] func([]Record[T]) error

func (f pushFunc[T]) push(b []Record[T]) error { return f(b) }
