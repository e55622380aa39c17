// Package streamtest tests DataStream operators one record at a time,
// outside a job, as Flink's OneInputStreamOperatorTestHarness and
// KeyedOneInputStreamOperatorTestHarness: push records with timestamps,
// watermarks and processing-time advances (a manual clock) into a chain of
// operators, read back its records with their timestamps and its
// watermarks in the order they were emitted, and each side output; take a
// snapshot that a new harness restores, at another parallelism too:
// Repartition deals the snapshots of every old subtask out to the new ones
// (operator state by Flink's rules, as AbstractStreamOperatorTestHarness's
// repartitionOperatorState), and Repackage combines them into one that a
// harness of any parallelism restores with its Options.Subtask (Flink's
// repackageState and initializeState): the state is assigned as a job's
// restore assigns a checkpoint (coordinator.Assign), each key's state and
// timers to the subtask owning its key group, operator state
// redistributed, each operator at the least watermark of the old subtasks
// whose state it takes. Options.Parallelism, Subtask and MaxParallelism
// say which subtask a harness is. NotifyCheckpointComplete and
// NotifyCheckpointAborted tell the operators of a checkpoint's fate, as the
// harness's notifyOfCompletedCheckpoint (the harness's snapshots are
// checkpoints 1, 2, ... in the order taken).
// New2 does the same for a two-input operator (Flink's
// TwoInputStreamOperatorTestHarness), with ProcessElement1 and
// ProcessElement2; Broadcast and KeyedBroadcast build one of a broadcast
// process function, the broadcast stream its second input (Flink's
// BroadcastOperatorTestHarness). A broadcast operator's snapshot holds its
// broadcast states whole, so every new harness restores the same ones, at
// any parallelism.
//
// What Flink's harness tells, this one does too: NumKeyedStateEntries
// (one per key and namespace, as Flink's heap backend counts them),
// NumEventTimeTimers and NumProcessingTimeTimers across the operators,
// CurrentWatermark and ProcessingTime; ProcessWatermarkStatus sends an
// input's idleness and Output holds the statuses emitted. ProcessMail runs
// what other goroutines handed the operators (the calls of an
// OrderedWait or UnorderedWait that completed), as Flink's mailbox
// harness's processAll; EndInput, and a full async queue, wait for them.
// AssertOutputEqualsSorted (and OutputEqualsSorted, which returns the
// difference) compares an output as Flink's TestHarnessUtil does: the
// watermarks in place, the records in any order. SideOutput returns an
// error for a tag whose records have another type.
//
//	h, err := streamtest.Keyed(streamtest.Options{}, keyFn, newFn)
//	h.ProcessElement(v, 42)   // a record with timestamp 42
//	h.ProcessWatermark(5)     // due event-time timers fire, then the watermark is emitted
//	h.SetProcessingTime(100)  // due processing-time timers fire
//	h.Output()                // records and watermarks in emitted order
//	snap, _ := h.Snapshot()   // keyed state and timers, or operator state; h2.Restore(snap)
//	all, _ := streamtest.Repackage(snap0, snap1, snap2) // three subtasks' snapshots, for any parallelism
package streamtest
