// Package checkpoint holds the snapshots of a stream job and the storage
// they are kept in, as Flink's CompletedCheckpoint, its metadata and its
// CheckpointStorage.
//
// # Model
//
// A Snapshot is one completed checkpoint or savepoint of a job: its id, the
// time it was triggered, and per operator (by the operator's stable id) the
// state of each subtask as the subtask wrote it on the barrier. The bytes of
// a subtask's state belong to the stream runtime (keyed state sections per
// key group, operator state, a source's split positions, a sink's pending
// part files); this package stores and returns them unread. A subtask whose
// state lives in files of its own (an incremental snapshot of the disk
// backend) names them in Shared; the storage keeps such a file while any
// retained snapshot names it.
//
// # Contracts
//
//   - A snapshot is visible only once complete: Store returns after the
//     snapshot is durable, and a crash at any point during Store leaves the
//     storage with the snapshots it had before, or with the new one too;
//     never a torn one.
//   - Latest returns the newest complete snapshot. A snapshot found damaged
//     (truncated, corrupted) is skipped for the one before it, and the
//     reason is reported.
//   - Store keeps the newest Retained checkpoints and discards the older
//     ones. Savepoints are never discarded by Store.
package checkpoint
