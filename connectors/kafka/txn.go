package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirdata/weir/stream/sink"
)

// retriable says whether a transaction coordinator's answer asks to try
// again: it is loading, moving, or finishing the transaction's last step.
func retriable(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) || kerr.IsRetriable(err)
}

// backoff waits before the next try, false when ctx ends first.
func backoff(ctx context.Context, try int) bool {
	t := time.NewTimer(min(time.Duration(try+1)*20*time.Millisecond, time.Second))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// initTransaction initializes transactional id (InitProducerId), as a
// producer with that id does when it starts: the broker aborts a
// transaction the id left open and bumps its epoch, which fences every
// older producer of the id. It returns the new epoch; 0 means the id was
// never used.
func initTransaction(ctx context.Context, cl *kgo.Client, id string, timeout time.Duration) (int16, error) {
	for try := 0; ; try++ {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(timeout.Milliseconds())
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			return resp.ProducerEpoch, nil
		}
		if !retriable(err) || !backoff(ctx, try) {
			return 0, fmt.Errorf("connectors/kafka: abort transaction %s: %w", id, err)
		}
	}
}

// abortLingering aborts the transactions earlier attempts of the job left
// open for subtask's share of the transactional ids (Flink's
// TransactionAbortStrategyImpl.PROBING): a subtask's transactions are
// numbered without gaps from the counter a restored checkpoint holds (1
// without one), so initializing each id from there aborts what it left
// open, until an id comes back never used (epoch 0). The subtask probes
// its own ids and those of every old subtask j with j mod parallelism =
// subtask that the restored states name, or that follow them in steps of
// parallelism while their probing finds ids used (a job that ran at a
// higher parallelism since the checkpoint). Ids below a counter belong to
// committables of the checkpoint: the committer commits them.
func abortLingering(cfg Config, opts SinkOptions, subtask, parallelism int, starts map[int]int64) error {
	cl, err := cfg.connect()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := cfg.opContext()
	defer cancel()
	probe := func(j int) (int, error) {
		start := max(starts[j], 1)
		used := 0
		for n := start; ; n++ {
			epoch, err := initTransaction(ctx, cl, transactionalID(opts.TransactionalIDPrefix, j, n), opts.TransactionTimeout)
			if err != nil {
				return used, err
			}
			if epoch == 0 {
				return used, nil
			}
			used++
		}
	}
	known := []int{subtask}
	for j := range starts {
		if j != subtask && j%parallelism == subtask && j >= parallelism {
			known = append(known, j)
		}
	}
	sort.Ints(known)
	last := subtask
	for _, j := range known {
		if _, err := probe(j); err != nil {
			return err
		}
		last = max(last, j)
	}
	for j := last + parallelism; ; j += parallelism {
		used, err := probe(j)
		if err != nil {
			return err
		}
		if used == 0 {
			return nil
		}
	}
}

// committer commits prepared transactions (Flink's KafkaCommitter): an
// EndTxn with the committable's producer id and epoch, as the producer
// that wrote the transaction would send it. A transaction committed
// before commits again as a success (the broker recognises the retry);
// one whose producer was fenced since, or that the broker aborted (its
// timeout passed), cannot be committed: as Flink, the request is dropped
// with that reason and the job goes on, its records lost.
type committer struct {
	cfg Config
	cl  *kgo.Client
}

func (c *committer) Commit(reqs []sink.CommitRequest[Committable]) error {
	if len(reqs) == 0 {
		return nil
	}
	if c.cl == nil {
		cl, err := c.cfg.connect()
		if err != nil {
			return err
		}
		c.cl = cl
	}
	for _, r := range reqs {
		cm := r.Committable()
		err := c.commit(cm)
		switch {
		case err == nil:
		case retriable(err):
			r.RetryLater()
		case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch),
			errors.Is(err, kerr.InvalidTxnState), errors.Is(err, kerr.InvalidProducerIDMapping):
			r.SignalFailedWithKnownReason(fmt.Errorf("%w: %s (producer %d, epoch %d): %w", ErrFenced, cm.TransactionalID, cm.ProducerID, cm.Epoch, err))
		default:
			r.SignalFailedWithUnknownReason(fmt.Errorf("connectors/kafka: commit transaction %s: %w", cm.TransactionalID, err))
		}
	}
	return nil
}

// commit ends transaction cm with a commit, retrying what the coordinator
// asks to retry within the timeout.
func (c *committer) commit(cm Committable) error {
	ctx, cancel := c.cfg.opContext()
	defer cancel()
	for try := 0; ; try++ {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID = cm.TransactionalID
		req.ProducerID = cm.ProducerID
		req.ProducerEpoch = cm.Epoch
		req.Commit = true
		resp, err := req.RequestWith(ctx, c.cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil || !retriable(err) || !backoff(ctx, try) {
			return err
		}
	}
}

func (c *committer) Close() error {
	if c.cl != nil {
		c.cl.Close()
		c.cl = nil
	}
	return nil
}
