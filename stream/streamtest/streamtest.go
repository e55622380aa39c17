package streamtest

import "github.com/weirdata/weir/stream"

// Harness runs a chain of operators record by record.
type Harness[I, O any] = stream.Harness[I, O]

// Options configure a harness: the parallelism and subtask it plays (the
// key groups its keyed operators own), the max parallelism and the manual
// clock's start.
type Options = stream.HarnessOptions

// Item is a record or a watermark the harness's operators emitted.
type Item[O any] = stream.Item[O]

// New returns a harness of the operators build applies to its input.
func New[I, O any](opts Options, build func(in stream.DataStream[I]) stream.DataStream[O]) (*Harness[I, O], error) {
	return stream.NewHarness(opts, build)
}

// Keyed returns a harness of a KeyedProcessFunction on the input keyed by
// key (Flink's KeyedOneInputStreamOperatorTestHarness).
func Keyed[I any, K comparable, O any](opts Options, key func(I) K, newFn func() stream.KeyedProcessFunction[K, I, O]) (*Harness[I, O], error) {
	return stream.NewHarness(opts, func(in stream.DataStream[I]) stream.DataStream[O] {
		return stream.KeyedProcess(stream.KeyBy(in, key), newFn)
	})
}

// SideOutput returns the records the harness's operators emitted to side
// output tag, with their timestamps.
func SideOutput[I, O, X any](h *Harness[I, O], tag stream.OutputTag[X]) []stream.Record[X] {
	return stream.HarnessSideOutput(h, tag)
}
