package kafka

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Producer writes records into a topic outside a job (a command that
// loads a topic, such as weir gen nexmark): an idempotent producer that
// spreads records without a key over the partitions round robin, so each
// partition holds its records in the order they were produced. Produce
// returns once the record is buffered; the first record that fails fails
// every later call and Close. A Producer is used by one goroutine.
type Producer struct {
	cfg   Config
	cl    *kgo.Client
	topic string

	mu  sync.Mutex
	err error
}

// NewProducer returns a producer into topic on the cluster of cfg, once a
// broker answered within the timeout.
func NewProducer(cfg Config, topic string) (*Producer, error) {
	if topic == "" {
		return nil, fmt.Errorf("%w: a producer without a topic", ErrConfig)
	}
	cl, err := cfg.connect(
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.RecordDeliveryTimeout(max(cfg.timeout(), time.Second)),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if err != nil {
		return nil, err
	}
	return &Producer{cfg: cfg, cl: cl, topic: topic}, nil
}

// Produce writes a record with value (copied) and no key. It waits while
// the client's buffer is full.
func (p *Producer) Produce(ctx context.Context, value []byte) error {
	if err := p.failed(); err != nil {
		return err
	}
	r := &kgo.Record{Value: bytes.Clone(value)}
	p.cl.Produce(ctx, r, p.acked)
	return nil
}

func (p *Producer) acked(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	if p.err == nil {
		p.err = fmt.Errorf("connectors/kafka: produce to %s: %w", p.topic, err)
	}
	p.mu.Unlock()
}

func (p *Producer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close waits until every record is acknowledged, within the timeout, and
// closes the client; it returns the first failure.
func (p *Producer) Close() error {
	if p.cl == nil {
		return p.failed()
	}
	ctx, cancel := p.cfg.opContext()
	defer cancel()
	ferr := p.cl.Flush(ctx)
	p.cl.Close()
	p.cl = nil
	if err := p.failed(); err != nil {
		return err
	}
	if ferr != nil {
		return fmt.Errorf("connectors/kafka: flush to %s: %w", p.topic, ferr)
	}
	return nil
}
