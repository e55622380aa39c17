// Package stream is weir's DataStream API, Flink's for Go programs, on the
// flow runtime: unbounded and bounded streams of records with event
// timestamps, watermarks, keyed state and timers.
//
// # Model
//
// An Env collects a program: sources (FromSource, FromSlice, FromSeq), the
// transformations between them and sinks (Collect, Print, PrintTo, SinkTo).
// Type-changing transformations are package functions (Map, FlatMap,
// Process, KeyBy, Sum, KeyedProcess, CoMap ...), type-preserving ones
// methods (Filter, Union, Rebalance, SetParallelism ...). A mistake found
// while building (a nil function, a key type without a hash) is kept with
// the caller's file:line and returned by Execute or Start; nothing panics
// at the user. Execute runs a program until its sources end; Start returns
// the running Job at once (Status, Metrics, Snapshot, Cancel, Wait), for
// unbounded programs. Every operator of a chain counts its records in and
// out (per batch) and every task its watermark, so Job.Snapshot shows them
// per operator; Env.Plan returns the stream graph (tasks, chains,
// partitioning, parallelism) without running it.
//
// A DataStream[T] carries Record[T]s: the value and its event timestamp in
// milliseconds (NoTimestamp when it has none). Operators keep the
// timestamp of the record they process on what they emit; a watermark
// strategy's assigner sets it at the source.
//
// # The record path
//
// Execute translates the program into a flow.Graph, one vertex per chain:
// an operator joins the task of the operator before it, as Flink chains,
// when the edge is forward (the default between equal parallelisms) and it
// has one input. Other edges are pipelined: rebalance (the default between
// different parallelisms), broadcast, shuffle, and keyed, which sends a
// record to the subtask owning its key's key group (state.KeyGroupForHash
// of the key's Java hash code, state.OperatorIndexForKeyGroup; the hash is
// chosen once per key type). Records move a batch at a time:
//
//	source reader ─Batch{split}─▶ per-split watermark generator ─▶ operator ─▶ operator ─▶ Writer ══▶ Gate ─▶ operator ...
//	                               (watermark.Splits)               (chained: a batch per call, emitters reused)
//
// Each operator emits into a reused batch that it pushes to the next
// operator when full and at the end of each input batch; the next operator
// copies what it keeps. The steady state allocates nothing per record
// (TestSteadyStateAllocs).
//
// # Tasks and time
//
// A source task runs a reader of its source: every split gets a watermark
// generator from the program's strategy (a split assigned but silent gets
// one too, so idleness can release it), asked every AutoWatermarkInterval
// of the job's Clock (200 ms by default; idleness too is measured on it);
// the subtask's watermark is their minimum over the active splits, and a
// bounded source ends with the maximal watermark, so every event-time
// timer fires. A source subtask whose reader has held no split for a whole
// interval (more subtasks than splits) marks itself idle, as Flink's
// SourceOperator, so that it does not hold back the watermark downstream;
// its first records make it active again. Other tasks read every input through the
// task's flow.Gate, which combines watermarks over channels and inputs
// (Flink's valve): a batch goes through the chain; a watermark goes to
// each operator in chain order, which fires its due event-time timers in
// timestamp order and flushes what they emitted, and then to the task's
// outputs; a watermark status goes to the outputs. Processing-time timers
// wait on the job's Clock (Options.Clock; flow.ManualClock in tests) in
// the same wait as the gate. At the end of every input, each operator's
// end of input is called in chain order.
//
// # Operators
//
// Inside, every operator has Flink's lifecycle: open (with restored
// state), a batch pushed per call, on watermark, on processing time,
// snapshot for a checkpoint id, notify checkpoint complete, end of input,
// close on every path (see Checkpoints). Keyed operators keep their
// state in a state.Backend of their subtask's key groups, the current key
// set per record, and snapshot it (a copy-on-write state.Capture of its
// key groups, written off the task goroutine; see Checkpoints); they check the backend's Err once per batch. Options.StateBackend
// chooses where that state lives: HeapBackend (objects in memory) or
// DiskBackend (a stream/state/disk store per keyed subtask under the job's
// temporary directory, Flink's EmbeddedRocksDBStateBackend), with the same
// state API; timers and broadcast state stay on the heap, and BATCH
// execution keeps its one key on the heap. With Options.Incremental and a
// checkpoint storage of shared files (checkpoint.Dir) a disk backend's
// checkpoints are incremental (state.Backend.SnapshotIncremental): the
// subtask acknowledges the shared files its snapshot names, which the
// checkpoint's SubtaskState.Shared records. Other operators
// with state keep it in a state.OperatorStore, whose snapshot a restore at
// another parallelism redistributes by Flink's rules
// (state.RepartitionOperatorState):
//
//	source subtask   list state SourceReaderState: its reader's split positions
//	                 (source.Split.MarshalBinary); a restore hands them to the reader
//	SinkTo           union list state FileSinkWriterState (the writer's part counter)
//	                 and list state FileSinkCommittables (pending parts of checkpoints
//	                 not yet complete); a snapshot closes the in-progress part, a
//	                 completed checkpoint commits its parts, a restore commits the
//	                 restored parts and removes what the failed run wrote after them
//	Process          the function's own states (InitializeState, SnapshotState:
//	                 Flink's CheckpointedFunction)
//
// Rolling aggregations (Sum, Min, Max, MinBy, MaxBy, Reduce) follow Flink:
// sum, min and max replace the aggregated field of the key's first record
// and keep its other fields; minBy and maxBy keep the first record on
// ties; a running result is emitted per record. Fields are read and
// written by accessor functions chosen at build time, without reflection.
//
// Process, KeyedProcess, CoProcess and KeyedCoProcess take a function
// that returns the user's function, called once per subtask (Flink's
// function instance per parallel instance), so the state handles it keeps
// belong to its subtask. Their Context gives the record's timestamp, the
// watermark and the processing time; KeyedContext adds the current key,
// the keyed state backend (state.GetValueState and its siblings) and event-
// and processing-time timers. Output emits to a side output named by an
// OutputTag; GetSideOutput reads it.
//
// # Windows
//
// Window groups a KeyedStream into the windows of a stream/window assigner
// (WindowAll does so for a whole stream, in one subtask; CountWindow and
// CountWindowSlide are Flink's count windows); the WindowedStream takes a
// Trigger, an Evictor, an AllowedLateness and a SideOutputLateData tag,
// then a function: Reduce and WindowAggregate keep one accumulator per key
// and window, WindowProcess keeps the elements and hands them to a
// ProcessWindowFunction (the window, watermark, processing time, global
// and per-window keyed state), WindowReduceProcess and
// WindowAggregateProcess hand it the accumulator's result, and WindowSum,
// WindowMin, WindowMax, WindowMinBy and WindowMaxBy follow the rolling
// aggregations' field rules. The operator is Flink's WindowOperator (its
// evicting variant with an evictor): window contents, accumulators, trigger
// state and the merging window set live in the keyed state backend with
// the window as namespace, so snapshots carry them, and timers are keyed
// by window. Results carry the window's MaxTimestamp. An element is late
// when its timestamp plus the allowed lateness is at or below the
// watermark; it goes to the late side output only when no window took
// it. A bounded input ends with the maximal watermark, so every
// event-time window fires; global and count windows do not flush. In
// BATCH mode windows run on the key-sorted input one key at a time, the
// key's timers firing at its end.
//
// # Joins
//
// WindowJoin(a, b, keyA, keyB, assigner) and WindowCoGroup are Flink's
// a.join(b).where(keyA).equalTo(keyB).window(assigner) and its coGroup:
// both inputs are tagged (TaggedUnion), unioned, keyed and windowed with the
// assigner (tumbling, sliding, sessions; Trigger, Evictor and
// AllowedLateness as Flink's WithWindow), and a window function splits each
// window's elements by input: CoGroupApply hands both lists to the function
// once per key and window with elements on either side, JoinApply and
// JoinFlatApply call it for every pair (an inner join). Results carry the
// window's MaxTimestamp.
//
// IntervalJoin(a, b).Between(lower, upper) joins two keyed streams on event
// time as Flink's intervalJoin: a left element at t meets the right
// elements of its key at [t + lower, t + upper] (LowerBoundExclusive,
// UpperBoundExclusive leave a bound out), and IntervalJoinProcess calls a
// ProcessJoinFunction per pair, its output timestamped with the larger of
// the two timestamps (JoinContext has both). The operator is Flink's
// IntervalJoinOperator: each side's elements wait in a keyed map state by
// timestamp, an event-time timer drops them when no element of the other
// side can still join them, and an element below the watermark is dropped,
// or sent to SideOutputLeftLateData / SideOutputRightLateData.
//
// # Broadcast state
//
// Broadcast(ds, descriptors...) is Flink's broadcast state pattern: ds's
// records go over a broadcast edge to every subtask of the operator it is
// connected to, ConnectBroadcast with a DataStream (BroadcastProcess, a
// BroadcastProcessFunction) or ConnectKeyedBroadcast with a KeyedStream
// (KeyedBroadcastProcess, a KeyedBroadcastProcessFunction). Each
// MapStateDescriptor names a broadcast state, a map every subtask holds in
// full: ProcessBroadcastElement reads and writes it (GetBroadcastState),
// ProcessElement and OnTimer only read it (GetReadOnlyBroadcastState), so
// subtasks that apply the same broadcast records stay identical. On the
// keyed side ProcessElement has its key, keyed state and timers;
// ProcessBroadcastElement has no key and visits every key's entry of a
// keyed state through ApplyToKeyedState. A subtask's broadcast states live
// in a backend of one key group, snapshotted with the operator's keyed
// state; a restore gives every subtask the whole of them, at any
// parallelism, as Flink gives each new task a copy. In BATCH mode the
// broadcast input is processed first: the keyed input is sorted and fed
// at its end.
//
// # Iterations
//
// Iterate(ds, maxWait) starts a feedback loop (Flink's iterate): the
// IterativeStream carries ds's records and those its CloseWith(feedback)
// sends back, at the head's parallelism (feedback's must be the same).
// The head is a task of its own: its loop reads ds through the gate and,
// between the gate's items, drains an in-process feedback queue that the
// tail, chained after feedback, fills; subtask i of the tail feeds subtask
// i of the head. The tail never waits for the head, so backpressure on
// the loop's credit queues cannot close a cycle of waits. The queue holds
// the records in flight around the loop in memory counted against the
// job's budget, and past it writes them, with their timestamps, to spill
// files in the record codec, first in first out; the head removes a run
// once it read it back, and the queue removes every file when the head
// ends, whatever the outcome.
// Fed-back records keep their timestamps but bring no watermark: the head
// forwards ds's watermarks only, as Flink's head (which emits the maximal
// watermark at once) lets ds's watermarks alone reach the loop, so a
// bounded input's end of event time passes while records still circle.
// Once ds ended, the head ends the loop when no record was fed back for
// maxWait (zero: never) and drops what comes later. Flink's head times
// out on maxWait of silence alone; weir also waits for ds's end, so a slow
// input cannot end a loop early.
// IterateWithFeedback[I, F](ds, maxWait) is Flink's withFeedbackType: the
// feedback has a type F of its own, and the loop's head is a two-input
// operator applied to its ConnectedStreams (CoMap, CoFlatMap, CoProcess),
// whose first input is ds and second the records fed back by
// CloseWith(feedback DataStream[F]). The head task sends ds's records and
// the feedback on two outputs, subtask i to subtask i of the
// co-operator, with ds's watermarks on both. CloseWith refuses a stream
// not made from the iteration, in Flink's words. Env.Plan shows the loop
// as a FEEDBACK edge from the tail into the head.
// Iterations are refused in BATCH mode, as Flink refuses them.
//
// # Execution modes
//
// Options.Mode is Streaming by default. Batch runs a program of bounded
// sources as Flink's FLIP-134, as a job that is not a streaming one: each
// one-input keyed operator (rolling aggregations, KeyedProcess) reads its
// whole input into a sortjoin.Sorter (spilling under the memory budget),
// sorted by key and then timestamp, and at the end of input is fed one
// key at a time; at the end of each key its event- and processing-time
// timers fire as if time had reached its end, its state is dropped
// (state.Backend.Clear: one key's state at a time), and the next key
// starts at the minimal watermark, so nothing is late. Rolling aggregations emit
// only each key's final value (with the maximal timestamp). Sources emit
// no watermarks before the end, and a task forwards the maximal watermark
// after what its end of input emitted. Automatic is Batch when every
// source is bounded. A bounded program gives the same final answer in
// both modes (TestWordCountBatch, TestBatchKeyedTimers). A keyed
// two-input operator (KeyedCoProcess) sorts both inputs and merges them by
// key and timestamp, the first input first on ties.
//
// # Checkpoints
//
// EnableCheckpointing(interval) makes a STREAMING job take Flink's
// asynchronous barrier snapshots (CheckpointConfig: mode, timeout, min
// pause, max concurrent checkpoints, a checkpoint.Storage, by default
// checkpoint.NewMemory(1)). Each job attempt has a coordinator goroutine
// that triggers checkpoint n every interval of the job's Clock (or on
// Job.TriggerCheckpoint) once every task runs:
//
//	coordinator: enumerators' snapshot (split valves closed) ─▶ trigger ─▶ source task mailboxes
//	source task (between batches): snapshot ─▶ Barrier n on every output ─▶ ack (valve opened)
//	other task: gate aligns Barrier n over every channel ─▶ snapshot (keyed state: capture) ─▶ Barrier n
//	            its goroutine writes the captures ─▶ task mailbox ─▶ ack, in barrier order
//	coordinator: every task acked ─▶ Storage.Store (its own goroutine) ─▶ complete n ─▶ every task mailbox
//	task (between batches): notifyCheckpointComplete(n) on each operator; the file sink commits
//
// A task snapshots each operator of its chain into a buffer of its own,
// by the operator's stable id (UID, or a hash of its position and inputs,
// Flink's StreamGraphHasherV2) and acknowledges with the bytes; it goes on
// processing while the checkpoint is stored. Operator state is written on
// the barrier. Keyed state is captured on it (state.Backend.Capture: the
// heap backend's copy-on-write capture, Flink's CopyOnWriteStateMap
// snapshot; a disk backend's full snapshot written at once, its
// incremental one synchronous) and written by a goroutine of the task
// (Flink's AsyncCheckpointRunnable) while the task processes records; the
// goroutine posts to the task's mailbox, and the task releases the
// captures and acknowledges its checkpoints in barrier order, several in
// flight with MaxConcurrentCheckpoints. A write that fails declines the
// checkpoint, which is aborted; a task that ends stops its writes and
// releases their captures, and one that finished acknowledges them first.
// Source tasks, iteration heads and unaligned checkpoints snapshot
// synchronously. A source
// subtask's split assignments are held back from its enumerator's snapshot
// until its own (Flink's OperatorEventValve), so no split is in both. A
// checkpoint not complete within the timeout is aborted; so are the pending
// ones when a task fails. Checkpoints go on after tasks finished (Flink's
// FLIP-147): a finished task is no longer triggered and counts as
// acknowledged, the operators of a task whose subtasks all finished are
// recorded as finished (checkpoint.OperatorState.Finished) and a restore
// does not run them again; a job whose input ended stores a final snapshot
// marked Finished after its sinks committed. The barrier's alignment
// time, the duration, the size and the bytes in flight of each completed
// checkpoint and each restore's time are in Job.Checkpoints.
//
// CheckpointConfig.Unaligned takes unaligned checkpoints (Flink's FLIP-76,
// EXACTLY_ONCE with one checkpoint at a time):
//
//	source task: snapshot ─▶ priority Barrier n ahead of its queued output; the output it overtook is channel state ─▶ ack
//	other task: first Barrier n on any channel ─▶ snapshot ─▶ priority Barrier n on every output
//	            the batches each channel's barrier overtook, and every batch of a channel until its barrier ─▶ channel state
//	            every channel delivered n ─▶ ack with the snapshots and the channel state (SubtaskState.InFlight)
//
// A task with unaligned checkpoints reads its next input only while its
// outputs have credit, and otherwise waits for credit or a priority
// barrier, so its barriers never wait behind backpressure. With
// AlignedCheckpointTimeout a checkpoint starts aligned and a task whose
// alignment is not done that long after the trigger switches to unaligned
// (its own barrier then goes out as a priority one; a source's barrier
// stays in order). A restore sends the channel state again from each
// edge's producer side before anything new (a consumer's input before the
// producer's output, old producer subtask p by new subtask p modulo the
// parallelism), through the edge's partitioner, so that a keyed record
// reaches the subtask owning its key group at any parallelism; a
// broadcast edge's records go to their old consumer, and its restore at
// another parallelism is refused.
//
// A job restores from its storage's latest snapshot, or Options.Restore,
// as Flink's StateAssignmentOperation: state maps to operators by stable
// id; a keyed operator's subtask restores every old subtask's snapshot
// whose key groups overlap its own (any parallelism; the max parallelism
// is the snapshot's unless the program set another, which fails the
// restore); operator state is redistributed by
// state.RepartitionOperatorState and a source's enumerator restored from
// its coordinator state. State of an operator the program lacks fails the
// restore unless AllowNonRestoredState; a Finished snapshot ends the job at
// once. A task failure ends the attempt; Options.Restart (fixed delay,
// exponential delay, failure rate, none; by default exponential delay
// under checkpoints, as Flink 1.20, else none) decides whether the job
// starts again from the latest checkpoint within the same Execute or
// Start, so a transactional sink's committed output is exactly-once.
// Iterative jobs refuse checkpoints, as Flink does by default.
//
// # Testing operators
//
// Harness (package streamtest) runs the chain of operators a program
// applies to one input outside a job, every edge chained and one subtask's
// key groups: records with timestamps, watermarks and processing-time
// advances on a manual clock go in; records with timestamps and
// watermarks come out in emitted order, side outputs per tag; Snapshot
// writes each operator's state (keyed state and timers of its key groups,
// or operator state) and Restore opens a new harness from it, at another
// parallelism too (RepartitionHarnessSnapshots redistributes operator
// state).
//
// # Sinks
//
// Collect keeps the records with their timestamps (stream/sink's
// Collect); Print and PrintTo print in Flink's format (stream/sink's
// Print: "N> " when the sink runs in more than one subtask). SinkTo writes
// a stream/sink FileSink's rolling part files, ticking its rolling policy
// on processing time; at the end of a bounded input the last subtask to
// finish commits every subtask's pending parts, and a subtask that fails
// or is cancelled removes what it did not commit. Under checkpoints the
// parts a snapshot closed are committed when its checkpoint completes.
package stream
