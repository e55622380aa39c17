package kafka

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestProducer: every value lands once, spread over the partitions, and
// each partition holds its values in the order they were produced.
func TestProducer(t *testing.T) {
	cfg := cluster(t, 4, "loaded")
	p, err := NewProducer(cfg, "loaded")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 2000 {
		v := strconv.Itoa(i)
		want = append(want, v)
		if err := p.Produce(context.Background(), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sameSet(readCommitted(t, cfg, "loaded"), want); err != nil {
		t.Fatal(err)
	}
	cl := client(t, cfg, kgo.ConsumeTopics("loaded"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	last := map[int32]int{}
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for n < len(want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d", n, len(want))
		}
		fs.EachRecord(func(r *kgo.Record) {
			v, _ := strconv.Atoi(string(r.Value))
			if prev, ok := last[r.Partition]; ok && v <= prev {
				t.Errorf("partition %d: %d after %d", r.Partition, v, prev)
			}
			last[r.Partition] = v
			n++
		})
	}
	if len(last) != 4 {
		t.Errorf("values in %d partitions, want 4", len(last))
	}
}

// TestProducerUnreachable: a producer of a cluster that does not answer
// is an error wrapping ErrUnreachable within the timeout.
func TestProducerUnreachable(t *testing.T) {
	start := time.Now()
	_, err := NewProducer(Config{Brokers: []string{blackhole(t)}, Timeout: 300 * time.Millisecond}, "t")
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
