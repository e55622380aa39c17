package flow

import (
	"errors"
	"io"
)

// Operator is the lifecycle of one operator instance in a task. Open
// prepares the instance in its task before any record; Close releases what
// Open took. The runtime helpers (Drive, RunDriver) call Close exactly once
// after a successful Open, on every path: success, failure and cancellation.
type Operator interface {
	Open(tc *TaskContext) error
	Close() error
}

// Collector receives an operator's output a batch at a time. A batch is
// valid only during Collect; End is called once, after the last batch, on
// success. The capabilities (Borrows, Raw) let a producer pick a cheaper way
// to hand records over; a collector that has none embeds Plain.
type Collector[T any] interface {
	Collect(batch []T) error
	End() error
	// Borrows reports whether the collector keeps nothing of a batch's
	// records once Collect returns, so that the producer may hand it records
	// whose memory it reuses afterwards.
	Borrows() bool
	// Raw returns the sink that takes records whose key is their own bytes
	// (a string, say) as those bytes, or nil when the collector cannot.
	Raw() RawSink
}

// RawSink takes records as their bytes, one at a time, valid only during
// Write. The producer counts the records it wrote and reports them through
// Written every so often and before the collector's End, so that nothing on
// the way does work per record.
type RawSink interface {
	Write(b []byte) error
	Written(n int64)
}

// Plain gives a collector the default capabilities: it may keep what it is
// handed and takes no raw records. Embed it.
type Plain struct{}

// Borrows reports false.
func (Plain) Borrows() bool { return false }

// Raw returns nil.
func (Plain) Raw() RawSink { return nil }

// Idle gives an operator an Open and a Close that do nothing. Embed it.
type Idle struct{}

// Open does nothing.
func (Idle) Open(*TaskContext) error { return nil }

// Close does nothing.
func (Idle) Close() error { return nil }

// OneInput is a push operator: the task hands it its input a batch at a
// time through Process, then calls EndInput once when the input ended. It
// chains: the operators of a task before it call it from their output (see
// Feed). Record-at-a-time operators (map, filter) and sink tails are push
// operators.
type OneInput[In any] interface {
	Operator
	Process(batch []In) error
	EndInput() error
}

// Driver is an operator that pulls its inputs itself (with Input) inside
// Run: sources, sorts, a join's build then probe, grouping of several
// inputs.
type Driver interface {
	Operator
	Run() error
}

// Feed returns the collector that pushes into op: Collect calls Process and
// End calls EndInput. It is how a push operator is chained after another
// operator in a task; op's lifecycle stays its owner's. An operator that
// declares the capabilities of a collector (Borrows and Raw, as a sink that
// writes raw records does) has them on its feed; else the feed has Plain's.
func Feed[In any](op OneInput[In]) Collector[In] {
	if c, ok := op.(capabilities); ok {
		return feed[In]{op, c}
	}
	return feed[In]{op, Plain{}}
}

// capabilities are a collector's optional capabilities.
type capabilities interface {
	Borrows() bool
	Raw() RawSink
}

type feed[In any] struct {
	op OneInput[In]
	capabilities
}

func (f feed[In]) Collect(b []In) error { return f.op.Process(b) }
func (f feed[In]) End() error           { return f.op.EndInput() }

// Drive runs op as the head of a task over input i (records of In): it opens
// op, hands it every batch of the input, calls EndInput once the input
// ended, and closes op on every path. A read error (a cancelled task's
// context, say) stops it without EndInput.
func Drive[In any](tc *TaskContext, i int, op OneInput[In]) error {
	return run(tc, op, func() error {
		in := Input[In](tc, i)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if errors.Is(err, io.EOF) {
					return op.EndInput()
				}
				return err
			}
			if err := op.Process(b); err != nil {
				return err
			}
		}
	})
}

// RunDriver opens d, runs it and closes it on every path.
func RunDriver(tc *TaskContext, d Driver) error { return run(tc, d, d.Run) }

// run opens op, calls body and closes op once Open succeeded, whatever body
// returned; the first error wins.
func run(tc *TaskContext, op Operator, body func() error) (err error) {
	if err := op.Open(tc); err != nil {
		return err
	}
	defer func() {
		if cerr := op.Close(); err == nil {
			err = cerr
		}
	}()
	return body()
}
