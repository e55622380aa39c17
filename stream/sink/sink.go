package sink

import (
	"math"
	"time"

	"github.com/weirdata/weir/metrics"
)

// This file is the sink contract (Flink's Sink V2, api/connector/sink2):
// a sink makes one writer per subtask, and a two-phase sink also a
// committer that publishes what its writers prepared once a checkpoint
// holding it completed. The runtime (stream.SinkTo, stream.SinkToWriter)
// drives them; see the package doc for the order of the calls.

// Sink makes the writers of a sink without commits (Flink's Sink): its
// records are written when Write returns, or when Flush does.
type Sink[T any] interface {
	// CreateWriter opens the writer of one subtask; it is called once per
	// subtask and attempt.
	CreateWriter(ctx InitContext) (Writer[T], error)
}

// TwoPhaseSink makes the writers and the committer of a sink that
// publishes its output through a two-phase commit (Flink's Sink with
// SupportsCommitter, TwoPhaseCommittingSink): on a checkpoint's barrier
// each writer prepares committables C, which the checkpoint holds; once
// the checkpoint completed, the committer commits them.
type TwoPhaseSink[T, C any] interface {
	// CreateWriter opens the writer of one subtask, as Sink's.
	CreateWriter(ctx InitContext) (CommittingWriter[T, C], error)
	// CreateCommitter opens a committer; the runtime opens one per
	// subtask, and one for the commit of a finished job.
	CreateCommitter(ctx InitContext) (Committer[C], error)
	// CommittableSerializer encodes committables for the snapshots that
	// hold them; a restore decodes them with it.
	CommittableSerializer() Serializer[C]
}

// InitContext is what a writer or a committer opens with (Flink's
// WriterInitContext and CommitterInitContext).
type InitContext struct {
	// Subtask is the index of the subtask, from 0, of Parallelism.
	Subtask, Parallelism int
	// Restored says whether the job restored from a snapshot.
	Restored bool
	// States are the writer states the subtask restores (StatefulWriter):
	// the states its old subtasks' SnapshotState returned, dealt out as
	// Flink deals out list state (every old state to each subtask when the
	// sink implements UnionState). Nil on a fresh start.
	States [][]byte
	// Checkpointing says whether the job takes checkpoints: without them
	// nothing restores what a writer leaves behind when it fails.
	Checkpointing bool
	// MetricGroup is the sink operator's metric group in the subtask,
	// scoped <operator>.<subtask> (Flink's WriterInitContext.metricGroup):
	// the writer and the committer register their metrics there, and the
	// job's metrics show them. Never nil: the committer of a finished
	// job's last commit gets a group nothing reads.
	MetricGroup *metrics.Group
}

// Context is what Write gets with each record (Flink's SinkWriter.Context).
type Context struct {
	// Timestamp is the record's event time (ms), NoTimestamp when it has
	// none.
	Timestamp int64
	// Watermark is the subtask's current watermark (ms).
	Watermark int64
}

// NoTimestamp is Context.Timestamp for a record without a timestamp.
const NoTimestamp = math.MinInt64

// HasTimestamp says whether the record carries a timestamp.
func (c Context) HasTimestamp() bool { return c.Timestamp != NoTimestamp }

// Writer writes one subtask's records (Flink's SinkWriter). Its methods
// are called from the subtask's goroutine, one at a time: Write per
// record, Flush on every checkpoint's barrier (endOfInput false) and once
// at the end of a bounded input (true), Close last, on every path.
type Writer[T any] interface {
	// Write writes v. The writer may keep the value, but not what ctx
	// holds beyond the call.
	Write(v T, ctx Context) error
	// Flush makes what Write wrote durable, or ready to prepare for a
	// commit: on a barrier, records written before it must not be lost if
	// the checkpoint completes (at-least-once without a committer).
	Flush(endOfInput bool) error
	// Close releases the writer. A writer closed before the end of its
	// input (a failure, a cancellation) is not restored from the state it
	// would have had: the job restores from a checkpoint's.
	Close() error
}

// CommittingWriter is the writer of a TwoPhaseSink (Flink's
// CommittingSinkWriter).
type CommittingWriter[T, C any] interface {
	Writer[T]
	// PrepareCommit returns what the writer wrote since the last call,
	// ready to be committed, on checkpoint checkpointID's barrier after
	// Flush(false), and once more after Flush(true) with EndOfInput.
	// Nothing it returns may be visible before the committer commits it.
	PrepareCommit(checkpointID int64) ([]C, error)
}

// EndOfInput is the checkpoint id of the committables prepared at the end
// of a bounded input, as Flink's.
const EndOfInput = math.MaxInt64

// StatefulWriter is a writer with state (Flink's StatefulSinkWriter):
// SnapshotState returns it, encoded, on each checkpoint's barrier after
// Flush and PrepareCommit; a restored writer gets the states in
// InitContext.States.
type StatefulWriter interface {
	SnapshotState(checkpointID int64) ([][]byte, error)
}

// UnionState is a sink whose writers restore the states of every old
// subtask, whatever the parallelism (Flink's union list state), instead
// of a share of them.
type UnionState interface {
	// UnionWriterState returns true for union state.
	UnionWriterState() bool
}

// BatchWriter is a writer that takes a batch of values at once: the
// runtime calls WriteBatch instead of Write, with no Context.
type BatchWriter[T any] interface {
	WriteBatch(vals []T) error
}

// WatermarkWriter is a writer told of each watermark (Flink's
// SinkWriter.writeWatermark), after the records before it.
type WatermarkWriter interface {
	WriteWatermark(wm int64) error
}

// Ticker is a writer with a processing-time task: the runtime calls Tick
// every TickInterval of the job's clock, from the subtask's goroutine.
type Ticker interface {
	TickInterval() time.Duration
	Tick() error
}

// CheckpointListener is told when a checkpoint completes or is aborted
// (Flink's CheckpointListener): a writer that implements it is notified
// after the sink's committables of the checkpoint were committed. A
// notification may be missed: a later one covers the earlier checkpoints
// too.
type CheckpointListener interface {
	NotifyCheckpointComplete(checkpointID int64) error
	NotifyCheckpointAborted(checkpointID int64) error
}

// Committer commits the committables of a TwoPhaseSink (Flink's
// Committer). Commit gets the committables of the completed checkpoints
// not committed yet, and those a restored snapshot holds; it must be
// idempotent, for a restore commits again what an earlier attempt may
// have committed. It signals each request's outcome: a request left as it
// is was committed; RetryLater asks for it again; a known failure drops
// it; an unknown failure fails the job. Commit returning an error fails
// the job too.
type Committer[C any] interface {
	Commit(reqs []CommitRequest[C]) error
	Close() error
}

// CommitRequest is one committable to commit (Flink's
// Committer.CommitRequest).
type CommitRequest[C any] interface {
	// Committable returns the committable.
	Committable() C
	// NumberOfRetries is how many times the request was retried.
	NumberOfRetries() int
	// SignalFailedWithKnownReason drops the committable: it cannot be
	// committed, and the job goes on.
	SignalFailedWithKnownReason(err error)
	// SignalFailedWithUnknownReason fails the job with err.
	SignalFailedWithUnknownReason(err error)
	// RetryLater asks for the committable again, at once, up to the
	// runtime's number of retries (DefaultCommitRetries), after which the
	// job fails.
	RetryLater()
	// UpdateAndRetryLater is RetryLater with c instead of the committable.
	UpdateAndRetryLater(c C)
	// SignalAlreadyCommitted says the committable was committed before.
	SignalAlreadyCommitted()
}

// DefaultCommitRetries is how many times a committable is retried before
// its commit fails the job (Flink's sink.committer.retries).
const DefaultCommitRetries = 10

// Serializer encodes committables for snapshots (Flink's
// SimpleVersionedSerializer): an encoding that may change between
// versions of a sink should start with a version.
type Serializer[C any] interface {
	Marshal(c C) ([]byte, error)
	Unmarshal(b []byte) (C, error)
}
