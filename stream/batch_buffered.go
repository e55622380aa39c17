package stream

import (
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// bufferedInput holds the non-broadcast input of a BroadcastProcess in
// BATCH mode until the end of input, in arrival order (a sortjoin.Sorter
// keyed by sequence number, spilling under the memory budget), so that the
// broadcast input is processed first, as Flink's BATCH mode does; then it
// feeds the held records to the operator.
type bufferedInput[T any] struct {
	base
	inner  operator
	to     output[T]
	codec  *memory.Codec[Record[T]]
	sorter *sortjoin.Sorter
	rt     *taskRuntime
	seq    uint64
	kb, vb []byte
	batch  []Record[T]
}

func (s *bufferedInput[T]) open(rt *taskRuntime) error {
	s.rt = rt
	codec, err := memory.NewCodec[Record[T]]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable record: %w", err)
	}
	s.codec = codec
	s.sorter = sortjoin.NewSorter(rt.env, sortjoin.SortOptions{Name: "stream: hold the non-broadcast input"})
	s.batch = make([]Record[T], 0, rt.batchSize)
	return s.inner.open(rt)
}

func (s *bufferedInput[T]) push(b []Record[T]) error {
	for i := range b {
		s.kb = appendUint64(s.kb[:0], s.seq)
		s.seq++
		s.vb = s.codec.Append(s.vb[:0], &b[i])
		if err := s.sorter.Add(s.kb, s.vb); err != nil {
			return err
		}
	}
	return nil
}

// endInput feeds the held records to the operator, then ends its input.
func (s *bufferedInput[T]) endInput() error {
	sorter := s.sorter
	it, err := sorter.Finish(s.rt.ctx())
	s.sorter = nil
	s.rt.spilled(sorter.Stats().SpilledBytes)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		_, val, ok := it.Next()
		if !ok {
			break
		}
		var r Record[T]
		if _, err := s.codec.Decode(val, &r); err != nil {
			return err
		}
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
	if err := s.flush(); err != nil {
		return err
	}
	return s.inner.endInput()
}

func (s *bufferedInput[T]) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.to.push(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

func (s *bufferedInput[T]) close() error {
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
