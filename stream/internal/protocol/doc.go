// Package protocol is what the checkpoint coordinator and the tasks of a
// stream job say to each other, as Flink's CheckpointCoordinatorGateway
// and TaskExecutorGateway do for checkpoints: plain values keyed by job,
// attempt, stable operator id and subtask, each with a binary encoding, so
// that a transport can carry them between processes unchanged.
//
// # Messages
//
//	coordinator ──Trigger──▶ source task      start checkpoint n (a savepoint, a stop)
//	coordinator ──Complete─▶ every task       n is durable: commit what it covers
//	coordinator ──Abort────▶ every task       n will not complete
//	coordinator ──Resume───▶ source task      a stop-with-savepoint was aborted: read on
//	task ──Ack──────▶ coordinator             my snapshots of n (per operator, channel state)
//	task ──Decline──▶ coordinator             my part of n failed, and why
//	task ──Notified─▶ coordinator             my operators were told of n (Complete.Confirm)
//	task ──Finished─▶ coordinator             my input ended and I returned (FLIP-147)
//
// Watermark alignment (FLIP-182) has a source's subtasks and the source's
// alignment coordinator (coordinator.SourceAlignment) talk likewise:
//
//	source task ──ReportedWatermark──▶ source   my watermark (Max: idle or ended)
//	source ──WatermarkAlignment──▶ source task  read no split past MaxAllowed
//
// A task registers with the coordinator (Coordinator.Register) and gives
// it the Task its messages go to. The in-process transport calls the
// methods directly; Encode and Decode give every message's bytes.
//
// A task restores from a TaskRestore: per operator of its chain the
// snapshots its subtask opens from and the watermark it starts at, and
// the records in flight it sends again.
package protocol
