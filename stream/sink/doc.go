// Package sink holds the sink contract of DataStream programs, Flink's
// Sink V2 (Sink, TwoPhaseSink, Writer, CommittingWriter, Committer), and
// the sinks weir ships: Print (print and printToErr), Collect (records
// gathered in memory), and FileSink, which writes rolling part files and
// publishes them through a two-phase commit tied to checkpoints (Flink's
// FileSink), the contract's first user. Each sink hands out one writer per
// subtask; a writer is used by one goroutine.
//
// # The contract
//
// A Sink makes a Writer per subtask (CreateWriter with an InitContext:
// subtask, parallelism, restored writer states, whether the job
// checkpoints, the operator's metric group for the writer's and the
// committer's metrics). A TwoPhaseSink also makes Committers and encodes its
// committables with a Serializer, for the snapshots that hold them. The
// runtime (stream.SinkTo, stream.SinkToWriter) calls, on the subtask's
// goroutine:
//
//	CreateWriter ─▶ Write(v, Context{Timestamp, Watermark})* (WriteBatch for a BatchWriter)
//	                WriteWatermark(wm) (a WatermarkWriter), Tick() every TickInterval (a Ticker)
//	barrier n:      Flush(false) ─▶ PrepareCommit(n) ─▶ SnapshotState(n) (a StatefulWriter)
//	                the committables and the states go into the snapshot of checkpoint n
//	n completes:    Committer.Commit(requests of checkpoints ≤ n) ─▶ NotifyCheckpointComplete(n)
//	n aborted:      NotifyCheckpointAborted(n) (a CheckpointListener); its committables wait
//	end of input:   Flush(true) ─▶ PrepareCommit(EndOfInput), committed once every subtask ended
//	Close           on every path
//
// A restored subtask gets the writer states in InitContext.States (a
// share of the old subtasks', or all of them for a UnionState sink) and
// commits at once the committables its snapshot holds: a commit may come
// twice, after a failure, so a Committer must be idempotent. A
// CommitRequest left untouched by Commit counts as committed; RetryLater
// asks again at once, up to DefaultCommitRetries times, after which the
// job fails; SignalFailedWithKnownReason drops the committable;
// SignalFailedWithUnknownReason, or an error from Commit, fails the job.
// Exactly once holds when nothing PrepareCommit returned is visible before
// its commit: records after the last completed checkpoint are written
// again by the restored job into new committables, and those the failed
// attempt prepared after it are never committed.
//
// # Print
//
// Every record is printed as one line, its ToString after a prefix: as
// Flink's PrintSinkOutputWriter, "identifier:N> " with N the subtask index
// plus one, the identifier (and its colon) left out when empty, N left out
// when the parallelism is 1, and "> " left out when both are. ToString
// prints a Go value as Flink prints the equivalent Java value:
//
//	string                 bare: hello
//	bool, integers         true, -42, 1424951918630
//	float64, float32       Double.toString, Float.toString: the shortest digits that
//	                       read back; plain with at least one fractional digit when
//	                       1e-3 <= |x| < 1e7 (1.0, 3.5, 0.001, 15.277777777777777),
//	                       else scientific (1.0E10, 1.0E-4); NaN, Infinity, -Infinity,
//	                       -0.0 (the shortest digits are JDK 19's rule; earlier JDKs
//	                       print a longer form for a few values)
//	struct                 a Flink tuple: its fields in order, "(f0,f1,...)":
//	                       (hello,3), (0,55,15.277777777777777,1424951918630)
//	slice, array           Arrays.toString: [1, 2, 3]; a nil slice is null
//	map                    {k=v, k2=v2}, entries sorted (Java's HashMap order is
//	                       unspecified)
//	pointer, interface     the value pointed to; nil is null
//	time.Time              Instant.toString: 2015-02-26T13:18:38.630Z
//	error, fmt.Stringer    Error(), String(): a type's own toString
//
// # Collect
//
// Collect keeps every subtask's records in the order they arrived; Records
// returns subtask 0's, then subtask 1's, and so on.
//
// # File sinks
//
// A FileSink writes into one directory. Subtask i writes part files one after
// another, named as Flink's OutputFileConfig says: <prefix>-<i>-<counter>
// <suffix> ("part-0-0", "part-0-1", ...; prefix "part" and no suffix by
// default). A part goes through three names:
//
//	.part-0-3.inprogress.N   being written (bulk formats: the format's temporary
//	                         file "..part-0-3.inprogress.N.tmp-*", renamed to this
//	                         name once complete)
//	.part-0-3.pending.N      complete (flushed, footer written, synced), waiting
//	                         for its checkpoint to complete
//	part-0-3                 committed
//
// so the committed parts are the only files of the directory whose names do
// not start with a dot, and a committed name never holds a partial file. N
// is the writer's nonce, 16 random hex digits: two writers of one subtask
// restored from the same checkpoint (a new attempt, and a zombie attempt of
// the old one on a TaskManager the cluster thought lost) never write,
// rename or remove each other's hidden files, as Flink's in-progress files
// end in a UUID. Only a commit, which the checkpoint's completion gate
// allows, publishes a part. Hidden names without a nonce, of older
// versions, are still read. A writer creates the directory again when it
// opens a part and the directory is gone (another run removed it empty).
// Readers that skip hidden files (formats.Expand, Flink's FileSource) read
// committed data only.
//
// A FileSink has one bucket, its directory (Flink's BasePathBucketAssigner):
// records are not spread over subdirectories.
//
// Row formats (Text, TextOf, Rows) encode record by record and know their part's
// size, so they roll by the RollingPolicy: DefaultRollingPolicy (Flink's:
// before a record once the part holds more than PartSize bytes, 128 MiB;
// at a Tick once the part has been open for RolloverInterval or idle for
// InactivityInterval, 60 s each) or OnCheckpointRollingPolicy. Bulk formats
// (CSV and Parquet, through formats/csv and formats/parquet, as Flink's
// CsvBulkWriters and ParquetWriterFactory) encode a part as a whole and roll
// on checkpoints only; Parquet's parts end in ".parquet" by default.
// Processing time comes from the sink's clock (injectable), read once per
// batch; the runtime calls Tick every CheckInterval (Flink's bucket check
// interval, 60 s).
//
// # Commit protocol
//
// A checkpoint runs, per subtask, PrepareCommit(id) and then Snapshot:
//
//	Write* ──PrepareCommit(id)──▶ []Committable (pending parts) ──checkpoint id completes──▶ Commit
//	         closes the in-progress part          │
//	Snapshot() ──▶ state: subtask, next counter    └ kept in the committer's state until committed
//
// PrepareCommit always closes the in-progress part (a row part is not
// resumed across checkpoints), so after a checkpoint every record written
// before it is in a pending part named by the committables. Commit renames
// pending parts to their final names; it is idempotent, so a job restored
// from a checkpoint commits that checkpoint's committables again whether or
// not they were committed before. A bounded input ends with Finish, which
// closes the last part and returns its committable for the job to commit.
// Abort, the end of a job that will not be restored, removes the writer's
// in-progress and uncommitted pending parts.
//
// A writer restored from the states of a checkpoint (Writer with the
// Snapshots) starts at the highest part counter in them, so it never reuses
// the name of a part that may have been committed (nor of any part committed
// in the directory: a writer starts after them), and removes what the
// failed run left after the checkpoint: in-progress parts, pending parts
// of checkpoints that never completed, and committed parts numbered after
// the checkpoint (a later checkpoint or savepoint committed them; the job
// writes their records again), which it reports (WithNotices). Committables
// and states encode as bytes; a committable holds its files' names, not
// their paths, and a restore accepts only names of the sink's own parts,
// joined to its directory (FileSink.Confine): a crafted snapshot cannot
// rename a file outside it.
//
// Errors of the sinks here start with "stream/sink:" and name the file or
// directory.
//
// This package imports the standard library and formats only: it knows
// nothing of the runtime (flow) or the APIs (dataset, stream).
package sink
