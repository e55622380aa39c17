package protocol

import (
	"cmp"
	"slices"
	"time"
)

// TaskID names one subtask of a job attempt. Vertex is the stable id of
// the task's head operator.
type TaskID struct {
	Job     string
	Attempt int
	Vertex  string
	Subtask int
}

// Message is one of the messages of the package: Trigger, Complete,
// Abort, Resume, Ack, Decline, Notified, Finished or InputsEnded between
// the checkpoint coordinator and the tasks; ReportedWatermark and WatermarkAlignment
// between a source's coordinator and its subtasks.
type Message interface{ kind() kind }

// Trigger asks a source task to take its part of checkpoint Checkpoint
// and send its barrier (Flink's triggerCheckpoint).
type Trigger struct {
	Checkpoint int64
	// Timestamp is when the coordinator triggered it, in Unix milliseconds.
	Timestamp int64
	// Savepoint: the snapshots are full and in the canonical format.
	Savepoint bool
	// Stop: the source reads nothing after its barrier
	// (stop-with-savepoint).
	Stop bool
}

// Complete says checkpoint Checkpoint is durable (Flink's
// notifyCheckpointComplete). With Confirm the task answers Notified once
// its operators were notified (a stop-with-savepoint waits for it, so
// that the sinks committed what the savepoint covers).
type Complete struct {
	Checkpoint int64
	Confirm    bool
}

// Abort says checkpoint Checkpoint will not complete (Flink's
// notifyCheckpointAborted).
type Abort struct {
	Checkpoint int64
	Reason     string
}

// Resume tells a source task stopped by a stop-with-savepoint that was
// aborted to read on.
type Resume struct{}

// OperatorSnapshot is one operator's part of a task's acknowledgement.
type OperatorSnapshot struct {
	// ID is the operator's stable id.
	ID string
	// State is what the operator wrote.
	State []byte
	// Shared names the files of the checkpoint storage the state refers to
	// (incremental snapshots).
	Shared []string
	// Watermark is the operator's event-time watermark when it snapshotted.
	Watermark int64
}

// Ack is a task's part of a checkpoint (Flink's acknowledgeCheckpoint).
type Ack struct {
	Task       TaskID
	Checkpoint int64
	Operators  []OperatorSnapshot
	// InFlight is the task's channel state (unaligned checkpoints).
	InFlight []byte
	// Alignment is how long the task aligned its barriers.
	Alignment time.Duration
}

// Decline says a task's part of a checkpoint failed (Flink's
// declineCheckpoint).
type Decline struct {
	Task       TaskID
	Checkpoint int64
	Reason     string
}

// Notified says a task's operators were notified of a completed
// checkpoint whose Complete asked for confirmation.
type Notified struct {
	Task       TaskID
	Checkpoint int64
}

// Finished says a task's input ended and it returned: it counts as
// acknowledged for every checkpoint pending and later (FLIP-147).
type Finished struct{ Task TaskID }

// InputsEnded says a task whose network inputs all ended runs on (an
// iteration head, fed back by its loop): no barrier reaches it any more,
// so the coordinator triggers it as a source from now on, the checkpoints
// pending that it did not acknowledge included (FLIP-147's trigger of the
// first running tasks).
type InputsEnded struct{ Task TaskID }

// ReportedWatermark is a source subtask's watermark, sent to its source's
// coordinator every update interval of watermark alignment (Flink's
// ReportedWatermarkEvent): the watermark the subtask emitted last, or Max
// (math.MaxInt64) when the subtask is idle or its input ended. Task.Vertex
// is the source's stable id (a source heads its task).
type ReportedWatermark struct {
	Task      TaskID
	Watermark int64
}

// WatermarkAlignment announces to a source subtask the largest watermark
// its splits may reach (Flink's WatermarkAlignmentEvent): the least
// watermark reported by the sources of its alignment group plus the
// group's maximal drift.
type WatermarkAlignment struct {
	MaxAllowed int64
}

// Task receives the coordinator's messages: Trigger, Complete, Abort and
// Resume. Deliver does not block.
type Task interface{ Deliver(m Message) }

// Coordinator receives the tasks' messages. Its methods do not block on
// the coordinator's work.
type Coordinator interface {
	// Register makes a running task known; t receives its messages.
	Register(id TaskID, t Task)
	Acknowledge(a Ack)
	Decline(d Decline)
	Notified(n Notified)
	Finish(f Finished)
	InputsEnded(e InputsEnded)
}

// OperatorRestore is what one operator of a task opens from.
type OperatorRestore struct {
	ID string
	// States are the snapshots the subtask reads: one, or for keyed state
	// restored at another parallelism every old subtask's whose key groups
	// overlap the subtask's.
	States [][]byte
	// Watermark is the watermark the operator starts at: the least of the
	// old subtasks' whose state it takes over.
	Watermark int64
}

// ChannelEntry is one channel's records in flight of an unaligned
// checkpoint (Flink's InputChannelStateHandle and
// ResultSubpartitionStateHandle): the records a consumer read before the
// channel's barrier after it had snapshotted (Output false), or the
// records a producer had not sent yet when its barrier overtook them
// (Output true). A restored job sends them again, from the producer's
// side, before anything new.
type ChannelEntry struct {
	// Edge names the network edge: the consumer's stable operator id and
	// the index of the input.
	Edge     string
	Output   bool
	Producer int
	Consumer int
	// Producers and Consumers are the edge's parallelisms when it was
	// written.
	Producers, Consumers int
	// Records are the records, encoded back to back with the edge's codec.
	Records []byte
}

// TaskRestore is what a task opens from (Flink's TaskStateSnapshot as the
// scheduler assigns it).
type TaskRestore struct {
	Operators []OperatorRestore
	// Finished: every operator of the task was recorded as finished; the
	// task does not run again and only sends its channel state.
	Finished bool
	// Channels are the records in flight on the task's network outputs, by
	// edge, in the order they are sent again.
	Channels []ChannelEntry
}

// Operator returns the restore of operator id, or nil.
func (r *TaskRestore) Operator(id string) *OperatorRestore {
	if r == nil {
		return nil
	}
	for i := range r.Operators {
		if r.Operators[i].ID == id {
			return &r.Operators[i]
		}
	}
	return nil
}

// SortChannels orders channel state as a restore sends it again: by edge
// and producer, a consumer's input before the producer's output (the
// records the consumer had received came first), then by consumer.
func SortChannels(es []ChannelEntry) {
	slices.SortStableFunc(es, func(a, b ChannelEntry) int {
		if c := cmp.Compare(a.Edge, b.Edge); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Producer, b.Producer); c != 0 {
			return c
		}
		if a.Output != b.Output {
			if a.Output {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Consumer, b.Consumer)
	})
}
