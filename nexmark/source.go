package nexmark

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/source"
)

// sourceBatch is the number of events a generator reader makes per batch.
const sourceBatch = 512

// genBlock is the number of consecutive events a generator split makes
// before the next split's turn: split r of p makes blocks r, r+p, r+2p...
// so that parallel readers move through event time together.
const genBlock = 1000

// GeneratorSource returns a source of the events 0 to count-1 of c,
// unbounded when count <= 0. It has one split per reader of the
// parallelism it first runs at, "nexmark r/p"; split r makes the blocks of
// genBlock events numbered r, r+p, r+2p ... in order, so each split is in
// event-time order and the splits advance together. A split's position is
// the number of events it made; a restore at another parallelism hands the
// old splits out again, each reader making its splits' blocks in turn.
// Config.Rate is the rate of event time; the readers run at full speed
// unless ReaderContext.Rate throttles them (stream.Options.SourceRate):
// then each makes at most Rate events per second of its clock, in batches
// of at most a hundredth of a second's events.
func GeneratorSource(c Config, count int64) source.Source[Event] {
	return &genSource{cfg: c.withDefaults(), count: count}
}

type genSource struct {
	cfg   Config
	count int64 // <= 0: unbounded
}

func (s *genSource) Boundedness() source.Boundedness {
	if s.count > 0 {
		return source.Bounded
	}
	return source.Unbounded
}

func (s *genSource) Enumerator(parallelism int, restored *source.EnumeratorState) (source.Enumerator, error) {
	e := &genEnumerator{}
	if restored != nil {
		e.pending = append(e.pending, restored.Pending...)
		return e, nil
	}
	p := max(parallelism, 1)
	for r := range p {
		e.pending = append(e.pending, source.Split{ID: fmt.Sprintf("nexmark %d/%d", r, p), Len: s.splitLen(int64(r), int64(p))})
	}
	return e, nil
}

// splitLen is the number of events split r of p makes, -1 when unbounded.
func (s *genSource) splitLen(r, p int64) int64 {
	if s.count <= 0 {
		return -1
	}
	full, rest := s.count/genBlock, s.count%genBlock
	var n int64
	if full > r {
		n = (full - r + p - 1) / p * genBlock
	}
	if full%p == r {
		n += rest
	}
	return n
}

func (s *genSource) Reader(rc source.ReaderContext) (source.Reader[Event], error) {
	r := &genReader{rc: rc, gen: NewGenerator(s.cfg), buf: make([]Event, sourceBatch)}
	if rc.Rate > 0 {
		r.clock = rc.Clock
		if r.clock == nil {
			r.clock = clock.System{}
		}
		r.every = max(time.Duration(float64(time.Second)/rc.Rate), 1)
		r.burst = max(min(int64(rc.Rate/100), sourceBatch), 1)
	}
	return r, nil
}

// genEnumerator hands the splits out on request.
type genEnumerator struct {
	mu      sync.Mutex
	pending []source.Split
}

func (e *genEnumerator) Request(int) (source.Grant, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) == 0 {
		return source.Grant{Status: source.NoMore}, nil
	}
	s := e.pending[0]
	e.pending = e.pending[1:]
	return source.Grant{Split: s, Status: source.Assigned}, nil
}

func (e *genEnumerator) AddSplitsBack(splits []source.Split) {
	e.mu.Lock()
	e.pending = append(e.pending, splits...)
	e.mu.Unlock()
}

func (e *genEnumerator) Snapshot() source.EnumeratorState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return source.EnumeratorState{Pending: append([]source.Split(nil), e.pending...)}
}

// genSplit is a split a reader holds, with its r and p parsed.
type genSplit struct {
	source.Split
	r, p int64
}

// genReader makes the events of its splits, a batch from each in turn.
type genReader struct {
	rc     source.ReaderContext
	gen    *Generator
	splits []genSplit
	next   int // the split whose turn it is
	noMore bool
	buf    []Event
	// the throttle, when ReaderContext.Rate is set: event k after start is
	// due at start + k*every
	clock clock.Clock
	every time.Duration
	burst int64
	start time.Time
	sent  int64
}

// allowance returns how many events the throttle lets the reader make
// now, waiting until it lets at least one; without a throttle, max.
func (r *genReader) allowance(ctx context.Context, most int64) (int64, error) {
	if r.clock == nil {
		return most, nil
	}
	now := r.clock.Now()
	if r.start.IsZero() {
		r.start = now
	}
	due := r.start.Add(time.Duration(r.sent) * r.every)
	if wait := due.Sub(now); wait > 0 {
		if err := clock.Sleep(ctx, r.clock, wait); err != nil {
			return 0, err
		}
		if r.rc.Idle != nil {
			r.rc.Idle(wait)
		}
		now = r.clock.Now()
	}
	if now.Sub(due) > time.Second { // behind by more than a second: start anew
		r.start, r.sent = now, 0
	}
	n := int64(now.Sub(r.start)/r.every) + 1 - r.sent
	return max(min(n, r.burst, most), 1), nil
}

func (r *genReader) AddSplits(splits []source.Split) {
	for _, s := range splits {
		r.add(s)
	}
}

func (r *genReader) add(s source.Split) {
	var sr, sp int64
	if _, err := fmt.Sscanf(s.ID, "nexmark %d/%d", &sr, &sp); err != nil || sp < 1 || sr < 0 || sr >= sp {
		sr, sp = 0, 1 // not a split of this source: it makes every block
	}
	r.splits = append(r.splits, genSplit{Split: s, r: sr, p: sp})
}

func (r *genReader) Next(ctx context.Context) (source.Batch[Event], error) {
	if err := ctx.Err(); err != nil {
		return source.Batch[Event]{}, err
	}
	for len(r.splits) == 0 {
		if r.noMore || r.rc.Splits == nil {
			return source.Batch[Event]{}, io.EOF
		}
		g, err := r.rc.Splits.Request(r.rc.Subtask)
		if err != nil {
			return source.Batch[Event]{}, err
		}
		switch g.Status {
		case source.Assigned:
			r.add(g.Split)
		case source.NoMore:
			r.noMore = true
		default:
			t := time.NewTimer(g.Retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return source.Batch[Event]{}, ctx.Err()
			case <-t.C:
			}
		}
	}
	i := r.next % len(r.splits)
	s := &r.splits[i]
	if s.Len >= 0 && s.Records >= s.Len {
		id, first := s.ID, s.Records
		r.splits = append(r.splits[:i], r.splits[i+1:]...)
		return source.Batch[Event]{Split: id, First: first, End: true}, nil
	}
	n := int64(len(r.buf))
	if s.Len >= 0 {
		n = min(n, s.Len-s.Records)
	}
	n, err := r.allowance(ctx, n)
	if err != nil {
		return source.Batch[Event]{}, err
	}
	r.sent += n
	for j := range n {
		k := s.Records + j
		r.gen.Event(((k/genBlock)*s.p+s.r)*genBlock+k%genBlock, &r.buf[j])
	}
	first := s.Records
	s.Records += n
	s.Offset = s.Records
	r.next = i + 1
	return source.Batch[Event]{Split: s.ID, First: first, Records: r.buf[:n]}, nil
}

func (r *genReader) Positions() []source.Split {
	out := make([]source.Split, len(r.splits))
	for i, s := range r.splits {
		out[i] = s.Split
	}
	return out
}

func (r *genReader) Close() error { return nil }

// Decode reads the JSON lines of src (a text file's, read with
// source.Text) as events, each reader with its own Decoder. A line that
// does not decode fails the job with a *source.ParseError naming the
// split (the file) and the line, which no restart cures; with skipBad it
// becomes a KindBad event instead. Positions are src's.
func Decode(src source.Source[string], skipBad bool) source.Source[Event] {
	return &decoded{src: src, skip: skipBad}
}

type decoded struct {
	src  source.Source[string]
	skip bool
}

func (d *decoded) Boundedness() source.Boundedness { return d.src.Boundedness() }

func (d *decoded) Enumerator(parallelism int, restored *source.EnumeratorState) (source.Enumerator, error) {
	return d.src.Enumerator(parallelism, restored)
}

func (d *decoded) Reader(rc source.ReaderContext) (source.Reader[Event], error) {
	r, err := d.src.Reader(rc)
	if err != nil {
		return nil, err
	}
	return &decodeReader{Reader: r, skip: d.skip}, nil
}

type decodeReader struct {
	source.Reader[string]
	skip bool
	dec  Decoder
	buf  []Event
}

func (r *decodeReader) Next(ctx context.Context) (source.Batch[Event], error) {
	b, err := r.Reader.Next(ctx)
	if err != nil || b.End {
		return source.Batch[Event]{Split: b.Split, First: b.First, End: b.End}, err
	}
	if cap(r.buf) < len(b.Records) {
		r.buf = make([]Event, len(b.Records))
	}
	out := r.buf[:len(b.Records)]
	for i, line := range b.Records {
		if err := r.dec.Decode(line, &out[i]); err != nil {
			line := b.First + int64(i) + 1
			if !r.skip {
				return source.Batch[Event]{}, &source.ParseError{Split: b.Split, Line: line, Err: err}
			}
			out[i] = Event{Kind: KindBad, Bad: &BadRecord{Split: b.Split, Line: line, Text: b.Records[i], Err: err}}
		}
	}
	return source.Batch[Event]{Split: b.Split, First: b.First, Records: out}, nil
}

// counted counts the records its source's readers hand out, a batch at a
// time.
type counted[T any] struct {
	source.Source[T]
	n *atomic.Int64
}

func (c counted[T]) Reader(rc source.ReaderContext) (source.Reader[T], error) {
	r, err := c.Source.Reader(rc)
	if err != nil {
		return nil, err
	}
	return &countReader[T]{Reader: r, n: c.n}, nil
}

type countReader[T any] struct {
	source.Reader[T]
	n *atomic.Int64
}

func (r *countReader[T]) Next(ctx context.Context) (source.Batch[T], error) {
	b, err := r.Reader.Next(ctx)
	r.n.Add(int64(len(b.Records)))
	return b, err
}
