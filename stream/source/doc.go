// Package source reads the inputs of DataStream programs as Flink's FLIP-27
// sources do: a source is cut into splits, an enumerator discovers them and
// assigns them to reader subtasks, and each reader reads its splits a batch
// at a time and knows, for every split, the position it has reached. A
// checkpoint stores those positions (and the enumerator's pending splits);
// a restore hands them back and reading resumes where it stopped. Because
// every batch names its split, the stream runtime can run one watermark
// generator per split.
//
// # Model
//
//	Source[T] ──Enumerator(parallelism, restored)──▶ Enumerator: discovers splits, assigns them
//	    │                                                 ▲ Request(subtask)
//	    └──Reader(ReaderContext)──▶ Reader[T] ────────────┘ when it holds no split
//	                                  │ Next(ctx): Batch{Split, First, Records} or Batch{Split, End}
//	                                  │ Positions(): []Split at the position after the last batch
//	                                  └ AddSplits(restored positions)
//
// A Split is a small value: an id (a file's path, host:port, "sequence 2"),
// Offset (byte offset of the next line, or index of the next record, or next
// number), Records (records before Offset, so line numbers survive a
// restore) and Len. It encodes with MarshalBinary. A reader's Positions are
// its splits moved past every record Next has returned.
//
// # Enumerators
//
// Bounded sources list every split at start. OnRequest (the default, as
// Flink's FileSource and NumberSequenceSource) gives the next pending split
// to whichever reader asks; a reader asks only when it holds no unfinished
// split, so it reads one split at a time and faster readers read more.
// Static gives split k to reader k mod parallelism. The enumerator runs no
// goroutine: MonitorDirectory's enumerator lists the directory at start and
// again when a request finds nothing pending and the interval has passed
// (answering Later with the time to wait), and keeps the set of files it
// has seen, which Snapshot returns with the pending splits.
//
// # Readers
//
// One reader type serves every source. Of a bounded source it reads its
// splits one after another in the order it got them, opening each when the
// one before is finished (as Flink's IteratorSourceReader and
// FileSourceReader); of an unbounded source, a batch from each in turn. A
// split with nothing to read now (a quiet socket, a tailed file at its end,
// a paced generator) says how long to wait, and Next looks at the others
// before it waits. Next returns one End batch after a split's last records
// so that the runtime can retire the split's watermark generator. When the enumerator
// has no more splits for it and its splits are done, Next returns io.EOF.
// Of an unbounded source that happens only when its splits end by
// themselves: a socket whose server closed the connection, as in Flink.
//
// Every reader is a SplitPauser (Flink's pauseOrResumeSplits, FLIP-217):
// under watermark alignment the runtime pauses a split that ran ahead. A
// paused split hands out nothing and keeps its position; the others are
// read on (a bounded source's reader opens its next split when the one it
// reads is paused), and a reader all of whose splits are paused waits on
// ctx without spinning.
//
// Batches are reused: Records is valid until the next Next, and a reader
// allocates nothing per record in the steady state. Strings handed out by
// the text, tail and socket readers point into read buffers that are never
// overwritten, so they stay valid; CSV and Parquet records keep formats'
// guarantees. A reader and its splits are used by one goroutine; Positions
// and AddSplits are called between Next calls. A reader that is a
// CheckpointListener is told, between Next calls, the checkpoint whose
// positions the runtime just took (Checkpointed) and when that checkpoint
// completed (NotifyCheckpointComplete), as Flink's SourceReader is: a
// Kafka reader commits its offsets to its group then.
//
// # Sources
//
//	FromSlice, FromSeq, Sequence  bounded; position = index (Sequence: next number)
//	Files(Text(), CSV[T], Parquet[T])  bounded, a split per regular file (a pipe is refused),
//	                              read to its size when opened (text: to its last complete line if it grew); text and
//	                              CSV resume mid-file at a byte offset, Parquet at a row
//	                              index (the file is decoded again and read rows skipped)
//	MonitorDirectory(format, dir, interval)  unbounded; new files read once, in order of discovery
//	Tail(path)                    unbounded; appended lines; a partial last line waits
//	Socket(host, port, delimiter) unbounded; Flink's socketTextStream (Reconnect: its retries)
//	Generator(fn, count, perSecond)  Flink's DataGeneratorSource, rate per reader =
//	                              perSecond / parallelism, paced by an injectable Clock
//	Parse(src, fn)                lines parsed into records
//
// ReaderContext.Rate (stream.Options.SourceRate split over the subtasks)
// throttles every reader of this package: a Throttle (Flink's
// RateLimiterStrategy.perSecond: record k due at k/rate on the clock, at
// most a hundredth of a second's records at once, a reader more than a
// second behind starting anew) says how many records it may read now.
// Readers of other packages (connectors/kafka's) pace by it too.
//
// # Cancellation and errors
//
// Next returns ctx.Err() as soon as ctx is done: its waits watch ctx, and a
// blocked socket read is interrupted. A Next ended by ctx loses nothing, so
// a runtime may call Next with a deadline to wake up periodically. No source
// starts a goroutine that outlives Close (Parquet files are pulled through
// iter.Pull, stopped by Close). Errors start with "stream/source:";
// a malformed record names the file and line (and, for CSV, the column; for
// Parquet the row group and row), or host:port and line for a socket's lines
// under Parse; a line longer than MaxLineSize (16 MiB) of a text file, tailed
// file or socket is an error naming it, the line and the limit, and a CSV
// record longer than csv.Options.MaxRecordSize likewise; a missing file or
// directory is an error when the source
// is built (and a monitored directory that disappears, at its next listing),
// and an unreachable socket when its reader starts.
//
// This package imports the standard library and formats only: it knows
// nothing of the runtime (flow) or the APIs (dataset, stream).
package source
