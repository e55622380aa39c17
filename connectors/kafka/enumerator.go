package kafka

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/source"
)

// enumerator is the Kafka source's split enumerator (Flink's
// KafkaSourceEnumerator): it lists the partitions of the topics, makes a
// split per partition with its start offset resolved (and, bounded, its
// stopping offset), and queues each split for its owner reader. It runs no
// goroutine: a reader's request discovers new partitions once the
// discovery interval passed since the last listing, each listing on a
// client of its own that it closes. Partitions found at start begin at the
// source's start offsets, those found later at the earliest offset.
type enumerator struct {
	mu       sync.Mutex
	cfg      Config
	opts     SourceOptions
	n        int
	clock    clock.Clock
	queues   [][]source.Split // per owner reader
	seen     map[string]bool  // split ids discovered
	order    []string
	lastScan time.Time
}

func newEnumerator(cfg Config, opts SourceOptions, n int, restored *source.EnumeratorState) (*enumerator, error) {
	e := &enumerator{cfg: cfg, opts: opts, n: max(n, 1), clock: opts.Clock, seen: map[string]bool{}}
	if e.clock == nil {
		e.clock = clock.System{}
	}
	e.queues = make([][]source.Split, e.n)
	if restored != nil {
		for _, id := range restored.Processed {
			e.seen[id] = true
			e.order = append(e.order, id)
		}
		for _, s := range restored.Pending {
			if err := e.queue(s); err != nil {
				return nil, err
			}
		}
		if !opts.Bounded && opts.DiscoveryInterval > 0 {
			if err := e.scan(false); err != nil {
				return nil, err
			}
		}
		return e, nil
	}
	if err := e.scan(true); err != nil {
		return nil, err
	}
	return e, nil
}

// queue adds split s to its owner's queue.
func (e *enumerator) queue(s source.Split) error {
	p, err := parseSplitID(s.ID)
	if err != nil {
		return err
	}
	i := owner(p, e.n)
	e.queues[i] = append(e.queues[i], s)
	return nil
}

// scan lists the topics' partitions and queues a split for each one not
// seen before; initial says they start at the source's start offsets.
func (e *enumerator) scan(initial bool) error {
	e.lastScan = e.clock.Now()
	cl, err := e.cfg.connect()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := e.cfg.opContext()
	defer cancel()
	tds, err := adm.ListTopics(ctx, e.opts.Topics...)
	if err != nil {
		return fmt.Errorf("connectors/kafka: list partitions of %v: %w", e.opts.Topics, err)
	}
	var fresh []partition
	for _, t := range e.opts.Topics {
		td, ok := tds[t]
		if !ok || td.Err != nil {
			if !ok || td.Err == kerr.UnknownTopicOrPartition {
				return fmt.Errorf("%w: %s", errNoTopic, t)
			}
			return fmt.Errorf("connectors/kafka: topic %s: %w", t, td.Err)
		}
		for _, pd := range td.Partitions.Sorted() {
			p := partition{t, pd.Partition}
			if !e.seen[p.splitID()] {
				fresh = append(fresh, p)
			}
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	start := Earliest() // Flink starts partitions discovered later at the earliest offset
	if initial {
		start = e.opts.Start
	}
	starts, err := resolveOffsets(ctx, adm, start, e.opts.Group, !e.opts.ReadUncommitted, fresh)
	if err != nil {
		return err
	}
	var stops kadm.ListedOffsets
	if e.opts.Bounded {
		if stops, err = listEnd(ctx, adm, !e.opts.ReadUncommitted, topicsOf(fresh)); err != nil {
			return fmt.Errorf("connectors/kafka: list the stopping offsets: %w", err)
		}
	}
	for _, p := range fresh {
		s := source.Split{ID: p.splitID(), Offset: starts[p], Len: -1}
		if e.opts.Bounded {
			l, ok := stops.Lookup(p.Topic, p.Partition)
			if !ok || l.Err != nil {
				return fmt.Errorf("connectors/kafka: stopping offset of %s: %v", s.ID, l.Err)
			}
			s.Len = l.Offset
		}
		e.seen[s.ID] = true
		e.order = append(e.order, s.ID)
		if err := e.queue(s); err != nil {
			return err
		}
	}
	return nil
}

// Request hands subtask the next split it owns; without one, a bounded
// source has no more, and an unbounded one asks to be asked again when the
// next discovery is due.
func (e *enumerator) Request(subtask int) (source.Grant, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if g, ok := e.take(subtask); ok {
		return g, nil
	}
	if e.opts.Bounded {
		return source.Grant{Status: source.NoMore}, nil
	}
	every := e.opts.DiscoveryInterval
	if every <= 0 {
		return source.Grant{Status: source.Later, Retry: time.Hour}, nil
	}
	if wait := e.lastScan.Add(every).Sub(e.clock.Now()); wait > 0 {
		return source.Grant{Status: source.Later, Retry: wait}, nil
	}
	if err := e.scan(false); err != nil {
		return source.Grant{}, err
	}
	if g, ok := e.take(subtask); ok {
		return g, nil
	}
	return source.Grant{Status: source.Later, Retry: every}, nil
}

func (e *enumerator) take(subtask int) (source.Grant, bool) {
	q := &e.queues[subtask%e.n]
	if len(*q) == 0 {
		return source.Grant{}, false
	}
	s := (*q)[0]
	*q = (*q)[1:]
	return source.Grant{Split: s, Status: source.Assigned}, true
}

// AddSplitsBack queues the splits of a failed reader for their owners.
func (e *enumerator) AddSplitsBack(splits []source.Split) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range splits {
		_ = e.queue(s) // ids this enumerator made
	}
}

// Snapshot returns the splits not yet assigned and the ids of every split
// discovered.
func (e *enumerator) Snapshot() source.EnumeratorState {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := source.EnumeratorState{Processed: slices.Clone(e.order)}
	for _, q := range e.queues {
		st.Pending = append(st.Pending, q...)
	}
	return st
}
