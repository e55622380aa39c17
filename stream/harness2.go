package stream

// Harness2 runs a two-input operator (CoMap, CoProcess, KeyedCoProcess)
// and the operators chained after it, as Flink's
// TwoInputStreamOperatorTestHarness: records go to either input, the
// watermark and processing time to the operators.
type Harness2[A, B, O any] struct {
	*harnessCore[O]
	h1   output[A]
	h2   output[B]
	one1 [1]Record[A]
	one2 [1]Record[B]
}

// NewHarness2 returns a harness of the operators build applies to its two
// input streams.
func NewHarness2[A, B, O any](opts HarnessOptions, build func(a DataStream[A], b DataStream[B]) DataStream[O]) (*Harness2[A, B, O], error) {
	c, err := newHarnessCore(opts, func(env *Env) ([]*node, DataStream[O]) {
		a, b := addNode[A](env, "input 1"), addNode[B](env, "input 2")
		return []*node{a, b}, build(DataStream[A]{n: a}, DataStream[B]{n: b})
	})
	if err != nil {
		return nil, err
	}
	return &Harness2[A, B, O]{harnessCore: c}, nil
}

// ProcessElement1 pushes v with timestamp ts into the first input.
func (h *Harness2[A, B, O]) ProcessElement1(v A, ts int64) error {
	if h.h1 == nil {
		o, err := headOf[A](h.harnessCore, 0)
		if err != nil {
			return err
		}
		h.h1 = o
	}
	h.one1[0] = Record[A]{Value: v, Timestamp: ts}
	return h.h1.push(h.one1[:])
}

// ProcessElement2 pushes v with timestamp ts into the second input.
func (h *Harness2[A, B, O]) ProcessElement2(v B, ts int64) error {
	if h.h2 == nil {
		o, err := headOf[B](h.harnessCore, 1)
		if err != nil {
			return err
		}
		h.h2 = o
	}
	h.one2[0] = Record[B]{Value: v, Timestamp: ts}
	return h.h2.push(h.one2[:])
}
