package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/source"
)

// held is a split a reader holds: a partition and its position.
type held struct {
	p       partition
	id      string
	next    int64 // the offset of the next record to read
	records int64 // records read before next
	stop    int64 // the stopping offset (exclusive), -1 for none
	// end is the offset the last fetch said the partition's readable log
	// ends at (its last stable offset under read-committed, else its
	// high watermark), -1 before any fetch
	end int64
}

// pendingRecords is the offsets between each held split's position and
// the end of its partition's readable log, as the last fetches saw them
// (a bounded split's up to its stopping offset): Flink's pendingRecords
// of a Kafka source. Transaction markers count among them.
func (r *reader[T]) pendingRecords() int64 {
	var n int64
	for _, h := range r.order {
		if h.end < 0 {
			continue
		}
		end := h.end
		if h.stop >= 0 {
			end = min(end, h.stop)
		}
		n += max(end-h.next, 0)
	}
	return n
}

func (h *held) position() source.Split {
	return source.Split{ID: h.id, Offset: h.next, Records: h.records, Len: h.stop}
}

// positions are the offsets a checkpoint holds, kept until it completes
// to be committed to the group.
type positions struct {
	id      int64
	offsets kadm.Offsets
}

// reader is the Kafka source's reader (Flink's KafkaSourceReader with its
// KafkaPartitionSplitReader): one client per subtask consumes the
// partitions of the splits it holds, assigned directly (no group
// membership). It asks the enumerator for splits when it starts and then
// every time the enumerator said to ask again, so that partitions
// discovered while it runs reach it. A bounded split ends once its
// position reached its stopping offset; control records (transaction
// markers) move the position too.
type reader[T any] struct {
	src     *Source[T]
	rc      source.ReaderContext
	clock   clock.Clock
	cl      *kgo.Client
	splits  map[partition]*held
	order   []*held // held, in assignment order
	waiting []*held // held, not yet consumed by the client
	ends    []source.Batch[T]
	noMore  bool
	nextAsk time.Time

	parts []kgo.FetchTopicPartition // the last poll's partitions
	pi    int                       // the partition to drain next
	ri    int                       // its next record
	out   []T
	rec   Record
	pace  *source.Throttle
	// left is pendingRecords after the last poll or batch, for the
	// gauge, which is read on other goroutines
	left atomic.Int64

	mu         sync.Mutex
	pending    []positions // checkpoints taken, not complete
	committing atomic.Bool
	commits    sync.WaitGroup
	adm        *kadm.Client
}

func newReader[T any](s *Source[T], rc source.ReaderContext) (*reader[T], error) {
	iso := kgo.ReadCommitted()
	if s.opts.ReadUncommitted {
		iso = kgo.ReadUncommitted()
	}
	opts, err := s.cfg.options(
		kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(),
		// an offset the log no longer holds (retention) resumes at its start
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(time.Second),
	)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	r := &reader[T]{src: s, rc: rc, clock: s.opts.Clock, cl: cl, splits: map[partition]*held{}, adm: kadm.NewClient(cl)}
	if rc.Metrics != nil {
		// read when the task publishes its metrics, on the reader's goroutine
		rc.Metrics.GaugeInt("pendingRecords", r.left.Load)
	}
	if rc.Rate > 0 {
		clk := rc.Clock
		if clk == nil {
			clk = r.clock
		}
		r.pace = source.NewThrottle(rc.Rate, clk)
	}
	return r, nil
}

// AddSplits holds splits to read from their positions.
func (r *reader[T]) AddSplits(splits []source.Split) {
	for _, s := range splits {
		r.add(s)
	}
}

// add holds split s; one already at its stopping offset ends at once.
func (r *reader[T]) add(s source.Split) {
	p, err := parseSplitID(s.ID)
	if err != nil {
		return // not a split of this source's enumerator; it names none
	}
	if _, ok := r.splits[p]; ok {
		return
	}
	if s.Len >= 0 && s.Offset >= s.Len {
		r.ends = append(r.ends, source.Batch[T]{Split: s.ID, First: s.Records, End: true})
		return
	}
	h := &held{p: p, id: s.ID, next: s.Offset, records: s.Records, stop: s.Len, end: -1}
	r.splits[p] = h
	r.order = append(r.order, h)
	r.waiting = append(r.waiting, h)
}

// Positions returns the position of every split held.
func (r *reader[T]) Positions() []source.Split {
	out := make([]source.Split, len(r.order))
	for i, h := range r.order {
		out[i] = h.position()
	}
	return out
}

// Next returns the next batch of one partition, or the end of a bounded
// one.
func (r *reader[T]) Next(ctx context.Context) (source.Batch[T], error) {
	for {
		if err := ctx.Err(); err != nil {
			return source.Batch[T]{}, err
		}
		if len(r.ends) > 0 {
			b := r.ends[0]
			r.ends = r.ends[1:]
			return b, nil
		}
		if b, ok, err := r.drain(); err != nil || ok {
			return b, err
		}
		now := r.clock.Now()
		if !r.noMore && !now.Before(r.nextAsk) {
			if err := r.ask(now); err != nil {
				return source.Batch[T]{}, err
			}
			continue
		}
		r.register()
		if len(r.order) == 0 {
			if r.noMore {
				return source.Batch[T]{}, io.EOF
			}
			if err := r.sleep(ctx, r.nextAsk.Sub(now)); err != nil {
				return source.Batch[T]{}, err
			}
			continue
		}
		limit := r.src.opts.BatchSize
		if r.pace != nil {
			n, wait := r.pace.Allowance()
			if n == 0 {
				if err := r.sleep(ctx, wait); err != nil {
					return source.Batch[T]{}, err
				}
				continue
			}
			limit = min(limit, n)
		}
		if err := r.poll(ctx, limit); err != nil {
			return source.Batch[T]{}, err
		}
	}
}

// ask takes the splits the enumerator has for the reader.
func (r *reader[T]) ask(now time.Time) error {
	for {
		g, err := r.rc.Splits.Request(r.rc.Subtask)
		if err != nil {
			return err
		}
		switch g.Status {
		case source.Assigned:
			r.add(g.Split)
		case source.NoMore:
			r.noMore = true
			return nil
		default:
			r.nextAsk = now.Add(max(g.Retry, time.Millisecond))
			return nil
		}
	}
}

// register hands the waiting splits to the client at their positions.
func (r *reader[T]) register() {
	if len(r.waiting) == 0 {
		return
	}
	add := map[string]map[int32]kgo.Offset{}
	for _, h := range r.waiting {
		if add[h.p.Topic] == nil {
			add[h.p.Topic] = map[int32]kgo.Offset{}
		}
		add[h.p.Topic][h.p.Partition] = kgo.NewOffset().At(h.next)
	}
	clear(r.waiting)
	r.waiting = r.waiting[:0]
	r.cl.AddConsumePartitions(add)
}

// poll waits for records, at most limit, until ctx is done or the next
// request to the enumerator is due.
func (r *reader[T]) poll(ctx context.Context, limit int) error {
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if !r.noMore {
		wait := r.nextAsk.Sub(r.clock.Now())
		if _, ok := r.clock.(clock.System); !ok {
			wait = min(wait, 50*time.Millisecond) // another clock is read again soon
		}
		pctx, cancel = context.WithTimeout(ctx, max(wait, 0))
	}
	defer cancel()
	since := time.Now()
	fs := r.cl.PollRecords(pctx, limit)
	if r.rc.Idle != nil {
		r.rc.Idle(time.Since(since))
	}
	// records taken from the client are kept whatever else happened: a
	// poll ended by ctx may hold some, and they are the next batches
	r.parts = r.parts[:0]
	committed := !r.src.opts.ReadUncommitted
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if h := r.splits[partition{p.Topic, p.Partition}]; h != nil && p.Err == nil {
			end := p.HighWatermark
			if committed && p.LastStableOffset >= 0 {
				end = p.LastStableOffset
			}
			if end >= 0 {
				h.end = end
			}
		}
		if len(p.Records) > 0 {
			r.parts = append(r.parts, p)
		}
	})
	r.pi, r.ri = 0, 0
	r.left.Store(r.pendingRecords())
	var err error
	fs.EachError(func(t string, p int32, e error) {
		if err != nil || (errors.Is(e, context.Canceled) || errors.Is(e, context.DeadlineExceeded)) && pctx.Err() != nil {
			return
		}
		if errors.Is(e, kgo.ErrClientClosed) {
			err = fmt.Errorf("connectors/kafka: reader %d: %w", r.rc.Subtask, e)
			return
		}
		err = fmt.Errorf("connectors/kafka: fetch %s partition %d: %w", t, p, e)
	})
	if err != nil {
		return err
	}
	if len(r.parts) == 0 {
		return ctx.Err()
	}
	return nil
}

// drain returns the next batch of the last poll's records: those of one
// partition, at most the batch size.
func (r *reader[T]) drain() (source.Batch[T], bool, error) {
	batch := r.src.opts.BatchSize
	for r.pi < len(r.parts) {
		fp := &r.parts[r.pi]
		h := r.splits[partition{fp.Topic, fp.Partition}]
		if h == nil || r.ri >= len(fp.Records) {
			r.pi, r.ri = r.pi+1, 0
			continue
		}
		r.out = r.out[:0]
		first := h.records
		ended := false
		for r.ri < len(fp.Records) && len(r.out) < batch && !ended {
			kr := fp.Records[r.ri]
			r.ri++
			if kr.Offset < h.next {
				continue // before the split's position
			}
			if h.stop >= 0 && kr.Offset >= h.stop {
				ended = true
				break
			}
			h.next = kr.Offset + 1
			if !kr.Attrs.IsControl() {
				r.rec = Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value,
					Headers: kr.Headers, Timestamp: kr.Timestamp.UnixMilli()}
				v, err := r.src.des(&r.rec)
				r.rec = Record{}
				if err != nil {
					return source.Batch[T]{}, false, &RecordError{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Err: err}
				}
				r.out = append(r.out, v)
				h.records++
			}
			ended = h.stop >= 0 && h.next >= h.stop
		}
		if ended {
			r.finish(h)
		}
		if r.pace != nil {
			r.pace.Took(len(r.out))
		}
		r.left.Store(r.pendingRecords())
		if len(r.out) > 0 {
			return source.Batch[T]{Split: h.id, First: first, Records: r.out}, true, nil
		}
	}
	return source.Batch[T]{}, false, nil
}

// finish ends bounded split h: the client stops fetching its partition and
// the split's End batch is queued.
func (r *reader[T]) finish(h *held) {
	delete(r.splits, h.p)
	for i, o := range r.order {
		if o == h {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	r.cl.RemoveConsumePartitions(map[string][]int32{h.p.Topic: {h.p.Partition}})
	r.ends = append(r.ends, source.Batch[T]{Split: h.id, First: h.records, End: true})
	if r.pi < len(r.parts) && r.parts[r.pi].Topic == h.p.Topic && r.parts[r.pi].Partition == h.p.Partition {
		r.pi, r.ri = r.pi+1, 0
	}
}

// sleep waits d on the reader's clock, as idle time.
func (r *reader[T]) sleep(ctx context.Context, d time.Duration) error {
	since := time.Now()
	err := clock.Sleep(ctx, r.clock, max(d, 0))
	if r.rc.Idle != nil {
		r.rc.Idle(time.Since(since))
	}
	return err
}

// Checkpointed keeps the positions of checkpoint id, to commit them to the
// group once it completes.
func (r *reader[T]) Checkpointed(id int64, splits []source.Split) {
	if r.src.opts.Group == "" {
		return
	}
	os := make(kadm.Offsets)
	for _, s := range splits {
		p, err := parseSplitID(s.ID)
		if err != nil {
			continue
		}
		os.Add(kadm.Offset{Topic: p.Topic, Partition: p.Partition, At: s.Offset, LeaderEpoch: -1})
	}
	r.mu.Lock()
	r.pending = append(r.pending, positions{id, os})
	r.mu.Unlock()
}

// NotifyCheckpointComplete commits the offsets of checkpoint id to the
// group, in the background (Flink's KafkaSourceReader commits them
// asynchronously): for monitoring only, so a commit that fails is not an
// error, and while one is under way the next checkpoint's waits for its
// own completion.
func (r *reader[T]) NotifyCheckpointComplete(id int64) error {
	r.mu.Lock()
	var os kadm.Offsets
	keep := r.pending[:0]
	for _, p := range r.pending {
		switch {
		case p.id == id:
			os = p.offsets
		case p.id > id:
			keep = append(keep, p)
		}
	}
	clear(r.pending[len(keep):])
	r.pending = keep
	r.mu.Unlock()
	if len(os) == 0 || !r.committing.CompareAndSwap(false, true) {
		return nil
	}
	r.commits.Add(1)
	go func() {
		defer r.commits.Done()
		defer r.committing.Store(false)
		ctx, cancel := r.src.cfg.opContext()
		defer cancel()
		_, _ = r.adm.CommitOffsets(ctx, r.src.opts.Group, os)
	}()
	return nil
}

// Close waits for a commit under way and closes the client.
func (r *reader[T]) Close() error {
	r.commits.Wait()
	if r.cl != nil {
		r.cl.Close()
		r.cl = nil
	}
	return nil
}

var _ source.CheckpointListener = (*reader[string])(nil)
