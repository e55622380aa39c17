package op

import (
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
)

// keyedBatchOp is a one-input keyed operator that runs in BATCH mode:
// it is pushed one key's records at a time, in timestamp order, and
// endKey finishes the key (fires its timers at the end of event time,
// emits a rolling aggregation's final value).
type keyedBatchOp[T any] interface {
	task.Operator
	Push(b []core.Record[T]) error
	EndKey() error
}

// sortedInput runs a keyed operator in BATCH mode, as FLIP-134: it sorts
// the operator's whole input by key, then timestamp, through a spilling
// sortjoin.Sorter, and at the end of input feeds it key by key. Watermarks
// before the end of input do not reach the operator.
type sortedInput[T any, K comparable] struct {
	task.Base
	inner    keyedBatchOp[T]
	key      func(T) K
	enc      *memory.Key[K]
	codec    *memory.Codec[core.Record[T]]
	sorter   *sortjoin.Sorter
	s        *task.Setup
	kb, vb   []byte
	k        K
	batch    []core.Record[T]
	finished bool
}

// NewSortedInput returns the BATCH input of inner, sorting by key.
func NewSortedInput[T any, K comparable](inner keyedBatchOp[T], key func(T) K) *sortedInput[T, K] {
	return &sortedInput[T, K]{inner: inner, key: key}
}

// Open opens the sorter and the operator.
func (s *sortedInput[T, K]) Open(st *task.Setup) error {
	s.s = st
	enc, err := memory.ValueKey[K]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable key: %w", err)
	}
	codec, err := memory.NewCodec[core.Record[T]]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable record: %w", err)
	}
	s.enc, s.codec = enc, codec
	s.sorter = sortjoin.NewSorter(st.Env(), sortjoin.SortOptions{Name: "stream: sort by key"})
	s.batch = make([]core.Record[T], 0, st.BatchSize())
	return s.inner.Open(st)
}

// Push adds records to the sort: the key, length-prefixed so that one
// key's records are contiguous, then the timestamp in ascending order.
func (s *sortedInput[T, K]) Push(b []core.Record[T]) error {
	for i := range b {
		s.k = s.key(b[i].Value)
		s.kb = appendSortKey(s.kb[:0], s.enc, &s.k, b[i].Timestamp, &s.vb)
		s.vb = s.codec.Append(s.vb[:0], &b[i])
		if err := s.sorter.Add(s.kb, s.vb); err != nil {
			return err
		}
	}
	return nil
}

// EndInput feeds the sorted records to the operator key by key.
func (s *sortedInput[T, K]) EndInput() error {
	sorter := s.sorter
	it, err := sorter.Finish(s.s.Context())
	s.sorter = nil
	s.s.Spilled(sorter.Stats().SpilledBytes)
	if err != nil {
		return err
	}
	defer it.Close()
	var cur K
	have := false
	for {
		_, val, ok := it.Next()
		if !ok {
			break
		}
		var r core.Record[T]
		if _, err := s.codec.Decode(val, &r); err != nil {
			return err
		}
		k := s.key(r.Value)
		if have && k != cur {
			if err := s.EndKey(); err != nil {
				return err
			}
		}
		cur, have = k, true
		s.batch = append(s.batch, r)
		if len(s.batch) == cap(s.batch) {
			if err := s.Flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if have {
		if err := s.EndKey(); err != nil {
			return err
		}
	}
	return s.inner.EndInput()
}

func (s *sortedInput[T, K]) Flush() error {
	err := s.inner.Push(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

func (s *sortedInput[T, K]) EndKey() error {
	if err := s.Flush(); err != nil {
		return err
	}
	return s.inner.EndKey()
}

func (s *sortedInput[T, K]) Close() error {
	var err error
	if s.sorter != nil {
		err = s.sorter.Close()
		s.sorter = nil
	}
	if cerr := s.inner.Close(); err == nil {
		err = cerr
	}
	return err
}
