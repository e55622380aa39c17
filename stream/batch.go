package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// keyedBatchOp is a one-input keyed operator that runs in BATCH mode:
// it is pushed one key's records at a time, in timestamp order, and
// endKey finishes the key (fires its timers at the end of event time,
// emits a rolling aggregation's final value).
type keyedBatchOp[T any] interface {
	operator
	push(b []Record[T]) error
	endKey() error
}

// sortedInput runs a keyed operator in BATCH mode, as FLIP-134: it sorts
// the operator's whole input by key, then timestamp, through a spilling
// sortjoin.Sorter, and at the end of input feeds it key by key. Watermarks
// before the end of input do not reach the operator.
type sortedInput[T any, K comparable] struct {
	base
	inner    keyedBatchOp[T]
	key      func(T) K
	enc      *memory.Key[K]
	codec    *memory.Codec[Record[T]]
	sorter   *sortjoin.Sorter
	rt       *taskRuntime
	kb, vb   []byte
	k        K
	batch    []Record[T]
	finished bool
}

func newSortedInput[T any, K comparable](inner keyedBatchOp[T], key func(T) K) *sortedInput[T, K] {
	return &sortedInput[T, K]{inner: inner, key: key}
}

func (s *sortedInput[T, K]) open(rt *taskRuntime) error {
	s.rt = rt
	enc, err := memory.ValueKey[K]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable key: %w", err)
	}
	codec, err := memory.NewCodec[Record[T]]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable record: %w", err)
	}
	s.enc, s.codec = enc, codec
	s.sorter = sortjoin.NewSorter(rt.env, sortjoin.SortOptions{Name: "stream: sort by key"})
	s.batch = make([]Record[T], 0, rt.batchSize)
	return s.inner.open(rt)
}

// push adds records to the sort: the key, length-prefixed so that one
// key's records are contiguous, then the timestamp in ascending order.
func (s *sortedInput[T, K]) push(b []Record[T]) error {
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

// endInput feeds the sorted records to the operator key by key.
func (s *sortedInput[T, K]) endInput() error {
	sorter := s.sorter
	it, err := sorter.Finish(s.rt.ctx())
	s.sorter = nil
	s.rt.spilled(sorter.Stats().SpilledBytes)
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
		var r Record[T]
		if _, err := s.codec.Decode(val, &r); err != nil {
			return err
		}
		k := s.key(r.Value)
		if have && k != cur {
			if err := s.endKey(); err != nil {
				return err
			}
		}
		cur, have = k, true
		s.batch = append(s.batch, r)
		if len(s.batch) == cap(s.batch) {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if have {
		if err := s.endKey(); err != nil {
			return err
		}
	}
	return s.inner.endInput()
}

func (s *sortedInput[T, K]) flush() error {
	err := s.inner.push(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

func (s *sortedInput[T, K]) endKey() error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.inner.endKey()
}

func (s *sortedInput[T, K]) close() error {
	var err error
	if s.sorter != nil {
		err = s.sorter.Close()
		s.sorter = nil
	}
	if cerr := s.inner.close(); err == nil {
		err = cerr
	}
	return err
}

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }
func appendUint64(dst []byte, v uint64) []byte  { return binary.BigEndian.AppendUint64(dst, v) }
