// Package kafkatest holds what the tests of the Kafka connector and of
// the jobs that use it share: reading a topic as a read_committed
// consumer sees it. It is imported by tests only.
package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadCommitted returns the values of topic's records, partition by
// partition in offset order, as a read_committed consumer sees them, up to
// the partitions' last stable offsets as they are now. Control records and
// aborted transactions' records are left out. It fails t after 20 s.
func ReadCommitted(t testing.TB, brokers []string, topic string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admCl := client(t, brokers)
	ends, err := kadm.NewClient(admCl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	cl := client(t, brokers, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []string
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("kafkatest: reading %s: %v (left %v)", topic, err, left)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("kafkatest: reading %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := left[r.Partition]; ok && r.Offset < end {
				if !r.Attrs.IsControl() {
					out = append(out, string(r.Value))
				}
				if r.Offset+1 >= end {
					delete(left, r.Partition)
				}
			}
		})
	}
	return out
}

// client returns a client of brokers with opts, closed when the test ends.
func client(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
