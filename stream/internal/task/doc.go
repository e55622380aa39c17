// Package task runs one subtask of a stream job: the operators of a chain,
// in one goroutine, around one mailbox loop (Flink's StreamTask with its
// MailboxProcessor).
//
// # Model
//
//	           ┌──────────────── Runtime (one subtask) ────────────────┐
//	mail ─────▶│ loop: mail, processing-time timers, then input.step   │──▶ network outputs
//	(trigger,  │        │                                              │    (records, watermarks,
//	 complete, │        ▼                                              │     statuses, barriers)
//	 bound,    │                                                       │
//	 operator) │                                                       │
//	           │  input: the gate of the network inputs, a source      │
//	           │  reader, or an iteration head (gate + feedback queue) │
//	           │        │ batches                                      │
//	           │        ▼                                              │
//	           │  operators, in topological order (chained)            │
//	           └───────────────────────────────────────────────────────┘
//
// A Runtime is built by the graph layer: it adds the chain's operators
// (AddOperator, downstream first) and network outputs (AddOutput), then
// calls Run with the chain's Input. Run opens the operators (with the
// state of Config.Restore), registers with the checkpoint coordinator,
// sends the restored records in flight again, and loops until the input
// ends; then every operator's EndInput, and on every path Close.
//
// # Checkpoints
//
// The task talks to the checkpoint coordinator only through the messages
// of package protocol: a source task gets Trigger in its mailbox, other
// tasks get barriers in band; each takes its operators' snapshots (keyed
// state of the heap backend asynchronously), sends the barrier on, and
// acknowledges with the snapshots by stable operator id. Unaligned
// checkpoints add the records the barriers overtook (channel state). An
// iteration head logs the records fed back between its barrier and the
// barrier's return through the loop, and acknowledges with them (the
// back-edge logging of Carbone et al.'s asynchronous barrier snapshots for
// cyclic graphs); a restore feeds them in again first. Complete in the
// mailbox reaches every operator's NotifyCheckpointComplete, in chain
// order; Abort reaches each operator that is an AbortListener.
//
// # Watermark alignment
//
// A source whose strategy aligns watermarks (Source.Align) registers its
// mailbox with its source's Aligner and reports the watermark it emitted
// last every update interval (protocol.ReportedWatermark; Max when idle
// or at the end of its input; nothing before its first watermark). The
// announced bound (protocol.WatermarkAlignment) comes through the mailbox,
// like the checkpoint coordinator's mail, and ends a read in progress. A
// split whose watermark passed the bound is paused in the reader
// (source.SplitPauser) from the batch after the one that passed it, and
// its idleness clock stands still; an announcement that reaches it again
// resumes it; idle splits are left as they are. While the subtask's own
// watermark is past the bound it reads nothing and waits for mail or its
// next tick, without spinning. Paused splits are snapshotted at their
// positions like the others; the bound is not: a restored subtask reads
// unbounded until its first announcement, as Flink's.
//
// # Operator mail
//
// An operator that other goroutines hand work to (an async operator's
// completed calls) is a MailHandler: its Mail's Post, from any goroutine,
// wakes the task, which calls ProcessMail on its own goroutine between
// batches. An operator that cannot go on inside a call (its queue is full,
// its input ended with calls in flight) yields (Setup.Yield): the task
// runs the mail and the due processing-time timers of that operator and of
// those after it, never of those before it, so nothing reenters the
// operator. A WatermarkHolder takes the watermarks the chain passes it and
// passes each on later (Setup.ReleaseWatermark); the chain's watermark,
// the one its snapshots hold, is the one that went through the whole chain.
//
// # Contracts
//
// Operators are called on the task's goroutine only, except the WriteTo
// of an AsyncPart and Mail.Post. A batch pushed into an operator belongs
// to the caller. Watermarks pass through the chain in order: records an
// operator emits while firing timers reach the operators after it before
// the watermark.
package task
