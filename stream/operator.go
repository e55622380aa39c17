package stream

import (
	"io"

	"github.com/weirdata/weir/flow"
)

// operator is the lifecycle of an operator instance in a stream task, as
// Flink's StreamOperator: open (with restored state), then batches pushed
// through its input (an output[I] it hands to whatever feeds it), watermarks
// and processing-time advances, snapshots on barriers, end of input, close.
// A task calls the lifecycle methods on its operators in topological order,
// so records an operator emits while handling a watermark reach the
// operators after it before their own watermark.
type operator interface {
	// open prepares the operator; rt.restored holds its snapshot, if any.
	open(rt *taskRuntime) error
	// onWatermark fires the event-time timers due at wm, in timestamp order,
	// and flushes what they emitted; the task forwards wm afterwards.
	onWatermark(wm int64) error
	// onProcessingTime fires the processing-time timers due at now (ms).
	onProcessingTime(now int64) error
	// nextProcessingTime is the operator's earliest processing-time timer.
	nextProcessingTime() (int64, bool)
	// snapshot writes the operator's state for checkpoint id: keyed state
	// and timers, or operator state (a source's split positions, a file
	// sink's part files).
	snapshot(id int64, w io.Writer) error
	// notifyCheckpointComplete says checkpoint id completed.
	notifyCheckpointComplete(id int64) error
	// endInput is called once every input ended, after the maximal
	// watermark of a bounded input.
	endInput() error
	// close releases what open took, on every path.
	close() error
}

// output receives batches of records. The batch belongs to the caller:
// an output copies what it keeps.
type output[T any] interface {
	push(b []Record[T]) error
}

// base gives operators no-op lifecycle methods to embed.
type base struct{}

func (base) open(*taskRuntime) error              { return nil }
func (base) onWatermark(int64) error              { return nil }
func (base) onProcessingTime(int64) error         { return nil }
func (base) nextProcessingTime() (int64, bool)    { return 0, false }
func (base) snapshot(int64, io.Writer) error      { return nil }
func (base) notifyCheckpointComplete(int64) error { return nil }
func (base) endInput() error                      { return nil }
func (base) close() error                         { return nil }

// emitter collects an operator's output records into a batch and pushes
// it downstream when full and on flush.
type emitter[T any] struct {
	out output[T]
	buf []Record[T]
	err error
}

func newEmitter[T any](out output[T], size int) *emitter[T] {
	return &emitter[T]{out: out, buf: make([]Record[T], 0, size)}
}

// emit appends a record, pushing the batch when full.
func (e *emitter[T]) emit(v T, ts int64) {
	e.buf = append(e.buf, Record[T]{Value: v, Timestamp: ts})
	if len(e.buf) == cap(e.buf) {
		e.flushErr()
	}
}

// emitAll appends a record per value of vs, all with timestamp ts, pushing
// the batch whenever it fills.
func (e *emitter[T]) emitAll(vs []T, ts int64) {
	if cap(e.buf) == 0 {
		for _, v := range vs {
			e.emit(v, ts)
		}
		return
	}
	for len(vs) > 0 {
		n := min(cap(e.buf)-len(e.buf), len(vs))
		for _, v := range vs[:n] {
			e.buf = append(e.buf, Record[T]{Value: v, Timestamp: ts})
		}
		vs = vs[n:]
		if len(e.buf) == cap(e.buf) {
			e.flushErr()
		}
	}
}

// emitStamped appends a record per value of vs with the timestamp of ts of
// the same index, pushing the batch whenever it fills.
func (e *emitter[T]) emitStamped(vs []T, ts []int64) {
	if cap(e.buf) == 0 {
		for i, v := range vs {
			e.emit(v, ts[i])
		}
		return
	}
	for len(vs) > 0 {
		n := min(cap(e.buf)-len(e.buf), len(vs))
		for i, v := range vs[:n] {
			e.buf = append(e.buf, Record[T]{Value: v, Timestamp: ts[i]})
		}
		vs, ts = vs[n:], ts[n:]
		if len(e.buf) == cap(e.buf) {
			e.flushErr()
		}
	}
}

func (e *emitter[T]) flushErr() {
	if len(e.buf) > 0 && e.err == nil {
		e.err = e.out.push(e.buf)
	}
	e.buf = e.buf[:0]
}

// flush pushes what is pending and returns the first error of a push.
func (e *emitter[T]) flush() error {
	e.flushErr()
	return e.err
}

// fanout pushes every batch to several outputs.
type fanout[T any] []output[T]

func (f fanout[T]) push(b []Record[T]) error {
	for _, o := range f {
		if err := o.push(b); err != nil {
			return err
		}
	}
	return nil
}

// countIn counts the records pushed into an operator, once per batch, as
// Flink's numRecordsIn of a chained operator.
type countIn[T any] struct {
	out output[T]
	c   *flow.OperatorCounters
}

func (o countIn[T]) push(b []Record[T]) error {
	o.c.AddIn(len(b))
	return o.out.push(b)
}

// countOut counts the records an operator emits, once per batch and once
// whatever the number of consumers, as Flink's numRecordsOut.
type countOut[T any] struct {
	out output[T]
	c   *flow.OperatorCounters
}

func (o countOut[T]) push(b []Record[T]) error {
	o.c.AddOut(len(b))
	return o.out.push(b)
}

// writerOut sends batches over a network edge.
type writerOut[T any] struct{ w *flow.Writer[Record[T]] }

func (w writerOut[T]) push(b []Record[T]) error { return w.w.EmitBatch(b) }

func (w writerOut[T]) event(e flow.Event) error { return w.w.Event(e) }
