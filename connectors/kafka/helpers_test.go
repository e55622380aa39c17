package kafka

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/weirdata/weir/connectors/kafka/kafkatest"
	"github.com/weirdata/weir/stream/source"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cluster starts an in-process broker with topics of parts partitions
// each, closed when the test ends.
func cluster(t testing.TB, parts int32, topics ...string) Config {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return Config{Brokers: c.ListenAddrs(), Timeout: 10 * time.Second}
}

// client returns a plain client of cfg, closed when the test ends.
func client(t testing.TB, cfg Config, extra ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts, err := cfg.options(extra...)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes values to partition p of topic, in order, and waits for
// them.
func produce(t testing.TB, cfg Config, topic string, p int32, values ...string) {
	t.Helper()
	cl := client(t, cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	rs := make([]*kgo.Record, len(values))
	for i, v := range values {
		rs[i] = &kgo.Record{Topic: topic, Partition: p, Value: []byte(v), Key: []byte(v)}
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
}

// produceSpread writes n values "<prefix>-<i>" over parts partitions,
// value i to partition i mod parts, and returns them.
func produceSpread(t testing.TB, cfg Config, topic, prefix string, parts int32, n int) []string {
	t.Helper()
	byPart := make([][]string, parts)
	var all []string
	for i := range n {
		v := prefix + "-" + strconv.Itoa(i)
		byPart[int32(i)%parts] = append(byPart[int32(i)%parts], v)
		all = append(all, v)
	}
	for p, vs := range byPart {
		if len(vs) > 0 {
			produce(t, cfg, topic, int32(p), vs...)
		}
	}
	return all
}

// readCommitted reads every committed record of topic, up to the end
// offsets as they are now, as a read_committed consumer sees them.
func readCommitted(t testing.TB, cfg Config, topic string) []string {
	t.Helper()
	return kafkatest.ReadCommitted(t, cfg.Brokers, topic)
}

// sameSet says whether got holds each value of want once, in any order,
// and names the difference.
func sameSet(got, want []string) error {
	n := map[string]int{}
	for _, v := range want {
		n[v]++
	}
	var dup, extra []string
	for _, v := range got {
		switch c := n[v]; {
		case c == 1:
			n[v] = 0
		case c == 0:
			if slices.Contains(want, v) {
				dup = append(dup, v)
			} else {
				extra = append(extra, v)
			}
		}
	}
	var missing []string
	for v, c := range n {
		if c > 0 {
			missing = append(missing, v)
		}
	}
	if len(dup)+len(extra)+len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("%d values, want %d: %d twice %v, %d unexpected %v, %d missing %v",
		len(got), len(want), len(dup), head(dup), len(extra), head(extra), len(missing), head(missing))
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// seen collects values from a running job's function.
type seen struct {
	mu   sync.Mutex
	vals []string
}

func (s *seen) add(v string) {
	s.mu.Lock()
	s.vals = append(s.vals, v)
	s.mu.Unlock()
}

func (s *seen) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.vals)
}

func (s *seen) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals)
}

// netListen is a listener that holds the connections it accepts and never
// answers them.
type netListen struct {
	ln    net.Listener
	addr  string
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func (l *netListen) listen() (*netListen, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l.ln, l.addr, l.done = ln, ln.Addr().String(), make(chan struct{})
	go func() {
		defer close(l.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.conns = append(l.conns, c)
			l.mu.Unlock()
		}
	}()
	return l, nil
}

func (l *netListen) close() {
	l.ln.Close()
	<-l.done
	l.mu.Lock()
	for _, c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
}

// stringSource returns the source of opts on cfg with the values as
// strings.
func stringSource(t testing.TB, cfg Config, opts SourceOptions) *Source[string] {
	t.Helper()
	src, err := NewSource(cfg, opts, Values())
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// enumeratorOf returns src's enumerator at parallelism p, restored from st
// when it is set.
func enumeratorOf[T any](t testing.TB, src *Source[T], p int, st *source.EnumeratorState) source.Enumerator {
	t.Helper()
	enum, err := src.Enumerator(p, st)
	if err != nil {
		t.Fatal(err)
	}
	return enum
}

// readerOf returns the reader of subtask i of p, taking splits from enum;
// it is closed when the test ends, if the test did not close it.
func readerOf[T any](t testing.TB, src *Source[T], i, p int, enum source.Enumerator) source.Reader[T] {
	t.Helper()
	r, err := src.Reader(source.ReaderContext{Subtask: i, Parallelism: p, Splits: enum})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
