// Package stream is weir's DataStream API, Flink's for Go programs:
// unbounded and bounded streams of records with event timestamps,
// watermarks, keyed state, timers, windows and exactly-once checkpoints.
//
// # A program
//
//	env := stream.New(stream.Options{Parallelism: 2})
//	env.EnableCheckpointing(10 * time.Second).Storage = dir // a *checkpoint.Dir
//	src, _ := source.Files(source.CSV[Event](csv.Options{}), "events.csv")
//	events := stream.FromSource(env, src,
//		watermark.ForBoundedOutOfOrderness[Event](2*time.Second).
//			WithTimestampAssigner(func(e Event, _ int64) int64 { return e.Time }), "events")
//	sums := stream.WindowSum(
//		stream.Window(stream.KeyBy(events, func(e Event) string { return e.User }),
//			window.TumblingEventTimeWindows(5*time.Second)),
//		func(e Event) float64 { return e.Amount }, func(e *Event, v float64) { e.Amount = v })
//	stream.Print(sums)
//	_, err := env.Execute(ctx)
//
// An Env collects a program: sources (FromSource, FromSlice, FromSeq),
// transformations and sinks (Print, Collect, SinkTo, SinkToWriter). Type-changing
// transformations are package functions (Map, FlatMap, Process, KeyBy,
// Window, WindowAggregate ...), type-preserving ones are methods (Filter,
// Union, Rebalance, SetParallelism, UID ...). A mistake found while
// building (a nil function, a key type without a hash) is kept with the
// caller's file and line and returned by Execute or Start; nothing panics
// at the user. Execute runs a program until its sources end; Start returns
// the running Job at once (Status, Overview, Checkpoints, Cancel,
// StopWithSavepoint, Wait). Env.Plan returns the stream graph without
// running it.
//
// What to use for what:
//
//	per record          Map, FlatMap, Filter, Process (with Context and side outputs);
//	                    RichMap, RichFlatMap, RichFilter (with Open, Close and errors)
//	event time          FromSource's strategy, AssignTimestampsAndWatermarks
//	per key             KeyBy, then Reduce, Sum/Min/Max/MinBy/MaxBy (rolling),
//	                    KeyedProcess (keyed state, event- and processing-time timers)
//	windows             Window, WindowAll, CountWindow; Trigger, Evictor, AllowedLateness,
//	                    SideOutputLateData; Reduce, WindowAggregate, WindowProcess, WindowSum ...
//	two streams         Connect (CoMap, CoFlatMap, CoProcess), ConnectKeyed (KeyedCoProcess),
//	                    WindowJoin, WindowCoGroup, IntervalJoin, Broadcast + BroadcastProcess
//	loops               Iterate, IterateWithFeedback
//	async I/O           OrderedWait, UnorderedWait (an AsyncFunction per record; capacity,
//	                    timeout, WithRetry)
//	sinks               Print, PrintTo, Collect, Discard; SinkTo (any sink.TwoPhaseSink:
//	                    sink.FileSink's rolling part files, or your own; exactly-once),
//	                    SinkToWriter (a sink.Sink without commits; at-least-once)
//
// A DataStream[T] carries Record[T]s: the value and its event timestamp in
// milliseconds (watermark.Min when it has none). A source's watermark
// strategy (package watermark) assigns the timestamps and the watermarks;
// AssignTimestampsAndWatermarks does it anywhere after a source, dropping
// the watermarks that came before. Operators keep the timestamp of the
// record they process on what they emit, and window results carry the
// window's end minus one. A strategy WithWatermarkAlignment aligns the
// sources of its group (FLIP-182): a split more than the maximal drift
// ahead of the group's least watermark is not read until the others catch
// up.
//
// # Async I/O
//
// OrderedWait and UnorderedWait are Flink's AsyncDataStream: an
// AsyncFunction starts a call per record and returns, and whatever the
// call runs on completes its ResultFuture once, from any goroutine; weir
// starts no goroutine per record. The results go out with the record's
// timestamp, in input order (OrderedWait) or as the calls complete
// (UnorderedWait), never across a watermark: a watermark waits for the
// records before it. The subtask reads its input only while fewer than
// capacity records (and watermarks waiting) are in flight. A record's
// timeout runs on the processing-time clock; when it fires the function's
// Timeout decides, or the job fails with ErrAsyncTimeout, as it fails with
// any error a call completes with for good. WithRetry makes a call again
// as an AsyncRetryStrategy says. A checkpoint stores the records in flight,
// and a restore calls the function for them again. The end of a bounded
// input waits for every call.
//
// # Runtime context and metrics
//
// Every user function type with an Open (ProcessFunction, CoProcessFunction,
// BroadcastProcessFunction, RichMapFunction, RichFlatMapFunction,
// RichFilterFunction) gets its RuntimeContext there, Flink's
// getRuntimeContext(): the task's and the operator's names, the subtask's
// index among NumberOfParallelSubtasks, MaxNumberOfParallelSubtasks, the
// attempt number and the operator's metric group. The keyed functions
// (KeyedProcessFunction, KeyedCoProcessFunction,
// KeyedBroadcastProcessFunction, ProcessWindowFunction,
// ProcessJoinFunction) get a KeyedRuntimeContext, which adds their keyed
// state by descriptor: GetState(rc, desc), GetListState, GetMapState,
// GetReducingState and GetAggregatingState, Flink's getState and its
// siblings, over the operator's backend. A sink's writer gets the metric
// group in its sink.InitContext. Each Context returns its function's
// RuntimeContext too.
//
// User metrics (package metrics) are registered in Open and updated per
// record, on the subtask's goroutine, with plain arithmetic: counters,
// gauges (functions read when the metrics are read), histograms (the
// statistics of a bounded reservoir of the last values, with Flink's
// quantiles) and meters (a rate over a span, on the job's clock). The
// task publishes them after each batch, event and timer; Job.Metrics and
// the Result of Execute show them per subtask (VertexMetrics.Subtasks[i].Metrics),
// scoped <operator>.<subtask>.<group>.<name>. They are not state: a
// restarted or restored job starts them at zero, as Flink does.
//
// # Checkpoints and restarts
//
// EnableCheckpointing takes Flink's asynchronous barrier snapshots of
// every operator's state into a checkpoint.Storage (checkpoint.OpenDir for
// a directory). A job with checkpoints restores from its storage's latest
// checkpoint when it starts, or from Options.Restore (a savepoint), mapping
// state to operators by their stable id: give each stateful operator a UID
// so that it keeps its state across changes of the program. The watermark
// of every operator is part of its snapshot, so a record that was late
// before a failure is late after it. A task failure restarts the job from
// its latest checkpoint as Options.Restart says. SinkTo commits what its
// writers prepared (a FileSink's part files) when the checkpoint that
// covers them completes, so the committed output of a job that failed and
// recovered equals that of a run that did not fail. CheckpointConfig's
// CompletionGate, when set, is asked after a checkpoint is stored and
// before it completes (a cluster's JobManager records it there); its
// refusal aborts the checkpoint, commits nothing of it and fails the
// attempt.
//
// # Sinks
//
// A sink of package sink follows Flink's Sink V2 contract. SinkTo runs a
// sink.TwoPhaseSink as one operator per subtask (Flink's SinkWriter and
// Committer operators chained): records go to the subtask's writer (Write,
// or WriteBatch for a sink.BatchWriter); on each checkpoint's barrier the
// writer is flushed, PrepareCommit returns its committables and a
// sink.StatefulWriter's SnapshotState its state, and both go into the
// subtask's snapshot (the committables encoded by the sink's
// Serializer); when the checkpoint completes, the subtask's committer
// commits the committables of that checkpoint and of every earlier one
// not committed yet (an aborted checkpoint's with the next), retrying
// those it asks to retry up to sink.DefaultCommitRetries times. A subtask
// restored from a snapshot commits at once the committables the snapshot
// holds, which may have been committed before: a committer must be
// idempotent. At the end of a bounded input each writer is flushed with
// endOfInput and prepares its last committables, and the last subtask to
// finish commits every subtask's (under checkpoints the job stores them
// in its final snapshot first, and a restore of the finished job commits
// them again). SinkToWriter runs a sink.Sink the same way without
// committables.
//
// # Checkpoint listeners
//
// A ProcessFunction, CoProcessFunction, KeyedProcessFunction or
// KeyedCoProcessFunction that sets NotifyCheckpointComplete or
// NotifyCheckpointAborted is Flink's CheckpointListener: it is called on
// its subtask's goroutine, between records, when a checkpoint completed
// (every task acknowledged it and it is stored) or was aborted (it timed
// out, was declined or failed to store). A sink writer that implements
// sink.CheckpointListener is told the same, after the commit. A
// notification may be missed, after a failure or when a later checkpoint
// completes first; one that completed stands for the earlier ones too.
//
// # Execution modes
//
// Options.Mode is Streaming by default. Batch runs a program of bounded
// sources as Flink's BATCH mode: keyed inputs sorted by key, final results
// only; Automatic is Batch when every source is bounded.
//
// # Spread over processes
//
// Options.Spread runs a process's part of a job spread over several (a
// cluster's TaskManagers): each process builds the same program with the
// same options, runs subtask i of every task in the process that holds
// slot i, and sends records, watermarks and barriers to the others over a
// Transport. Part 0 coordinates the checkpoints and hands out the splits;
// the checkpoint storage and the sinks' files are shared. See Spread.
//
// # Testing
//
// Package streamtest runs the operators a program applies to one input
// outside a job, record by record, as Flink's operator test harnesses.
//
// How the runtime underneath works (tasks, exchanges, checkpoint
// coordination, the operators' state) is in docs/ARCHITECTURE.md.
package stream
