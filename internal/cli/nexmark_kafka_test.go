package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/connectors/kafka/kafkatest"
	"github.com/weirdata/weir/nexmark"
	"github.com/weirdata/weir/nexmark/nexmarktest"
)

// kafkaCluster starts an in-process broker with topics of parts
// partitions each and returns its address, closed when the test ends.
func kafkaCluster(t *testing.T, parts int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// kafkaClient returns a client of brokers, closed when the test ends.
func kafkaClient(t *testing.T, brokers string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// readTopic returns the values of topic's records as a read_committed
// consumer sees them, up to the partitions' last stable offsets now.
func readTopic(t *testing.T, brokers, topic string) []string {
	t.Helper()
	return kafkatest.ReadCommitted(t, strings.Split(brokers, ","), topic)
}

// TestNexmarkKafka loads a topic of 4 partitions with weir gen nexmark,
// out of order by up to 2 s, and runs q7 over it, bounded, into a sink
// topic exactly once with checkpoints, and q5 to stdout: both equal the
// oracle's rows.
func TestNexmarkKafka(t *testing.T) {
	brokers := kafkaCluster(t, 4, "events", "rows")
	path, events := genNexmark(t, 20000, 500, 2000, 3)
	code, _, stderr := runWeir(context.Background(), "gen", "nexmark", "--events", "20000", "--rate", "500", "--seed", "3", "--disorder", "2000",
		"--kafka-brokers", brokers, "--topic", "events")
	if code != 0 {
		t.Fatalf("gen nexmark: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if got := readTopic(t, brokers, "events"); !sameLines(got, lines) {
		t.Fatalf("the topic holds %d records, not the file's %d lines", len(got), len(lines))
	}

	code, _, stderr = runWeir(context.Background(), "nexmark", "--query", "q7", "--kafka-brokers", brokers, "--source-topic", "events",
		"--bounded", "--sink-topic", "rows", "--delivery", "exactly-once", "--checkpoint-interval", "50ms",
		"--parallelism", "2", "--memory", "256MiB", "--progress=false")
	if code != 0 {
		t.Fatalf("q7: exit %d: %s", code, stderr)
	}
	if got := lastLine(t, "q7", stderr); got != 20000 {
		t.Errorf("q7: %d events, want 20000", got)
	}
	wantHeader, want := nexmarktest.Oracle("q7", events)
	header, rows := nexmarktest.ReadCSV(t, strings.Join(wantHeader, ",")+"\n"+strings.Join(readTopic(t, brokers, "rows"), "\n"))
	nexmarktest.CheckRows(t, "q7 kafka", wantHeader, header, want, rows)

	code, stdout, stderr := runWeir(context.Background(), "nexmark", "--query", "q5", "--kafka-brokers", brokers, "--source-topic", "events",
		"--bounded", "--group", "g5", "--parallelism", "2", "--memory", "256MiB", "--progress=false")
	if code != 0 {
		t.Fatalf("q5: exit %d: %s", code, stderr)
	}
	wantHeader, want = nexmarktest.Oracle("q5", events)
	header, rows = nexmarktest.ReadCSV(t, stdout)
	nexmarktest.CheckRows(t, "q5 kafka", wantHeader, header, want, rows)
}

// sameLines says whether a and b hold the same lines, in any order.
func sameLines(a, b []string) bool {
	n := map[string]int{}
	for _, l := range a {
		n[l]++
	}
	for _, l := range b {
		n[l]--
	}
	for _, c := range n {
		if c != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// TestNexmarkKafkaBadRecord: a record that is not an event fails the job
// naming its topic, partition and offset; --on-bad-record skip counts it
// and goes on.
func TestNexmarkKafkaBadRecord(t *testing.T) {
	brokers := kafkaCluster(t, 1, "events")
	path, events := genNexmark(t, 300, 500, 0, 2)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []*kgo.Record
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if i == 5 {
			rs = append(rs, &kgo.Record{Topic: "events", Value: []byte(`{"event_type":2,"bid":{"auction":12,`)})
		}
		rs = append(rs, &kgo.Record{Topic: "events", Value: []byte(l)})
	}
	if err := kafkaClient(t, brokers).ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWeir(context.Background(), "nexmark", "--query", "q2", "--kafka-brokers", brokers, "--source-topic", "events",
		"--bounded", "--progress=false")
	if code != 1 || !strings.Contains(stderr, "topic events partition 0 offset 5: nexmark: byte ") {
		t.Fatalf("exit %d: %s; want status 1 naming topic events partition 0 offset 5", code, stderr)
	}
	code, stdout, stderr := runWeir(context.Background(), "nexmark", "--query", "q0", "--kafka-brokers", brokers, "--source-topic", "events",
		"--bounded", "--on-bad-record", "skip", "--parallelism", "2", "--progress=false")
	if code != 0 || !strings.Contains(stderr, ", skipped 1 (the first: topic events partition 0 offset 5: nexmark: byte ") {
		t.Fatalf("exit %d: %s; want the skipped record counted and named", code, stderr)
	}
	if got := lastLine(t, "q0", stderr); got != 301 {
		t.Errorf("%d events, want 301", got)
	}
	wantHeader, want := nexmarktest.Oracle("q0", events)
	header, rows := nexmarktest.ReadCSV(t, stdout)
	nexmarktest.CheckRows(t, "q0 skipping", wantHeader, header, want, rows)
}

// TestNexmarkKafkaUnreachable: brokers that accept connections but never
// answer fail the job within --kafka-timeout, naming the brokers; so do
// weir gen nexmark's.
func TestNexmarkKafkaUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	defer func() {
		ln.Close()
		for c := range conns {
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	for _, args := range [][]string{
		{"nexmark", "--query", "q0", "--kafka-brokers", addr, "--source-topic", "events", "--bounded", "--kafka-timeout", "500ms", "--progress=false"},
		{"nexmark", "--query", "q0", "--events", "100", "--kafka-brokers", addr, "--sink-topic", "rows", "--kafka-timeout", "500ms", "--progress=false"},
		{"gen", "nexmark", "--events", "100", "--kafka-brokers", addr, "--topic", "events", "--kafka-timeout", "500ms"},
	} {
		start := time.Now()
		code, _, stderr := runWeir(context.Background(), args...)
		took := time.Since(start)
		if code != 1 || !strings.Contains(stderr, "brokers unreachable: "+addr+" within 500ms") {
			t.Errorf("%q: exit %d: %s; want the brokers unreachable", args, code, stderr)
		}
		if took > 10*time.Second {
			t.Errorf("%q: failed after %v, want about 500ms", args, took)
		}
	}
}

// TestNexmarkKafkaUsage: Kafka flags that cannot work are usage errors.
func TestNexmarkKafkaUsage(t *testing.T) {
	for _, args := range [][]string{
		{"nexmark", "--query", "q1", "--source-topic", "t"},
		{"nexmark", "--query", "q1", "--source-topic", "t", "--events", "10", "--kafka-brokers", "b:9092"},
		{"nexmark", "--query", "q1", "--source-topic", "t", "--kafka-brokers", "b:9092", "--start", "middle"},
		{"nexmark", "--query", "q1", "--events", "10", "--sink-topic", "t", "--kafka-brokers", "b:9092", "--delivery", "twice"},
		{"nexmark", "--query", "q1", "--events", "10", "--sink-topic", "t", "--discard", "--kafka-brokers", "b:9092"},
		{"nexmark", "--query", "q1", "--events", "10", "--sink-topic", "t", "--kafka-brokers", "b:9092", "--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-user", "u"},
		{"nexmark", "--query", "q1", "--events", "10", "--sink-topic", "t", "--kafka-brokers", "b:9092", "--kafka-tls-cert", "c.pem"},
		{"gen", "nexmark", "--events", "10", "--kafka-brokers", "b:9092"},
		{"gen", "nexmark", "--events", "10", "--kafka-brokers", "b:9092", "--topic", "t", "--out", "x"},
	} {
		code, _, stderr := runWeir(context.Background(), args...)
		if code != 1 || !strings.Contains(stderr, "--help") {
			t.Errorf("%q: exit %d: %s; want a usage error", args, code, stderr)
		}
	}
}

// foldChangelog folds changelog rows (op first) into the table they end
// as: a multiset of rows, +I and +U adding one, -U and -D taking one away
// (an error when the row is not there).
func foldChangelog(rows [][]string) ([][]string, error) {
	count := map[string]int{}
	row := map[string][]string{}
	for _, r := range rows {
		k := strings.Join(r[1:], "\x00")
		row[k] = r[1:]
		switch r[0] {
		case "+I", "+U":
			count[k]++
		case "-U", "-D":
			if count[k] == 0 {
				return nil, fmt.Errorf("%s of a row not in the table: %q", r[0], r)
			}
			count[k]--
		default:
			return nil, fmt.Errorf("op %q, want +I, -U, +U or -D", r[0])
		}
	}
	var out [][]string
	for k, c := range count {
		for range c {
			out = append(out, row[k])
		}
	}
	return out, nil
}

// TestNexmarkKafkaChangelog runs q3, q4 and q9 over a topic without
// --bounded, so they write changelogs (op first) into a sink topic. The
// events, out of order by up to 1 s, end with a person in every partition
// an hour later (in WY, so in no query's result) that moves the watermark
// past every auction's expiry: the changelog read so far, folded, must
// become the oracle's final table, and every retraction must find its
// row. Then the job is cancelled.
func TestNexmarkKafkaChangelog(t *testing.T) {
	const parts = 4
	brokers := kafkaCluster(t, parts, "events", "rows-q3", "rows-q4", "rows-q9")
	n := int64(10000)
	path, events := genNexmark(t, n, 500, 1000, 12)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := events[n-1].Time()
	var rs []*kgo.Record
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		rs = append(rs, &kgo.Record{Topic: "events", Partition: int32(i % parts), Value: []byte(l)})
	}
	for p := range int32(parts) {
		e := nexmark.Event{Kind: nexmark.KindPerson, Person: nexmark.Person{ID: 900000 + int64(p), Name: "Late Sentinel", EmailAddress: "s@x.com",
			CreditCard: "0000 0000 0000 0000", City: "Cody", State: "WY", DateTime: last + 3_600_000, Extra: "x"}}
		events = append(events, e)
		rs = append(rs, &kgo.Record{Topic: "events", Partition: p, Value: nexmark.AppendJSON(nil, &e)})
	}
	cl := kafkaClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q3", "q4", "q9"} {
		t.Run(q, func(t *testing.T) {
			wantHeader, want := nexmarktest.Oracle(q, events)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan string, 1)
			go func() {
				_, _, stderr := runWeir(ctx, "nexmark", "--query", q, "--kafka-brokers", brokers, "--source-topic", "events",
					"--sink-topic", "rows-"+q, "--delivery", "exactly-once", "--checkpoint-interval", "100ms",
					"--parallelism", "2", "--memory", "256MiB", "--progress=false")
				done <- stderr
			}()
			var (
				rows     [][]string
				lost     [][]string
				extra    [][]string
				deadline = time.Now().Add(60 * time.Second)
			)
			for {
				select {
				case stderr := <-done:
					t.Fatalf("the unbounded job ended: %s", stderr)
				case <-time.After(200 * time.Millisecond):
				}
				_, rows = nexmarktest.ReadCSV(t, "op,"+strings.Join(wantHeader, ",")+"\n"+strings.Join(readTopic(t, brokers, "rows-"+q), "\n"))
				table, err := foldChangelog(rows)
				if err != nil {
					t.Fatal(err)
				}
				if lost, extra = nexmarktest.Compare(want, table); len(lost)+len(extra) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 60 s the changelog (%d rows) folds to a table with %d rows lost and %d extra of %d", len(rows), len(lost), len(extra), len(want))
				}
			}
			updates := 0
			for _, r := range rows {
				if r[0] != "+I" {
					updates++
				}
			}
			t.Logf("%d changelog rows, %d of them updates, fold to the %d rows of the oracle", len(rows), updates, len(want))
			if q == "q4" && updates == 0 {
				t.Error("q4: no update in the changelog")
			}
			cancel()
			<-done
		})
	}
}
