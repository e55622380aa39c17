package cli

import (
	"fmt"
	"sync"

	"github.com/weirdata/weir/connectors/kafka"
	"github.com/weirdata/weir/nexmark"
	"github.com/weirdata/weir/stream"
)

// nexmarkKafka are weir nexmark's Kafka flags: a topic of events as the
// input and a topic for the rows as the output.
type nexmarkKafka struct {
	conn        kafkaFlags
	sourceTopic string
	group       string
	start       string
	bounded     bool
	sinkTopic   string
	delivery    string
	txnPrefix   string
}

// source returns the Kafka source of the events: each record's value one
// event's JSON. A value that does not decode fails the job naming the
// topic, partition and offset (a kafka.RecordError), or with skip becomes
// a KindBad event naming them, for the dead-letter output.
func (k *nexmarkKafka) source(cfg kafka.Config, skip bool) (*kafka.Source[nexmark.Event], error) {
	start, err := kafka.ParseOffsets(k.start)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("--start: %w", err)}
	}
	opts := kafka.SourceOptions{Topics: []string{k.sourceTopic}, Group: k.group, Start: start, Bounded: k.bounded}
	src, err := kafka.NewSource(cfg, opts, eventDeserializer(skip))
	if err != nil {
		return nil, &usageError{err: err}
	}
	return src, nil
}

// eventDeserializer decodes a record's value as an event. The readers of
// the source call it at once, so each call takes a Decoder from a pool;
// the value is copied into a string the event's strings point into.
func eventDeserializer(skip bool) kafka.Deserializer[nexmark.Event] {
	decoders := sync.Pool{New: func() any { return new(nexmark.Decoder) }}
	return func(r *kafka.Record) (nexmark.Event, error) {
		var e nexmark.Event
		line := string(r.Value)
		d := decoders.Get().(*nexmark.Decoder)
		err := d.Decode(line, &e)
		decoders.Put(d)
		if err == nil || !skip {
			return e, err
		}
		where := fmt.Sprintf("topic %s partition %d offset %d", r.Topic, r.Partition, r.Offset)
		return nexmark.Event{Kind: nexmark.KindBad, Bad: &nexmark.BadRecord{Split: where, Text: line, Err: err}}, nil
	}
}

// sink returns the RowSink that writes each row as a record of the sink
// topic, its CSV line as the value.
func (k *nexmarkKafka) sink(cfg kafka.Config, query string) (func(stream.DataStream[[]byte]), error) {
	d, err := kafka.ParseDelivery(k.delivery)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("--delivery: %w", err)}
	}
	prefix := k.txnPrefix
	if prefix == "" {
		prefix = "weir-nexmark-" + query + "-" + k.sinkTopic
	}
	snk, err := kafka.NewSink(cfg, kafka.SinkOptions{Topic: k.sinkTopic, Delivery: d, TransactionalIDPrefix: prefix}, rowBytes)
	if err != nil {
		return nil, &usageError{err: err}
	}
	return func(rows stream.DataStream[[]byte]) {
		stream.SinkTo(rows, snk).Name("KafkaSink").UID("nexmark-kafka-sink")
	}, nil
}

// rowBytes writes a row's CSV line as the record's value.
func rowBytes(v []byte, r *kafka.Record) error {
	r.Value = append(r.Value, v...)
	return nil
}
