package core

import "github.com/weirdata/weir/flow"

// Output receives batches of records. The batch belongs to the caller: an
// Output copies what it keeps.
type Output[T any] interface {
	Push(b []Record[T]) error
}

// Discard is the Output of a port without consumers.
type Discard[T any] struct{}

// Push drops b.
func (Discard[T]) Push([]Record[T]) error { return nil }

// Fanout pushes every batch to several outputs, in order.
type Fanout[T any] []Output[T]

// Push pushes b to every output, stopping at the first error.
func (f Fanout[T]) Push(b []Record[T]) error {
	for _, o := range f {
		if err := o.Push(b); err != nil {
			return err
		}
	}
	return nil
}

// PushFunc is an Output that calls a function: the inputs of a
// two-input operator, a feedback queue.
type PushFunc[T any] func([]Record[T]) error

// Push calls f.
func (f PushFunc[T]) Push(b []Record[T]) error { return f(b) }

// OutOf returns the output of port in outs (an Output[T] per port with
// consumers), or Discard when the port has none.
func OutOf[T any](outs map[string]any, port string) Output[T] {
	if o, ok := outs[port].(Output[T]); ok {
		return o
	}
	return Discard[T]{}
}

// CountIn counts the records pushed into an operator, once per batch, as
// Flink's numRecordsIn of a chained operator.
type CountIn[T any] struct {
	Out Output[T]
	C   *flow.OperatorCounters
}

// Push counts b and pushes it on.
func (o CountIn[T]) Push(b []Record[T]) error {
	o.C.AddIn(len(b))
	return o.Out.Push(b)
}

// CountOut counts the records an operator emits, once per batch and once
// whatever the number of consumers, as Flink's numRecordsOut.
type CountOut[T any] struct {
	Out Output[T]
	C   *flow.OperatorCounters
}

// Push counts b and pushes it on.
func (o CountOut[T]) Push(b []Record[T]) error {
	o.C.AddOut(len(b))
	return o.Out.Push(b)
}

// Records is an Output that keeps copies of every record pushed: a test
// harness's capture of a side output.
type Records[T any] struct{ Recs []Record[T] }

// Push appends b.
func (r *Records[T]) Push(b []Record[T]) error {
	r.Recs = append(r.Recs, b...)
	return nil
}
