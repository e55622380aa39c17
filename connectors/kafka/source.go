package kafka

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/source"
)

// Header is a record header: a key and a value.
type Header = kgo.RecordHeader

// Record is a Kafka record as a deserializer sees it, and as a serializer
// fills it for the sink.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []Header
	// Timestamp is the record's time in milliseconds since the epoch (the
	// producer's, or the broker's for a topic with LogAppendTime).
	Timestamp int64
}

// Deserializer turns a record into a value (Flink's
// KafkaRecordDeserializationSchema). The record and the slices it holds
// are valid only during the call. An error fails the job with a
// RecordError naming the record's topic, partition and offset.
type Deserializer[T any] func(r *Record) (T, error)

// Values returns the deserializer of the records' values as strings.
func Values() Deserializer[string] {
	return func(r *Record) (string, error) { return string(r.Value), nil }
}

// RecordError is a record the deserializer refused: no restart cures it.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("connectors/kafka: topic %s partition %d offset %d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Unrecoverable reports true: a restart reads the record again.
func (e *RecordError) Unrecoverable() bool { return true }

// DefaultDiscoveryInterval is SourceOptions.DiscoveryInterval when it is
// zero: Flink's partition.discovery.interval.ms.
const DefaultDiscoveryInterval = 5 * time.Minute

// SourceOptions configure a Source.
type SourceOptions struct {
	// Topics are the topics to read, each partition a split.
	Topics []string
	// Group is the consumer group whose committed offsets Committed starts
	// from, and to which the offsets of each completed checkpoint are
	// committed (for monitoring: the source resumes from its checkpoints,
	// never from the group). Empty commits nothing.
	Group string
	// Start is where partitions found at start begin (Earliest by
	// default); partitions discovered later begin at the earliest offset.
	Start Offsets
	// Bounded stops each partition at the offset that was its end when
	// the job started (Flink's setBounded(OffsetsInitializer.latest())),
	// and the source ends when every partition reached it. A bounded
	// source discovers no partitions after its start.
	Bounded bool
	// DiscoveryInterval is how often an unbounded source looks for new
	// partitions; zero means DefaultDiscoveryInterval, negative never.
	DiscoveryInterval time.Duration
	// ReadUncommitted reads records of open and aborted transactions too;
	// by default the source reads committed records only (read_committed)
	// and its Latest and bounded ends are last stable offsets.
	ReadUncommitted bool
	// BatchSize is the most records per batch (1024 by default).
	BatchSize int
	// Clock is the clock of discovery and rate limits (the system's by
	// default).
	Clock clock.Clock
}

// Source reads Kafka topics as a split-based source (Flink's KafkaSource):
// a split per topic partition. It is a source.Source; add it to a job with
// stream.FromSource, whose watermark strategy makes a generator per
// partition.
type Source[T any] struct {
	cfg  Config
	opts SourceOptions
	des  Deserializer[T]
}

// NewSource returns the source of opts' topics on the cluster of cfg, its
// records turned into values by des.
func NewSource[T any](cfg Config, opts SourceOptions, des Deserializer[T]) (*Source[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(opts.Topics) == 0 {
		return nil, fmt.Errorf("%w: a source without topics", ErrConfig)
	}
	for _, t := range opts.Topics {
		if t == "" {
			return nil, fmt.Errorf("%w: an empty topic name", ErrConfig)
		}
	}
	if des == nil {
		return nil, fmt.Errorf("%w: a source without a deserializer", ErrConfig)
	}
	if opts.Start.kind == committed && opts.Group == "" {
		return nil, fmt.Errorf("%w: committed offsets need a group", ErrConfig)
	}
	if opts.DiscoveryInterval == 0 {
		opts.DiscoveryInterval = DefaultDiscoveryInterval
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1024
	}
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	opts.Topics = append([]string(nil), opts.Topics...)
	return &Source[T]{cfg: cfg, opts: opts, des: des}, nil
}

// Boundedness is Bounded with SourceOptions.Bounded.
func (s *Source[T]) Boundedness() source.Boundedness {
	if s.opts.Bounded {
		return source.Bounded
	}
	return source.Unbounded
}

// Enumerator lists the partitions (or restores the splits of a snapshot)
// and resolves their start offsets.
func (s *Source[T]) Enumerator(parallelism int, restored *source.EnumeratorState) (source.Enumerator, error) {
	return newEnumerator(s.cfg, s.opts, parallelism, restored)
}

// Reader returns the reader of one subtask, with a client of its own.
func (s *Source[T]) Reader(rc source.ReaderContext) (source.Reader[T], error) {
	return newReader(s, rc)
}

var _ source.Source[string] = (*Source[string])(nil)
