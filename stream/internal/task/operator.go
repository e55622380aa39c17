package task

import (
	"io"

	"github.com/weirdata/weir/flow"
)

// Operator is the lifecycle of an operator instance in a stream task, as
// Flink's StreamOperator: Open (with its restored state), then batches
// pushed through its input (a core.Output it hands to whatever feeds it),
// watermarks and processing-time advances, snapshots on barriers, end of
// input, Close. A task calls the lifecycle methods on its operators in
// topological order.
type Operator interface {
	// Open prepares the operator; s gives its restored state, if any.
	Open(s *Setup) error
	// OnWatermark fires the event-time timers due at wm, in timestamp
	// order, and flushes what they emitted; the task forwards wm after.
	OnWatermark(wm int64) error
	// OnProcessingTime fires the processing-time timers due at now (ms).
	OnProcessingTime(now int64) error
	// NextProcessingTime is the operator's earliest processing-time timer.
	NextProcessingTime() (int64, bool)
	// Snapshot writes the operator's state for checkpoint id: keyed state
	// and timers, or operator state (a source's split positions, a file
	// sink's part files).
	Snapshot(id int64, w io.Writer) error
	// NotifyCheckpointComplete says checkpoint id completed.
	NotifyCheckpointComplete(id int64) error
	// EndInput is called once every input ended, after the maximal
	// watermark of a bounded input.
	EndInput() error
	// Close releases what Open took, on every path.
	Close() error
}

// AbortListener is an operator told when a checkpoint was aborted
// (Flink's CheckpointListener.notifyCheckpointAborted): a checkpoint that
// timed out, was declined, or failed to store. The task calls it in chain
// order.
type AbortListener interface {
	NotifyCheckpointAborted(id int64) error
}

// Base gives operators no-op lifecycle methods to embed.
type Base struct{}

func (Base) Open(*Setup) error                    { return nil }
func (Base) OnWatermark(int64) error              { return nil }
func (Base) OnProcessingTime(int64) error         { return nil }
func (Base) NextProcessingTime() (int64, bool)    { return 0, false }
func (Base) Snapshot(int64, io.Writer) error      { return nil }
func (Base) NotifyCheckpointComplete(int64) error { return nil }
func (Base) EndInput() error                      { return nil }
func (Base) Close() error                         { return nil }

// AsyncSnapshotter is an operator whose snapshot has a synchronous part,
// taken on the barrier, and an asynchronous one, written off the task
// goroutine while the task goes on processing (Flink's
// AsyncSnapshotCallable): a keyed operator on the heap backend captures
// its state copy-on-write.
type AsyncSnapshotter interface {
	// SnapshotAsync takes the synchronous part of the snapshot for
	// checkpoint id; a nil part means the operator snapshots
	// synchronously (Snapshot).
	SnapshotAsync(id int64) (AsyncPart, error)
}

// AsyncPart is the asynchronous part of an operator's snapshot.
type AsyncPart interface {
	// WriteTo writes the snapshot; it runs on another goroutine.
	WriteTo(w io.Writer) (int64, error)
	// Release ends the part on the task goroutine, once WriteTo returned
	// or will not be called.
	Release()
}

// Eventer sends in-band events: a network output, or a harness capture.
type Eventer interface{ Event(e flow.Event) error }

// KeyedEnder is a keyed operator run by a sorted input in BATCH mode: it
// is told when one key's records ended.
type KeyedEnder interface{ EndKey() error }
