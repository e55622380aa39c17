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
//
// # Storage in a directory
//
// Dir keeps checkpoints as Flink's file system checkpoint storage does:
//
//	path/chk-<id>/_metadata          the snapshot's metadata, written last
//	path/chk-<id>/op<i>-<j>.state    subtask j of operator i: its state
//	path/chk-<id>/op<i>-<j>.inflight and its in-flight records
//	path/shared/<name>               files of incremental snapshots
//
// The metadata (metadata.go) is versioned and names every file with its
// length and CRC-32C; the whole file is checksummed. A checkpoint is
// complete iff its _metadata is present and valid and its files match:
// the state files are fsynced, the metadata is written to _metadata.tmp,
// fsynced and renamed, and the directory fsynced. Latest validates each
// checkpoint, newest first, and returns the first intact one; the damage
// of the others is reported as *CorruptError naming the file (Skipped,
// DirOptions.OnSkip). A shared file is kept while a retained checkpoint
// names it and deleted with the last (Flink's SharedStateRegistry).
// OpenDir removes what a crash left: checkpoint directories without
// _metadata, temporary files, shared files no checkpoint names.
//
// One job at a time uses a directory: OpenDir takes an exclusive flock on
// path/.lock, which names the holder (pid, host, start time), until Close;
// a second OpenDir fails with ErrLocked naming it. A snapshot records the
// fingerprint of the job that took it (Snapshot.Fingerprint, hashed by the
// runtime from the job's name, inputs and operator ids), so that a restore
// can refuse another job's checkpoint.
//
// A savepoint (WriteSavepoint) is a directory savepoint-<6 hex>-<12 hex>
// outside the checkpoints, self-contained (its shared files copied into
// its own shared/), built under a hidden name (.savepoint-*.inprogress,
// locked by its writer) and renamed once complete; RemoveStaleSavepoints,
// which WriteSavepoint calls first, removes those whose writer was killed.
// Dir.Store writes savepoints to DirOptions.Savepoints; Dir.Latest returns
// checkpoints only, as Flink recovers from checkpoints and not from
// savepoints taken on the way. Load and Inspect read any checkpoint or
// savepoint, by directory or _metadata file, validated like Latest.
//
// # Storage in a bucket
//
// OpenBucket keeps the same layout under a key prefix of an object store
// (a Bucket: S3 through the s3 package, MemBucket in tests). A put is
// atomic, so nothing is renamed: each object is put whole under its final
// key, _metadata last, and a checkpoint without it is incomplete. The
// state objects of a checkpoint carry a random part of their attempt
// (op<i>-<j>-<8 hex>.state), so that two writers of one id never replace
// each other's objects: a _metadata names only its own. A bucket has no
// lock; one job at a time must use a prefix. Savepoints are built under
// their final prefix, complete once their _metadata is there; a failed
// one is removed. LoadBucket and InspectBucket read any snapshot of a
// bucket; paths a Dir on a bucket returns and reports are URLs
// (s3://bucket/prefix/chk-7).
package checkpoint
