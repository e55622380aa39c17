package chaos

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/connectors/kafka/kafkatest"
	"github.com/weirdata/weir/nexmark"
	"github.com/weirdata/weir/nexmark/nexmarktest"
)

// TestKillRestartNexmarkKafka is the Kafka end to end run: a generated
// event file, out of order by up to 2 s, is produced into a 4-partition
// topic of an in-process broker that lives in the test process (so it
// outlives the weir processes); weir nexmark --query q7 and q5 read it
// with --bounded at parallelism 2, checkpoint every 300 ms into a
// directory and write their rows with the exactly-once sink. Each is
// killed with SIGKILL at random moments (kills times, each once it ran
// 400-1200 ms) and restarted with the same command until it finishes: a
// read_committed consumer of the sink topic sees exactly the rows of the
// oracle (nexmarktest), none lost, none twice. Run again, the finished
// job writes nothing.
func TestKillRestartNexmarkKafka(t *testing.T) {
	bin := weir(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "events", "rows-q7", "rows-q5"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")

	n := int64(3000*kills + 6000)
	wo := nexmark.WriteOptions{Config: nexmark.Config{Seed: 11, Rate: 100}, Events: n, Disorder: 2000}
	var file bytes.Buffer
	if err := nexmark.WriteJSON(context.Background(), &file, wo); err != nil {
		t.Fatal(err)
	}
	produceFile(t, brokers, "events", file.Bytes())
	g := nexmark.NewGenerator(wo.Config)
	events := make([]nexmark.Event, n)
	for i := range n {
		g.Event(i, &events[i])
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d events", seed, n)
	r := rand.New(rand.NewPCG(seed, 9))
	for _, q := range []string{"q7", "q5"} {
		t.Run(q, func(t *testing.T) {
			topic := "rows-" + q
			args := []string{"nexmark", "--query", q, "--kafka-brokers", brokers, "--kafka-timeout", "10s",
				"--source-topic", "events", "--bounded", "--sink-topic", topic, "--delivery", "exactly-once",
				"--checkpoint-dir", filepath.Join(t.TempDir(), "chk"), "--checkpoint-interval", "300ms",
				"--parallelism", "2", "--rate", "4000", "--progress=false"}
			killed := 0
			for killed < kills {
				if runKilled(t, bin, args, time.Duration(400+r.IntN(801))*time.Millisecond) {
					break // finished before its kill
				}
				killed++
			}
			if killed < min(kills, 3) {
				t.Fatalf("the job finished after %d kills: make its input longer", killed)
			}
			runToEnd(t, bin, args)
			wantHeader, want := nexmarktest.Oracle(q, events)
			rows := readTopic(t, brokers, topic)
			header, got := nexmarktest.ReadCSV(t, strings.Join(wantHeader, ",")+"\n"+strings.Join(rows, "\n"))
			lost, extra := nexmarktest.Compare(want, got)
			t.Logf("%d kills: %d rows, %d lost, %d extra of %d", killed, len(got), len(lost), len(extra), len(want))
			nexmarktest.CheckRows(t, q+" after kills", wantHeader, header, want, got)
			runToEnd(t, bin, args)
			if again := readTopic(t, brokers, topic); len(again) != len(rows) {
				t.Fatalf("the finished job run again wrote %d rows more", len(again)-len(rows))
			}
		})
	}
}

// produceFile writes each line of file as a record of topic, spread
// round robin over its partitions (each partition holds its lines in
// file order), and waits for them.
func produceFile(t *testing.T, brokers, topic string, file []byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, l := range bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n")) {
		rs = append(rs, &kgo.Record{Value: l})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readTopic returns the values of topic's records as a read_committed
// consumer sees them, up to the partitions' last stable offsets now.
func readTopic(t *testing.T, brokers, topic string) []string {
	t.Helper()
	return kafkatest.ReadCommitted(t, strings.Split(brokers, ","), topic)
}
