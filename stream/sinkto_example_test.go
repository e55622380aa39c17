package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
)

// ledger is an external system with transactions: entries written into a
// transaction are invisible until it commits, and a transaction commits
// once, however often it is asked to.
type ledger struct {
	mu        sync.Mutex
	next      int
	open      map[int][]string
	committed map[int]bool
	entries   []string
}

// ledgerSink writes into a ledger with exactly-once semantics: its
// committable is the id of the transaction a writer prepared.
type ledgerSink struct{ l *ledger }

func (s ledgerSink) CreateWriter(sink.InitContext) (sink.CommittingWriter[string, int], error) {
	return &ledgerWriter{l: s.l, txn: -1}, nil
}

func (s ledgerSink) CreateCommitter(sink.InitContext) (sink.Committer[int], error) {
	return ledgerCommitter{s.l}, nil
}

func (s ledgerSink) CommittableSerializer() sink.Serializer[int] { return txnID{} }

type ledgerWriter struct {
	l   *ledger
	txn int // -1: none open
}

func (w *ledgerWriter) Write(v string, _ sink.Context) error {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if w.txn < 0 {
		w.txn, w.l.next = w.l.next, w.l.next+1
	}
	w.l.open[w.txn] = append(w.l.open[w.txn], v)
	return nil
}

func (w *ledgerWriter) Flush(bool) error { return nil }

// PrepareCommit hands the open transaction over; the next Write opens
// another.
func (w *ledgerWriter) PrepareCommit(int64) ([]int, error) {
	if w.txn < 0 {
		return nil, nil
	}
	txn := w.txn
	w.txn = -1
	return []int{txn}, nil
}

func (w *ledgerWriter) Close() error { return nil }

type ledgerCommitter struct{ l *ledger }

func (c ledgerCommitter) Commit(reqs []sink.CommitRequest[int]) error {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	for _, r := range reqs {
		txn := r.Committable()
		switch recs, ok := c.l.open[txn]; {
		case c.l.committed[txn]:
			r.SignalAlreadyCommitted()
		case !ok:
			r.SignalFailedWithUnknownReason(fmt.Errorf("transaction %d is gone", txn))
		default:
			c.l.entries = append(c.l.entries, recs...)
			c.l.committed[txn] = true
			delete(c.l.open, txn)
		}
	}
	return nil
}

func (c ledgerCommitter) Close() error { return nil }

// txnID encodes a transaction id, with a version byte first.
type txnID struct{}

func (txnID) Marshal(id int) ([]byte, error) { return fmt.Appendf([]byte{1}, "%d", id), nil }
func (txnID) Unmarshal(b []byte) (int, error) {
	var id int
	if len(b) < 2 || b[0] != 1 {
		return 0, errors.New("ledger: unknown committable version")
	}
	_, err := fmt.Sscanf(string(b[1:]), "%d", &id)
	return id, err
}

// A custom two-phase sink (Flink's Sink with a Committer): its writers
// write into transactions of an external ledger and prepare them on every
// checkpoint's barrier and at the end of input; its committer commits them
// once the checkpoint completed, or once every subtask finished.
func ExampleSinkTo() {
	l := &ledger{open: map[int][]string{}, committed: map[int]bool{}}
	env := stream.New(stream.Options{Parallelism: 2})
	words := stream.FromSlice(env, strings.Fields("to be or not to be"))
	stream.SinkTo(stream.Map(words, strings.ToUpper), ledgerSink{l}).Name("ledger")
	if _, err := env.Execute(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	slices.Sort(l.entries)
	fmt.Println(l.entries, len(l.open), "open")
	// Output: [BE BE NOT OR TO TO] 0 open
}
