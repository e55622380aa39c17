package op

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
)

// sortedSide is one input of a keyed two-input operator in BATCH mode: its
// records sorted by key, then timestamp, and the operator's input.
type sortedSide[T any, K comparable] struct {
	Key    func(T) K
	enc    *memory.Key[K]
	codec  *memory.Codec[core.Record[T]]
	sorter *sortjoin.Sorter
	To     core.Output[T]
	kb, vb []byte
	k      K
	batch  []core.Record[T]
	it     sortjoin.Iterator
	cur    []byte // the sort key of the record at the head, nil at the end
	val    []byte
}

func (s *sortedSide[T, K]) Open(st *task.Setup, name string) error {
	enc, err := memory.ValueKey[K]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable key: %w", err)
	}
	codec, err := memory.NewCodec[core.Record[T]]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable record: %w", err)
	}
	s.enc, s.codec = enc, codec
	s.sorter = sortjoin.NewSorter(st.Env(), sortjoin.SortOptions{Name: name})
	s.batch = make([]core.Record[T], 0, st.BatchSize())
	return nil
}

func (s *sortedSide[T, K]) Push(b []core.Record[T]) error {
	for i := range b {
		s.k = s.Key(b[i].Value)
		s.kb = appendSortKey(s.kb[:0], s.enc, &s.k, b[i].Timestamp, &s.vb)
		s.vb = s.codec.Append(s.vb[:0], &b[i])
		if err := s.sorter.Add(s.kb, s.vb); err != nil {
			return err
		}
	}
	return nil
}

// start sorts and moves to the first record.
func (s *sortedSide[T, K]) start(st *task.Setup) error {
	sorter := s.sorter
	it, err := sorter.Finish(st.Context())
	s.sorter = nil
	st.Spilled(sorter.Stats().SpilledBytes)
	if err != nil {
		return err
	}
	s.it = it
	s.advance()
	return nil
}

func (s *sortedSide[T, K]) advance() {
	k, v, ok := s.it.Next()
	if !ok {
		s.cur = nil
		return
	}
	s.cur = append(s.cur[:0], k...)
	s.val = append(s.val[:0], v...)
}

// take decodes the head record into the batch and advances.
func (s *sortedSide[T, K]) take() error {
	var r core.Record[T]
	if _, err := s.codec.Decode(s.val, &r); err != nil {
		return err
	}
	s.batch = append(s.batch, r)
	s.advance()
	if len(s.batch) == cap(s.batch) {
		return s.Flush()
	}
	return nil
}

func (s *sortedSide[T, K]) Flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.To.Push(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

func (s *sortedSide[T, K]) Close() error {
	var err error
	if s.sorter != nil {
		err = s.sorter.Close()
		s.sorter = nil
	}
	if s.it != nil {
		if cerr := s.it.Close(); err == nil {
			err = cerr
		}
		s.it = nil
	}
	return err
}

// appendSortKey appends the sort key of a record: its key's encoding,
// length-prefixed so that one key's records are contiguous, then its
// timestamp in ascending order. scratch is a buffer to encode the key in.
func appendSortKey[K any](dst []byte, enc *memory.Key[K], k *K, ts int64, scratch *[]byte) []byte {
	*scratch = enc.Append((*scratch)[:0], k)
	dst = binary.AppendUvarint(dst, uint64(len(*scratch)))
	dst = append(dst, *scratch...)
	return binary.BigEndian.AppendUint64(dst, uint64(ts)^1<<63)
}

// keyPart is the sort key without its timestamp.
func keyPart(sortKey []byte) []byte { return sortKey[:len(sortKey)-8] }

// SortedInputs2 runs a keyed two-input operator in BATCH mode: both inputs
// sorted by key, then timestamp, merged by key and timestamp (the first
// input first on ties), fed one key at a time.
type SortedInputs2[A, B any, K comparable] struct {
	task.Base
	Inner keyedBatchOp[struct{}]
	A     sortedSide[A, K]
	B     sortedSide[B, K]
	s     *task.Setup
}

// Open opens the sorters and the operator.
func (s *SortedInputs2[A, B, K]) Open(st *task.Setup) error {
	s.s = st
	if err := s.A.Open(st, "stream: sort input 1 by key"); err != nil {
		return err
	}
	if err := s.B.Open(st, "stream: sort input 2 by key"); err != nil {
		return err
	}
	return s.Inner.Open(st)
}

// Inputs returns the two inputs.
func (s *SortedInputs2[A, B, K]) Inputs() []any {
	return []any{core.PushFunc[A](s.A.Push), core.PushFunc[B](s.B.Push)}
}

// EndInput merges the sorted inputs key by key into the operator.
func (s *SortedInputs2[A, B, K]) EndInput() error {
	if err := s.A.start(s.s); err != nil {
		return err
	}
	if err := s.B.start(s.s); err != nil {
		return err
	}
	var key []byte
	have, last := false, 0
	for s.A.cur != nil || s.B.cur != nil {
		side := 1
		if s.B.cur == nil || (s.A.cur != nil && bytes.Compare(s.A.cur, s.B.cur) <= 0) {
			side = 0
		}
		head := s.A.cur
		if side == 1 {
			head = s.B.cur
		}
		if have && !bytes.Equal(keyPart(head), key) {
			if err := s.EndKey(); err != nil {
				return err
			}
		} else if have && side != last {
			if err := s.flushSide(last); err != nil {
				return err
			}
		}
		key = append(key[:0], keyPart(head)...)
		have, last = true, side
		var err error
		if side == 0 {
			err = s.A.take()
		} else {
			err = s.B.take()
		}
		if err != nil {
			return err
		}
	}
	if err := errorsOf(s.A.it.Err(), s.B.it.Err()); err != nil {
		return err
	}
	if have {
		if err := s.EndKey(); err != nil {
			return err
		}
	}
	return s.Inner.EndInput()
}

func (s *SortedInputs2[A, B, K]) flushSide(side int) error {
	if side == 0 {
		return s.A.Flush()
	}
	return s.B.Flush()
}

// EndKey ends one key of both inputs.
func (s *SortedInputs2[A, B, K]) EndKey() error {
	if err := s.A.Flush(); err != nil {
		return err
	}
	if err := s.B.Flush(); err != nil {
		return err
	}
	return s.Inner.EndKey()
}

// Close closes the sorters and the operator.
func (s *SortedInputs2[A, B, K]) Close() error {
	return errorsOf(s.A.Close(), s.B.Close(), s.Inner.Close())
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
