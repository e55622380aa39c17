package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/stream/sink"
)

// writer is a sink subtask's writer (Flink's KafkaWriter). At least once
// it holds one idempotent producer for its life and flushes it on every
// barrier. Exactly once it holds the producer of the open transaction,
// <prefix>-<subtask>-<next>, opened at the first record after a barrier;
// on a barrier with records in it the transaction is flushed, handed over
// as a Committable and its producer closed without ending it, and the
// next record opens transaction next+1 (Flink's ExactlyOnceKafkaWriter
// with a new producer per checkpoint). A barrier without records keeps
// the open transaction, so the transactions a subtask opens are numbered
// without gaps from its restored counter: the probing on restore stops at
// the first number never used.
type writer[T any] struct {
	s       *Sink[T]
	subtask int
	exact   bool
	cl      *kgo.Client // nil exactly once before a transaction's first record
	next    int64       // exactly once: the counter of the open or next transaction
	records int         // produced into the open transaction
	rec     Record
	promise func(*kgo.Record, error)

	mu   sync.Mutex
	free []*kgo.Record // records acknowledged, to reuse
	err  error         // the first failed record's
}

func newWriter[T any](s *Sink[T], ctx sink.InitContext) (*writer[T], error) {
	w := &writer[T]{s: s, subtask: ctx.Subtask, exact: s.opts.Delivery == ExactlyOnce, next: 1}
	w.promise = w.acked
	if !w.exact {
		cl, err := s.cfg.connect(w.producerOpts()...)
		if err != nil {
			return nil, err
		}
		w.cl = cl
		return w, nil
	}
	// the counters each old subtask had reached: this subtask's own
	// continues, and the transactions any of them opened after the
	// restored checkpoint are aborted
	starts := map[int]int64{}
	for i, b := range ctx.States {
		var st writerState
		if err := st.unmarshal(b); err != nil {
			return nil, fmt.Errorf("connectors/kafka: restore writer state %d: %w", i, err)
		}
		if st.prefix == s.opts.TransactionalIDPrefix {
			starts[st.subtask] = max(starts[st.subtask], st.next)
		}
	}
	if n, ok := starts[ctx.Subtask]; ok {
		w.next = n
	}
	if err := abortLingering(s.cfg, s.opts, ctx.Subtask, max(ctx.Parallelism, 1), starts); err != nil {
		return nil, err
	}
	return w, nil
}

// producerOpts are the options of the writer's producers.
func (w *writer[T]) producerOpts() []kgo.Opt {
	o := w.s.opts
	return []kgo.Opt{
		kgo.DefaultProduceTopic(o.Topic),
		kgo.MaxBufferedRecords(o.MaxBufferedRecords),
		// no RecordDeliveryTimeout: franz-go ages a record by its
		// Timestamp, which is the record's event time here, and would fail
		// every record of a past event time. The waits on the cluster are
		// bounded by the flushes instead (Write, Flush).
		kgo.ProducerLinger(5 * time.Millisecond),
	}
}

// begin opens transaction w.next: its producer initialized (fencing any
// producer of the same id still alive) and in a transaction.
func (w *writer[T]) begin() error {
	id := transactionalID(w.s.opts.TransactionalIDPrefix, w.subtask, w.next)
	opts := append(w.producerOpts(), kgo.TransactionalID(id), kgo.TransactionTimeout(w.s.opts.TransactionTimeout))
	cl, err := w.s.cfg.connect(opts...)
	if err != nil {
		return err
	}
	ctx, cancel := w.s.cfg.opContext()
	defer cancel()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return fmt.Errorf("connectors/kafka: init transaction %s: %w", id, err)
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return fmt.Errorf("connectors/kafka: begin transaction %s: %w", id, err)
	}
	w.cl, w.records = cl, 0
	return nil
}

// acked takes back an acknowledged record; the first failure fails the
// writer.
func (w *writer[T]) acked(r *kgo.Record, err error) {
	w.mu.Lock()
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("connectors/kafka: produce to %s: %w", r.Topic, err)
	}
	w.free = append(w.free, r)
	w.mu.Unlock()
}

func (w *writer[T]) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Write produces v as the serializer fills its record.
func (w *writer[T]) Write(v T, ctx sink.Context) error {
	if w.cl == nil {
		if err := w.begin(); err != nil {
			return err
		}
	}
	w.mu.Lock()
	var kr *kgo.Record
	if n := len(w.free); n > 0 {
		kr = w.free[n-1]
		w.free = w.free[:n-1]
	}
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if kr == nil {
		kr = new(kgo.Record)
	}
	w.rec = Record{Topic: w.s.opts.Topic, Key: kr.Key[:0], Value: kr.Value[:0], Headers: kr.Headers[:0]}
	if ctx.HasTimestamp() {
		w.rec.Timestamp = ctx.Timestamp
	}
	if err := w.s.ser(v, &w.rec); err != nil {
		return fmt.Errorf("connectors/kafka: serialize a record for %s: %w", w.s.opts.Topic, err)
	}
	*kr = kgo.Record{Topic: w.rec.Topic, Key: w.rec.Key, Value: w.rec.Value, Headers: w.rec.Headers}
	if w.rec.Timestamp != 0 {
		kr.Timestamp = time.UnixMilli(w.rec.Timestamp)
	}
	w.rec = Record{}
	if w.cl.BufferedProduceRecords() >= int64(w.s.opts.MaxBufferedRecords) {
		// Produce would wait for room without bound: a flush waits
		// within the timeout
		if err := w.Flush(false); err != nil {
			return err
		}
	}
	w.cl.Produce(context.Background(), kr, w.promise)
	w.records++
	return nil
}

// Flush waits until every record written was acknowledged, within the
// timeout.
func (w *writer[T]) Flush(bool) error {
	if w.cl == nil {
		return w.failed()
	}
	ctx, cancel := w.s.cfg.opContext()
	defer cancel()
	if err := w.cl.Flush(ctx); err != nil {
		return fmt.Errorf("connectors/kafka: flush to %s: %w", w.s.opts.Topic, err)
	}
	return w.failed()
}

// PrepareCommit hands over the open transaction when it holds records:
// flushed, its producer closed, the transaction left open for the
// committer.
func (w *writer[T]) PrepareCommit(int64) ([]Committable, error) {
	if !w.exact || w.cl == nil || w.records == 0 {
		return nil, w.failed()
	}
	if err := w.Flush(false); err != nil {
		return nil, err
	}
	ctx, cancel := w.s.cfg.opContext()
	defer cancel()
	pid, epoch, err := w.cl.ProducerID(ctx)
	if err != nil {
		return nil, fmt.Errorf("connectors/kafka: producer of transaction %d: %w", w.next, err)
	}
	c := Committable{TransactionalID: transactionalID(w.s.opts.TransactionalIDPrefix, w.subtask, w.next), ProducerID: pid, Epoch: epoch}
	w.cl.Close()
	w.cl = nil
	w.next++
	return []Committable{c}, nil
}

// SnapshotState returns the writer's subtask and next counter.
func (w *writer[T]) SnapshotState(int64) ([][]byte, error) {
	if !w.exact {
		return nil, nil
	}
	return [][]byte{writerState{prefix: w.s.opts.TransactionalIDPrefix, subtask: w.subtask, next: w.next}.marshal()}, nil
}

// Close closes the producer. Exactly once, an open transaction (not handed
// over) is aborted: its records will be written again after a restore.
func (w *writer[T]) Close() error {
	if w.cl == nil {
		return nil
	}
	if w.exact {
		ctx, cancel := context.WithTimeout(context.Background(), min(w.s.cfg.timeout(), 5*time.Second))
		err := w.cl.AbortBufferedRecords(ctx)
		if err == nil {
			err = w.cl.EndTransaction(ctx, kgo.TryAbort)
		}
		cancel()
		_ = err // a transaction not aborted here is aborted by the restored writer, or by the broker's timeout
	}
	w.cl.Close()
	w.cl = nil
	return nil
}

var (
	_ sink.StatefulWriter                        = (*writer[string])(nil)
	_ sink.CommittingWriter[string, Committable] = (*writer[string])(nil)
)

// ErrFenced is wrapped by the reason a commit request is dropped with: its
// producer was fenced, or the broker aborted the transaction.
var ErrFenced = errors.New("connectors/kafka: transaction fenced or aborted")
