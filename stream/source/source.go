package source

import (
	"context"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/metrics"
)

// Boundedness says whether a source ends.
type Boundedness int

// The two kinds of sources, as Flink's Boundedness.
const (
	// Bounded sources know all their splits at start and end when every
	// split is read.
	Bounded Boundedness = iota
	// Unbounded sources may discover splits while they run, or have splits
	// that never end; they run until cancelled (a socket ends when its peer
	// closes the connection).
	Unbounded
)

func (b Boundedness) String() string {
	if b == Bounded {
		return "bounded"
	}
	return "unbounded"
}

// Source creates the enumerator, which discovers splits and hands them to
// readers, and the readers, one per parallel subtask.
type Source[T any] interface {
	// Boundedness says whether the source ends.
	Boundedness() Boundedness
	// Enumerator creates the source's enumerator for parallelism readers,
	// fresh when restored is nil, else from a snapshot (Enumerator.Snapshot).
	// A monitored directory is listed here.
	Enumerator(parallelism int, restored *EnumeratorState) (Enumerator, error)
	// Reader creates the reader of one subtask.
	Reader(rc ReaderContext) (Reader[T], error)
}

// Status is what an enumerator answers a request for a split.
type Status int

// The answers to Requester.Request.
const (
	// Assigned: Grant.Split is the reader's to read.
	Assigned Status = iota
	// Later: no split now; ask again after Grant.Retry.
	Later
	// NoMore: no split will ever come for this reader.
	NoMore
)

// Grant is an enumerator's answer to a request.
type Grant struct {
	Split  Split
	Status Status
	Retry  time.Duration // with Later, when to ask again
}

// Requester hands out splits to readers that ask (Flink's
// SplitEnumerator.handleSplitRequest and SplitEnumeratorContext.assignSplit
// in one call). It is safe for concurrent use.
type Requester interface {
	Request(subtask int) (Grant, error)
}

// Enumerator discovers a source's splits and assigns them to reader
// subtasks. It runs no goroutine: a monitored directory is scanned when a
// request finds the queue empty and the discovery interval has passed.
type Enumerator interface {
	Requester
	// AddSplitsBack returns the splits of a failed reader (at their
	// positions) to the enumerator, to be assigned again.
	AddSplitsBack(splits []Split)
	// Snapshot returns the splits not yet assigned and, for a monitored
	// directory, the files discovered so far.
	Snapshot() EnumeratorState
}

// EnumeratorState is an enumerator's snapshot.
type EnumeratorState struct {
	Pending   []Split  // discovered and not assigned, in assignment order
	Processed []string // files discovered (monitored directory), in discovery order
}

// ReaderContext is what a reader is created with.
type ReaderContext struct {
	Subtask     int       // this reader's index, 0 <= Subtask < Parallelism
	Parallelism int       // the number of readers
	Splits      Requester // where the reader asks for splits: the source's enumerator
	// Idle, when set, is told how long the reader waited with nothing to
	// read (a rate limit, a split asked for later, a watched directory's
	// interval): the subtask's idle time, as Flink counts a source's wait
	// for available data.
	Idle func(d time.Duration)
	// Rate, when positive, throttles the reader to Rate records per second
	// (see Throttle); zero reads as fast as the splits give records.
	Rate float64
	// Clock, when set, is the clock the throttle paces by (the job's);
	// nil means the source's (WithClock).
	Clock clock.Clock
	// Metrics, when set, is the source operator's metric group of this
	// subtask (Flink's SourceReaderContext.metricGroup): a reader that
	// knows how many records are left registers the gauge
	// "pendingRecords" there, Flink's source metric.
	Metrics *metrics.Group
}

// Batch is records of one split, handed out by Reader.Next.
type Batch[T any] struct {
	Split string // the id of the split the records come from
	// First is the number of records of the split read before this batch: the
	// index in the split of Records[0].
	First   int64
	Records []T // valid until the next call of Next
	// End says the split is finished; Records is then empty. It comes once
	// per split, after the split's last records.
	End bool
}

// Reader reads the splits assigned to one subtask (Flink's SourceReader). A
// reader is used by one goroutine; Positions and AddSplits are called between
// calls of Next.
type Reader[T any] interface {
	// Next returns the next batch, or an End marker for a finished split. It
	// waits while no split has data, until ctx is done (returning ctx.Err()).
	// A Next ended by ctx loses nothing and Next may be called again: a
	// runtime that must wake up (to emit periodic watermarks) passes a
	// deadline. It returns io.EOF when the enumerator has no more splits for
	// it and its splits are finished.
	Next(ctx context.Context) (Batch[T], error)
	// AddSplits hands the reader splits to read from their positions: those
	// of a snapshot when restoring, or pushed by a runtime. It asks the
	// enumerator for more only when it has none left.
	AddSplits(splits []Split)
	// Positions returns the position of every split the reader holds and has
	// not finished: after the records Next has returned.
	Positions() []Split
	// Close releases the reader's files and connections. It must be called,
	// also after an error or cancellation.
	Close() error
}

// SplitPauser is a Reader that can stop reading some of its splits and
// start again (Flink's SourceReader.pauseOrResumeSplits, FLIP-217): the
// stream runtime pauses a split that ran ahead under watermark alignment.
// Next hands out no batch of a paused split and reads the others; with
// every split it holds paused it waits until ctx is done, without
// spinning. A paused split keeps its position (Positions); pausing an id
// the reader does not hold is remembered for when it gets the split, and
// resuming one that is not paused does nothing. Called between calls of
// Next, as AddSplits. Every reader of this package is a SplitPauser.
type SplitPauser interface {
	PauseOrResumeSplits(pause, resume []string)
}

// CheckpointListener is a Reader told of checkpoints (Flink's
// SourceReader.snapshotState with its checkpoint id, and
// notifyCheckpointComplete): the runtime calls Checkpointed with the
// positions it took from Positions for checkpoint id, right after it took
// them, and NotifyCheckpointComplete once that checkpoint completed, both
// between calls of Next. A reader may hand completed positions to an
// outside system (a Kafka reader commits its offsets to its group); a
// notification may be missed, and a later one covers the earlier
// checkpoints.
type CheckpointListener interface {
	Checkpointed(checkpointID int64, positions []Split)
	NotifyCheckpointComplete(checkpointID int64) error
}
