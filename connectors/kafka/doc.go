// Package kafka reads and writes Apache Kafka topics from DataStream
// programs, as Flink's Kafka connector: a split-based Source (Flink's
// KafkaSource) for stream.FromSource and a two-phase Sink (Flink's
// KafkaSink) for stream.SinkTo, at least once or exactly once. It talks
// to the cluster with franz-go (kgo, kadm); its tests run against
// franz-go's in-process broker (kfake).
//
// # Configuration
//
// Config is what a command line takes: the seed brokers, a client id, a
// Timeout (30 s by default) that bounds every wait on the cluster, TLS (a
// CA file, a client certificate, or a tls.Config) and SASL (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512). A cluster that does not answer within
// the timeout is an error wrapping ErrUnreachable that names the brokers
// and the timeout; a configuration that cannot work is one wrapping
// ErrConfig, when the source or sink is built.
//
// # Source
//
//	Source[T] ──Enumerator──▶ a split per partition "topic-partition", queued for its owner reader
//	    │                       (Flink's getSplitOwner: round robin from the topic's Java hash)
//	    └──Reader(subtask)──▶ one client, the held partitions assigned directly (no group membership)
//	                          Next: a batch of one partition's records, Deserializer per record
//
// A split's position is source.Split{ID: "topic-partition", Offset: the
// next offset to read, Records: records read, Len: the stopping offset,
// -1 when unbounded}: it is what a checkpoint keeps (operator state
// SourceReaderState), and a restore reads on from it, at any parallelism.
//
// Start positions (Offsets): Earliest, Latest, Committed (the group's
// offsets, falling back to Earliest or Latest) and Timestamp. The
// enumerator resolves them when it discovers a partition, so a split
// always holds a concrete offset; partitions discovered after the start
// begin at the earliest offset, as in Flink. An unbounded source lists the
// topics again when a reader asks for splits and DiscoveryInterval (5
// minutes by default) has passed; a reader asks when it starts and then
// whenever the enumerator said to ask again, so new partitions reach
// their owners while the job runs. The enumerator's snapshot holds the
// ids of the splits discovered and the ones not yet assigned.
//
// Bounded (Flink's setBounded(OffsetsInitializer.latest())) gives each
// split a stopping offset, the partition's end when the enumerator
// started, and discovers nothing after that; a split ends once its
// position reaches its stopping offset, and the source ends once all did.
// The reader reads committed records only (read_committed) unless
// ReadUncommitted, so the end is then the last stable offset; it keeps
// control records (transaction markers) to move its positions past them.
// A partition whose last offsets before the stop hold no record it can
// see (removed by compaction, or aborted records whose marker lies past
// the stop) ends when the next record or marker past the stop arrives.
//
// Each reader registers Flink's pendingRecords gauge in its operator's
// metric group: the offsets between its positions and the ends of its
// partitions' readable logs (the last stable offset under read_committed,
// else the high watermark; a bounded split's stopping offset at most), as
// the last fetch of each partition saw them. A partition not fetched yet
// does not count; transaction markers do.
//
// The stream runtime runs a watermark generator per split: a strategy
// WithIdleness lets a partition without records stop holding the
// watermark back. The deserializer sees the record's key, value,
// headers, timestamp, topic, partition and offset; the stream's event time
// comes from the strategy's timestamp assigner, so a program that wants
// the Kafka timestamps puts Record.Timestamp into its values. A record the
// deserializer refuses fails the job with a RecordError naming its topic,
// partition and offset (unrecoverable: a restart would read it again). A
// deserializer that would rather skip such a record returns a value that
// says so (weir nexmark's KindBad events, for its dead-letter output).
//
// The reader is a source.CheckpointListener: the positions of a
// checkpoint are committed to Group once it completes, in the background
// and for monitoring only; a failed commit is not an error, and the source
// resumes from its checkpoints, never from the group.
//
// # Sink
//
// A Sink writes each value as the record its Serializer fills (topic, key,
// value, headers, timestamp; the record's event time by default). The
// kgo records and their key and value buffers are reused once
// acknowledged, so a serializer that appends allocates nothing per record.
// A record is never aged by its timestamp (an event time may lie years
// back): the waits for the cluster are the flushes, each within
// Config.Timeout, on every barrier and whenever MaxBufferedRecords records
// wait unacknowledged.
//
// AtLeastOnce: one idempotent producer per subtask, flushed on every
// checkpoint's barrier and at the end of input (Flush): every record before
// a completed checkpoint is in Kafka.
//
// ExactlyOnce (Flink's ExactlyOnceKafkaWriter and KafkaCommitter): the
// records a subtask writes between two barriers go into one transaction
// with transactional id <prefix>-<subtask>-<n>, opened by a producer of
// its own at the first record after a barrier. On a barrier the writer
// flushes the transaction, returns it as a Committable (id, producer id,
// epoch) from PrepareCommit, closes its producer without ending the
// transaction, and counts n on; a barrier with nothing written keeps the
// transaction open. The committable waits in the checkpoint (operator
// state SinkCommittables) until the checkpoint completed; the committer
// then ends the transaction with a commit (EndTxn with the producer id and
// epoch, as the producer would). The writer state (union) holds each
// subtask's next n: the counter is derived from the checkpoints, so a
// subtask's transactions are numbered without gaps from the counter of
// the checkpoint it restored (1 without one).
//
//	barrier k:  Flush ─▶ PrepareCommit: Committable{<prefix>-<s>-<n>, pid, epoch}, n++ ─▶ SnapshotState: n
//	k completes: Committer: EndTxn(commit)  (a commit repeated after a restore succeeds again)
//	restore:    committables of the checkpoint committed; ids from each restored n on are
//	            initialized one by one until one was never used (epoch 0): every transaction
//	            a failed attempt left open is aborted (Flink's PROBING abort strategy)
//
// Initializing a transactional id bumps its epoch, which fences every
// producer of the id still alive: a zombie of a failed attempt can neither
// write nor commit. A subtask probes its own ids and those of old subtasks
// j with j mod parallelism = subtask (a restore at a lower parallelism).
// A writer closed before its barrier aborts its open transaction. A
// transaction the broker aborted before its commit (TransactionTimeout,
// 15 minutes by default, ran out during an outage), or whose producer was
// fenced, cannot be committed: as Flink does, the commit request is
// dropped with that reason (an error wrapping ErrFenced) and its records
// are lost, so the timeout must outlast the checkpoint interval plus the
// time a failed job takes to restore. TransactionalIDPrefix must be
// unique to the job on the cluster and kept across its restarts.
//
// # Producer
//
// Producer loads a topic outside a job (weir gen nexmark --topic): records
// without key, spread round robin over the partitions, so that each
// partition holds its records in the order they were produced; Close
// waits, within the timeout, until every record is acknowledged.
//
// Errors start with "connectors/kafka:". This package imports the
// standard library, franz-go and weir's stream contracts (stream,
// stream/source, stream/sink, stream/watermark), clock and formats; never
// the runtime.
package kafka
