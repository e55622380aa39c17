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
// the running Job at once (Status, Metrics, Cancel, Wait), for unbounded
// programs.
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
// of wall time (200 ms by default; idleness itself is measured on the
// job's Clock); the subtask's watermark is their minimum over the
// active splits, and a bounded source ends with the maximal watermark, so
// every event-time timer fires. Other tasks read every input through the
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
// snapshot (the keyed backend's Snapshot of its key groups), notify
// checkpoint complete, end of input, close on every path. Jobs forward
// checkpoint barriers that reach a task through its gate; the harness
// takes snapshots. Keyed operators
// keep their state in a state.Backend of their subtask's key groups, the
// current key set per record; they check the backend's Err once per batch.
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
// # Testing operators
//
// Harness (package streamtest) runs the chain of operators a program
// applies to one input outside a job, every edge chained and one subtask's
// key groups: records with timestamps, watermarks and processing-time
// advances on a manual clock go in; records with timestamps and
// watermarks come out in emitted order, side outputs per tag; Snapshot
// writes each operator's state (keyed state and timers of its key groups)
// and Restore opens a new harness from it, at another parallelism too.
//
// # Sinks
//
// Collect keeps the records with their timestamps (stream/sink's
// Collect); Print and PrintTo print in Flink's format (stream/sink's
// Print: "N> " when the sink runs in more than one subtask). SinkTo writes
// a stream/sink FileSink's rolling part files, ticking its rolling policy
// on processing time; at the end of a bounded input the last subtask to
// finish commits every subtask's pending parts, and a subtask that fails
// or is cancelled removes what it did not commit.
package stream
