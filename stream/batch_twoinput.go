package stream

import (
	"bytes"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// sortedSide is one input of a keyed two-input operator in BATCH mode: its
// records sorted by key, then timestamp, and the operator's input.
type sortedSide[T any, K comparable] struct {
	key    func(T) K
	enc    *memory.Key[K]
	codec  *memory.Codec[Record[T]]
	sorter *sortjoin.Sorter
	to     output[T]
	kb, vb []byte
	k      K
	batch  []Record[T]
	it     sortjoin.Iterator
	cur    []byte // the sort key of the record at the head, nil at the end
	val    []byte
}

func (s *sortedSide[T, K]) open(rt *taskRuntime, name string) error {
	enc, err := memory.ValueKey[K]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable key: %w", err)
	}
	codec, err := memory.NewCodec[Record[T]]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable record: %w", err)
	}
	s.enc, s.codec = enc, codec
	s.sorter = sortjoin.NewSorter(rt.env, sortjoin.SortOptions{Name: name})
	s.batch = make([]Record[T], 0, rt.batchSize)
	return nil
}

func (s *sortedSide[T, K]) push(b []Record[T]) error {
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

// start sorts and moves to the first record.
func (s *sortedSide[T, K]) start(rt *taskRuntime) error {
	sorter := s.sorter
	it, err := sorter.Finish(rt.ctx())
	s.sorter = nil
	rt.spilled(sorter.Stats().SpilledBytes)
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
	var r Record[T]
	if _, err := s.codec.Decode(s.val, &r); err != nil {
		return err
	}
	s.batch = append(s.batch, r)
	s.advance()
	if len(s.batch) == cap(s.batch) {
		return s.flush()
	}
	return nil
}

func (s *sortedSide[T, K]) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.to.push(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

func (s *sortedSide[T, K]) close() error {
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
	dst = appendUvarint(dst, uint64(len(*scratch)))
	dst = append(dst, *scratch...)
	return appendUint64(dst, uint64(ts)^1<<63)
}

// keyPart is the sort key without its timestamp.
func keyPart(sortKey []byte) []byte { return sortKey[:len(sortKey)-8] }

// sortedInputs2 runs a keyed two-input operator in BATCH mode: both inputs
// sorted by key, then timestamp, merged by key and timestamp (the first
// input first on ties), fed one key at a time.
type sortedInputs2[A, B any, K comparable] struct {
	base
	inner keyedBatchOp[struct{}]
	a     sortedSide[A, K]
	b     sortedSide[B, K]
	rt    *taskRuntime
}

func (s *sortedInputs2[A, B, K]) open(rt *taskRuntime) error {
	s.rt = rt
	if err := s.a.open(rt, "stream: sort input 1 by key"); err != nil {
		return err
	}
	if err := s.b.open(rt, "stream: sort input 2 by key"); err != nil {
		return err
	}
	return s.inner.open(rt)
}

func (s *sortedInputs2[A, B, K]) endInput() error {
	if err := s.a.start(s.rt); err != nil {
		return err
	}
	if err := s.b.start(s.rt); err != nil {
		return err
	}
	var key []byte
	have, last := false, 0
	for s.a.cur != nil || s.b.cur != nil {
		side := 1
		if s.b.cur == nil || (s.a.cur != nil && bytes.Compare(s.a.cur, s.b.cur) <= 0) {
			side = 0
		}
		head := s.a.cur
		if side == 1 {
			head = s.b.cur
		}
		if have && !bytes.Equal(keyPart(head), key) {
			if err := s.endKey(); err != nil {
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
			err = s.a.take()
		} else {
			err = s.b.take()
		}
		if err != nil {
			return err
		}
	}
	if err := errorsOf(s.a.it.Err(), s.b.it.Err()); err != nil {
		return err
	}
	if have {
		if err := s.endKey(); err != nil {
			return err
		}
	}
	return s.inner.endInput()
}

func (s *sortedInputs2[A, B, K]) flushSide(side int) error {
	if side == 0 {
		return s.a.flush()
	}
	return s.b.flush()
}

func (s *sortedInputs2[A, B, K]) endKey() error {
	if err := s.a.flush(); err != nil {
		return err
	}
	if err := s.b.flush(); err != nil {
		return err
	}
	return s.inner.endKey()
}

func (s *sortedInputs2[A, B, K]) close() error {
	return errorsOf(s.a.close(), s.b.close(), s.inner.close())
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
