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

// Harness2 runs a two-input operator and what is chained after it.
type Harness2[A, B, O any] = stream.Harness2[A, B, O]

// New2 returns a harness of the operators build applies to its two inputs
// (Flink's TwoInputStreamOperatorTestHarness).
func New2[A, B, O any](opts Options, build func(a stream.DataStream[A], b stream.DataStream[B]) stream.DataStream[O]) (*Harness2[A, B, O], error) {
	return stream.NewHarness2(opts, build)
}

// SideOutput returns the records the operators of h (a *Harness or a
// *Harness2) emitted to side output tag, with their timestamps.
func SideOutput[X any](h stream.AnyHarness, tag stream.OutputTag[X]) []stream.Record[X] {
	return stream.HarnessSideOutput(h, tag)
}
