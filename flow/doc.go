// Package flow is weir's dataflow runtime: it executes a job graph of vertices,
// each run as parallel subtasks (goroutines), connected by edges that partition
// and carry batches of records, in one process. It executes exactly the graph it
// is given: the DataSet layer translates programs into graphs (chaining
// record-at-a-time operators into one vertex body) and the optimizer chooses
// ship strategies and exchange modes; flow makes no strategy decisions.
//
// flow imports memory, spill and resource and nothing above them; it never
// imports the kernels (sortjoin).
//
// # Model
//
// A Graph holds Vertices; a vertex's body, func(*TaskContext) error, runs once
// per subtask and pulls its inputs (Input, Reader.Next; a stream task reads
// all its inputs through its Gate) and pushes to its outputs (Output,
// Writer.Emit) — Flink's pull-based batch drivers. Connect
// adds an edge from a producer's next output to a consumer's next input with a
// Partitioner and an ExchangeMode. Every producer subtask's output is split
// into one partition per consumer subtask; a consumer subtask reads its
// partition from every producer subtask, merged in arrival order.
//
// A record's path over a pipelined edge:
//
//	producer body                     Writer (per edge, per producer subtask p)
//	  Emit(&v) ──copy──> bufs[target(v)] ──full, buffer timeout, event, end──┐
//	                                          waits for credit (backpressure)│
//	                                                                         v
//	consumer body <──batch── Reader or Gate <── inbox[c]: channel per producer p,
//	  Next(ctx), Poll           │                ChannelBuffers slots each, and a
//	                            │                FIFO of the channels with data
//	                            └──recycle on the next call──> edge free list ──> Writer
//
// Over a blocking edge the full batch goes to a store per (producer, consumer)
// instead, kept in memory and spilled through spill.Space, and the Reader
// replays the stores once every producer subtask finished.
//
// # Batches and ownership
//
// Records cross pipelined edges as Go slices, not serialized. Emit copies the
// record into the pending batch; a full batch's ownership passes to the
// consumer, whose body owns the batch Next returned until its next call of Next,
// when the Reader recycles it into the edge's free list. The steady state
// allocates nothing per record and nothing per batch (TestSteadyStateAllocs).
//
// Only the ends of an edge are generic: Writer[T] fills batches and Reader[T]
// hands them out. Between them the batches travel with their type erased
// (rawBatch: the slice's pointer, length and capacity), through an exchange,
// inboxes, stores and the channels between processes that are compiled once
// for every record type: they encode and decode records at their addresses
// with the edge's codec in its untyped form (memory.Raw), and only making and
// clearing a batch are typed (recordOps). A program's record types then
// multiply the code of the ends, not of the transport.
//
// The batches in flight outside blocking stores (one being filled per
// producer and consumer, one held by each Reader, one in flight per producer,
// and on a pipelined edge ChannelBuffers per channel: one channel per
// consumer on a Forward edge, one per producer and consumer otherwise) are
// reserved on the
// job's memory.Manager for the whole execution, with Force since the edge
// cannot run without them: BatchSize records of the record's Go size each,
// grown once, for records that point to data, by the serialized size of the
// first record sent. The rest of the budget shrinks accordingly.
// Broadcast copies each record into every consumer's batch (no shared,
// reference-counted batches: consumers may then treat batches as their own).
//
// # Exchange modes
//
// Pipelined: every (producer subtask, consumer subtask) pair has its own
// channel, a queue of Options.ChannelBuffers batches or events (Flink's
// credit-based flow control with exclusive buffers; Options.Buffers is
// another name for the same setting). A producer sends only against credit,
// a free slot in its channel: a full channel blocks that producer alone
// (backpressure) while the other producers of the same consumer keep
// flowing, and the consumer frees a credit when it takes a message. The
// consumer takes its channels in the order they got data (a FIFO of the
// channels with data, round robin among those that stay non-empty), without
// a goroutine per channel and without allocating. A partial batch goes
// downstream when full, when BufferTimeout passed (a flusher goroutine per
// task ticks every BufferTimeout/2 and sends the batches that were already
// pending at its previous tick; while a flusher runs, Emit takes an
// uncontended mutex, and EmitBatch takes it once per call), before an event
// and at the end. The records a producer has emitted and its consumer not yet
// received are bounded by (ChannelBuffers+2) batches per consumer. A
// consumer that ended makes its producers drop what they send it; the job's
// cancellation releases every waiting producer and consumer.
//
// Blocking: the producer's output is materialized per consumer partition before
// any consumer reads: in memory, accounted on a memory.Reservation per
// (producer, consumer) with bytes estimated from the codec, and spilled through
// a spill.Space (records serialized with memory.Codec[T]) when the budget is
// exhausted. Readers replay after every producer finished; a replayed file is
// removed at once, the rest when the job ends. Blocking edges need a codec.
// Every edge runs in the mode Connect gave it: choosing modes is the
// planner's work, not the runtime's.
//
// # Partitioners
//
// Forward (subtask i to subtask i; equal parallelism, checked by Execute), Hash
// (consumer (h>>32)*n>>32), Range (the consumer whose key range holds the
// encoded key: consumer i gets Bounds[i-1] < k <= Bounds[i]), Broadcast,
// Rebalance (round robin per record, starting at the producer's index) and
// Custom (a function per record; with CustomBatch, EmitBatch asks for a
// chunk of records' consumers in one call). A Range edge without Bounds samples: each producer subtask buffers
// its whole output in a store (spilling like a blocking edge) while keeping a
// reservoir sample of 128 keys per consumer; when its body returns it
// publishes its sample and waits for all other producer subtasks of the edge;
// the last one computes n-1 bounds from the merged sample (weighted by how many
// records each producer saw) and then every producer routes its buffered output
// through the edge's mode. Such an edge is a pipeline breaker for its producers
// and must not be in a cycle with them.
//
// # Events
//
// Events travel in-band: Writer.Event flushes the pending batches, then sends
// the event to every consumer the producer feeds, so a consumer sees it after
// every record the producer emitted before it and before every record after.
// An event takes a slot of its channel like a batch. EndOfPartition is sent by
// the runtime when a body returns and consumed by the Reader (Next returns
// io.EOF once all producers ended). Watermark, WatermarkStatus (a producer
// turned idle or active, Flink's WatermarkStatus), Barrier and EndOfSuperstep
// reach the body through Reader.NextOrEvent, which returns either a batch or
// an event, through an Aligner, or through the task's Gate. Blocking and
// sampled Range edges carry no events.
//
// Alignment blocks channels and buffers nothing: a channel that delivered
// Barrier or EndOfSuperstep n is not read (its queue fills and its producer
// stops when out of credit) until every live channel delivered n or ended;
// then the aligned event is returned once and every channel is read again
// (Flink's aligned checkpoints). The Aligner does so over one input, and a
// Reader in superstep mode aligns EndOfSuperstep with it; the Gate aligns
// barriers over all the task's inputs.
//
// Unaligned barriers (Flink's unaligned checkpoints) are priority events:
// Writer.PriorityEvent puts a barrier in front of each of its channels
// without credit, counting the messages it overtook there, and hands back
// a copy of the records pending in the writer (which still go out after
// it). A Gate in unaligned mode (UnalignBarriers, or Unalign when an
// alignment times out) returns the first barrier of a checkpoint at once
// and blocks nothing; the batches before the barrier on each channel come
// to the task to persist: those a channel's barrier overtook as
// ItemInFlight, peeked while they stay queued, and on a channel whose
// barrier did not come yet every batch until it, flagged InFlight;
// ItemChannelStateEnd closes them. A task whose outputs have no credit
// (Writer.Available) reads only priority events (PollPriority, Priority),
// so a barrier never waits behind backpressure.
//
// Watermarks combine per input as Flink's StatusWatermarkValve: each channel
// has a watermark (it only rises) and a status; the input's watermark is the
// minimum over the active channels whose watermark caught up with the last
// one emitted, and only a rise is emitted; an idle channel stops counting;
// when every channel is idle the input turns idle, first emitting the
// largest channel watermark if the last channel to turn idle held the
// minimum; a channel active again counts once it caught up. An ended
// channel no longer counts. Across a task's inputs the Gate combines as
// Flink's AbstractStreamOperator does for several inputs: the minimum over
// the inputs that are not idle, idle when every input is; an ended input no
// longer counts.
//
// # Input gate
//
// TaskContext.Gate returns the task's Gate, for stream tasks: it reads every
// pipelined input of the task and returns the next item from any of them, in
// the order the channels got data: a batch (Poll says which input;
// Input[T](tc, i).Batch returns it, typed, without allocation, owned by the
// body until the next Poll), the task's watermark when it rises, its
// watermark status when it changes, an aligned barrier (or an unaligned one
// with its channel state, see above), or the end of an input; io.EOF once
// every input ended. Poll never blocks; Ready returns a
// channel to select on together with the task's timers (a receive may be
// spurious: Poll again); Wait and Next block and count the time as idle. A
// task that uses its gate reads its inputs through it only.
//
// # Task lifecycle
//
// A body registers what its operators must release: TaskContext.OnExit
// functions run when the body returns, on every path (success, error, panic),
// last first; OnEnd functions run after them, when the task ends. Keep stores
// a value that lasts from one superstep to the next (a hash table and its
// reservation, reset and reused) and releases it when the task ends; Kept
// finds it, Drop forgets it. The runtime runs them before it closes the
// task's inputs and finishes its outputs; a panic in one becomes the task's
// error.
//
// # Operators
//
// An operator instance lives in one task. Operator is its lifecycle: Open
// before any record, Close once afterwards on every path (success, failure,
// cancellation), releasing what Open took. Two kinds run in a task, as in
// Flink's batch runtime: a OneInput is pushed its input a batch at a time
// (Process, then EndInput once at the end of the input) and chains: Feed
// turns it into the Collector of the operator before it; a Driver pulls its
// inputs itself in Run (a source, a sort, a join's build then probe). Drive
// runs a OneInput at the head of a task over one input, RunDriver a Driver.
// Every operator pushes its output into a Collector (Collect a batch, End
// once); a collector declares its capabilities on the interface (Borrows,
// Raw; Plain gives the defaults), so a wrapper passes them on by embedding
// the collector it wraps. The building blocks of a task's chain are here
// too: Pump and Batches read an input, Merge reads several concurrently,
// Fanout, Counting and Emitter are collectors.
//
// # Supersteps
//
// An iteration's rounds synchronize a fixed set of parties in numbered rounds: every
// party arrives at its next round (Arrive, or Await to wait for the round's
// decision); once every party that has not left arrived, a decide hook runs
// exactly once for the round, in the goroutine of the last arrival, and its
// decision is handed to every party that arrived. A party that leaves no
// longer counts, so the rounds it did not reach complete without it. Fail, an
// error of the hook, or the end of a waiting party's context releases every
// waiting party with the error. Arrivals may run ahead of decisions (a party's
// k-th arrival is at round k).
//
// Iteration is the superstep barrier on these rounds: its parties are the
// subtasks of an iteration's tasks, its rounds the supersteps, and its hook
// decides whether another superstep follows. Iteration.Run drives a subtask:
// it puts the inputs inside the iteration into superstep mode, runs the body
// once per superstep, runs the superstep's OnExit functions, drops what the
// body left unread of the superstep, and waits at the barrier. The tasks that
// read the iteration's result Wait for its end; storage that outlives
// supersteps is registered with Hold and freed once every task of the
// iteration and of its result called Exit. In a job spread over processes
// each process's Iteration meets the subtasks it runs (the others are
// Elsewhere) and its hook meets the other processes' over a Link.
//
// # Spread over processes
//
// With Options.Remote a process runs its share of a graph every process
// builds alike: the subtasks Remote.Here names, the channels to the others'
// over Remote.Transport (remote.go). A Link is the control channels of such
// a job: part 0 to every other part and each of them to part 0, on vertex
// LinkVertex of the same Transport, carrying messages of any length whole
// and in order. The stream runner's checkpoint coordination and the
// DataSet iterations' barrier go over it.
//
// # Failure and cleanup
//
// The first error of any subtask cancels the job's context (TaskContext.Context)
// and Execute returns it as `flow: vertex "name" subtask i/n: ...` (i from 1); a
// panic in a body is recovered into such an error wrapping ErrPanic, with the
// panic value and the top of the stack. Readers and Writers blocked on an
// exchange return when the job is cancelled; a consumer that ends without
// reading its input makes producers drop what they send it. Cancelling the
// caller's context returns `flow: job canceled: context canceled`. On every
// path Execute returns after every goroutine it started ended, every
// reservation the exchanges took was released and every spill file removed.
// The graph must be acyclic, and, as in Flink, a consumer that reads its
// inputs one after the other (a hash join's build, then its probe) needs the
// later inputs blocking when they come from the same producer, or the producer
// blocks on the unread input: choosing that is the optimizer's job.
//
// # Jobs
//
// Start validates a graph, starts its subtasks and returns a Job at once;
// Execute is Start then Wait. A Job is RUNNING until every subtask ended,
// then FINISHED, FAILED (Wait returns the first error) or CANCELED (Cancel,
// or the end of Start's context, came before every subtask ended; Wait
// returns `flow: job canceled: context canceled`, even when the bodies
// returned nil once cancelled). Metrics is a live snapshot of every
// subtask's metrics while the job runs; Done is closed, and Wait returns,
// once every goroutine ended and everything was released. Its methods are
// safe for concurrent use.
//
// A streaming job (Options.Streaming) is unbounded: a source body may run
// until the job is cancelled, so Start refuses the edges whose consumers wait
// for their producers to end (Blocking edges and Range edges without
// Bounds), naming the edge. Its pipelined edges, events and metrics are those
// of any job.
//
// # Processing time
//
// A job has one clock.Clock (Options.Clock, clock.System by default) that
// its tasks read through TaskContext.Clock: Now, and Timer, whose channel a
// task loop selects on next to its inputs and its context to wait for a
// processing-time timer. A clock.Manual moves only when a test moves it, so
// processing-time behaviour is deterministic in tests.
//
// # Metrics
//
// Per vertex and subtask (Result.Vertices): records and bytes in and out
// (counted per batch; bytes estimated as records times the record type's size),
// wall time, idle time (waiting for input, Flink's idleTimeMsPerSecond as a
// total), backpressured time (waiting for credit to send, Flink's
// backPressuredTimeMsPerSecond as a total), busy time (wall time minus both),
// bytes spilled by the exchanges and by the body (TaskMetrics.AddSpilled),
// and peak memory (the most one blocking output held in memory, or what the
// body reports through TaskMetrics.ObservePeakMemory). Execute returns the
// metrics on error too. A wait still under way counts in a live snapshot.
// A body may register the operators of its chain (TaskMetrics.Operator) and
// count each one's records in and out once per batch, give each one the
// group of its user metrics (OperatorCounters.SetMetrics, package
// metrics), which the body publishes and the job's metrics read
// (SubtaskMetrics.Metrics), and record its current watermark
// (TaskMetrics.SetWatermark). Job.Overview adds what
// Flink's web UI derives: per vertex and operator the records per second
// over MetricsWindow, the low watermark and its lag behind the job's clock,
// and the shares of time busy, idle and backpressured.
package flow
