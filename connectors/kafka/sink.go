package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weirdata/weir/stream/sink"
)

// Delivery is a sink's guarantee (Flink's DeliveryGuarantee).
type Delivery uint8

// The delivery guarantees of a Sink.
const (
	// AtLeastOnce flushes the producer on every checkpoint's barrier and
	// at the end of input: every record before a completed checkpoint is
	// in Kafka; a restore may write again what came after it.
	AtLeastOnce Delivery = iota
	// ExactlyOnce writes each subtask's records between two barriers in
	// one Kafka transaction, committed once the checkpoint completed: a
	// read_committed consumer sees every record once.
	ExactlyOnce
)

func (d Delivery) String() string {
	if d == ExactlyOnce {
		return "exactly-once"
	}
	return "at-least-once"
}

// ParseDelivery reads a delivery as a --delivery flag holds it:
// at-least-once or exactly-once.
func ParseDelivery(s string) (Delivery, error) {
	switch strings.ToLower(s) {
	case "at-least-once", "at_least_once":
		return AtLeastOnce, nil
	case "exactly-once", "exactly_once":
		return ExactlyOnce, nil
	}
	return 0, fmt.Errorf("%w: delivery %q (want at-least-once or exactly-once)", ErrConfig, s)
}

// Serializer fills the record v is written as (Flink's
// KafkaRecordSerializationSchema). r comes with Topic set to the sink's
// topic, Timestamp to the record's event time (0 when it has none: the
// producer's clock), and Key, Value and Headers empty but with room: a
// serializer that appends to them allocates nothing once they grew. It
// may set another topic. What it leaves in r is produced; r is the
// sink's until the record is acknowledged.
type Serializer[T any] func(v T, r *Record) error

// ValueBytes returns the serializer that writes a string as the record's
// value, with no key.
func ValueBytes() Serializer[string] {
	return func(v string, r *Record) error {
		r.Value = append(r.Value, v...)
		return nil
	}
}

// DefaultTransactionTimeout is SinkOptions.TransactionTimeout when it is
// zero: a broker's default transaction.max.timeout.ms.
const DefaultTransactionTimeout = 15 * time.Minute

// SinkOptions configure a Sink.
type SinkOptions struct {
	// Topic is where records go, unless the serializer names another.
	Topic string
	// Delivery is AtLeastOnce (the default) or ExactlyOnce.
	Delivery Delivery
	// TransactionalIDPrefix starts the transactional ids of an
	// ExactlyOnce sink: <prefix>-<subtask>-<counter>. It must be unique
	// to the job among the cluster's producers, and stay the same across
	// the job's restarts and restores.
	TransactionalIDPrefix string
	// TransactionTimeout is how long the broker keeps a transaction open
	// before it aborts it; zero means DefaultTransactionTimeout, which
	// must not exceed the broker's transaction.max.timeout.ms. A
	// transaction is committed when its checkpoint completed, so the
	// timeout must outlast the checkpoint interval plus the time a failed
	// job takes to restore: a transaction aborted by the broker before its
	// commit loses its records.
	TransactionTimeout time.Duration
	// MaxBufferedRecords bounds the records a writer holds unacknowledged
	// (10,000 by default); a Write that finds it reached first flushes,
	// within the timeout.
	MaxBufferedRecords int
}

// Sink writes a stream into a Kafka topic (Flink's KafkaSink), at least
// once or exactly once. It is a sink.TwoPhaseSink: add it to a job with
// stream.SinkTo. Its writer state is union state, so that a writer
// restored at any parallelism sees the transactional ids of every old
// subtask.
type Sink[T any] struct {
	cfg  Config
	opts SinkOptions
	ser  Serializer[T]
}

// NewSink returns the sink of opts on the cluster of cfg, values written
// as ser says.
func NewSink[T any](cfg Config, opts SinkOptions, ser Serializer[T]) (*Sink[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Topic == "" {
		return nil, fmt.Errorf("%w: a sink without a topic", ErrConfig)
	}
	if ser == nil {
		return nil, fmt.Errorf("%w: a sink without a serializer", ErrConfig)
	}
	if opts.Delivery == ExactlyOnce {
		if opts.TransactionalIDPrefix == "" {
			return nil, fmt.Errorf("%w: an exactly-once sink needs a transactional id prefix", ErrConfig)
		}
		if opts.TransactionTimeout == 0 {
			opts.TransactionTimeout = DefaultTransactionTimeout
		}
		if opts.TransactionTimeout < time.Millisecond {
			return nil, fmt.Errorf("%w: transaction timeout %v", ErrConfig, opts.TransactionTimeout)
		}
	}
	if opts.MaxBufferedRecords <= 0 {
		opts.MaxBufferedRecords = 10000
	}
	return &Sink[T]{cfg: cfg, opts: opts, ser: ser}, nil
}

// CreateWriter opens the writer of subtask ctx.Subtask. Exactly once, it
// first aborts the transactions earlier attempts left open (Flink's
// TransactionAbortStrategy PROBING).
func (s *Sink[T]) CreateWriter(ctx sink.InitContext) (sink.CommittingWriter[T, Committable], error) {
	return newWriter(s, ctx)
}

// CreateCommitter returns the committer of the sink's transactions.
func (s *Sink[T]) CreateCommitter(sink.InitContext) (sink.Committer[Committable], error) {
	return &committer{cfg: s.cfg}, nil
}

// CommittableSerializer encodes a Committable with MarshalBinary.
func (s *Sink[T]) CommittableSerializer() sink.Serializer[Committable] {
	return committableSerializer{}
}

// UnionWriterState is true: see Sink.
func (s *Sink[T]) UnionWriterState() bool { return true }

var _ sink.TwoPhaseSink[string, Committable] = (*Sink[string])(nil)

// Committable is a transaction prepared on a checkpoint's barrier: flushed,
// not committed (Flink's KafkaCommittable). The committer ends it with its
// producer id and epoch, as the producer that wrote it would.
type Committable struct {
	TransactionalID string
	ProducerID      int64
	Epoch           int16
}

const committableVersion = 1

// MarshalBinary encodes c: a version, the id's length and bytes, the
// producer id and epoch as varints.
func (c Committable) MarshalBinary() ([]byte, error) {
	b := []byte{committableVersion}
	b = binary.AppendUvarint(b, uint64(len(c.TransactionalID)))
	b = append(b, c.TransactionalID...)
	b = binary.AppendVarint(b, c.ProducerID)
	return binary.AppendVarint(b, int64(c.Epoch)), nil
}

// ErrCorrupt is wrapped by the errors of committables and writer states
// this package did not encode.
var ErrCorrupt = errors.New("connectors/kafka: corrupt encoding")

// UnmarshalBinary decodes what MarshalBinary wrote.
func (c *Committable) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != committableVersion {
		return fmt.Errorf("%w: committable version", ErrCorrupt)
	}
	b = b[1:]
	id, b, ok := readString(b)
	if !ok {
		return fmt.Errorf("%w: committable id", ErrCorrupt)
	}
	pid, n := binary.Varint(b)
	if n <= 0 {
		return fmt.Errorf("%w: committable producer id", ErrCorrupt)
	}
	b = b[n:]
	epoch, n := binary.Varint(b)
	if n <= 0 || n != len(b) || epoch < 0 || epoch > 1<<15-1 {
		return fmt.Errorf("%w: committable epoch", ErrCorrupt)
	}
	*c = Committable{TransactionalID: id, ProducerID: pid, Epoch: int16(epoch)}
	return nil
}

func readString(b []byte) (string, []byte, bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return "", nil, false
	}
	return string(b[n : n+int(l)]), b[n+int(l):], true
}

type committableSerializer struct{}

func (committableSerializer) Marshal(c Committable) ([]byte, error) { return c.MarshalBinary() }
func (committableSerializer) Unmarshal(b []byte) (Committable, error) {
	var c Committable
	err := c.UnmarshalBinary(b)
	return c, err
}

// writerState is what an exactly-once writer snapshots: its subtask and
// the counter of its next transaction (Flink's KafkaWriterState, with the
// checkpoint-derived part of the id).
type writerState struct {
	prefix  string
	subtask int
	next    int64
}

const writerStateVersion = 1

func (s writerState) marshal() []byte {
	b := []byte{writerStateVersion}
	b = binary.AppendUvarint(b, uint64(len(s.prefix)))
	b = append(b, s.prefix...)
	b = binary.AppendUvarint(b, uint64(s.subtask))
	return binary.AppendVarint(b, s.next)
}

func (s *writerState) unmarshal(b []byte) error {
	if len(b) == 0 || b[0] != writerStateVersion {
		return fmt.Errorf("%w: writer state version", ErrCorrupt)
	}
	prefix, b, ok := readString(b[1:])
	if !ok {
		return fmt.Errorf("%w: writer state prefix", ErrCorrupt)
	}
	sub, n := binary.Uvarint(b)
	if n <= 0 || sub > 1<<30 {
		return fmt.Errorf("%w: writer state subtask", ErrCorrupt)
	}
	next, m := binary.Varint(b[n:])
	if m <= 0 || n+m != len(b) || next < 1 {
		return fmt.Errorf("%w: writer state counter", ErrCorrupt)
	}
	*s = writerState{prefix: prefix, subtask: int(sub), next: next}
	return nil
}

// transactionalID is the id of a subtask's transaction number n (Flink's
// TransactionalIdFactory.buildTransactionalId).
func transactionalID(prefix string, subtask int, n int64) string {
	return fmt.Sprintf("%s-%d-%d", prefix, subtask, n)
}
