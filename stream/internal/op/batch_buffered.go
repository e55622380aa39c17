package op

import (
	"encoding/binary"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
)

// BufferedInput holds the non-broadcast input of a BroadcastProcess in
// BATCH mode until the end of input, in arrival order (a sortjoin.Sorter
// keyed by sequence number, spilling under the memory budget), so that the
// broadcast input is processed first, as Flink's BATCH mode does; then it
// feeds the held records to the operator.
type BufferedInput[T any] struct {
	task.Base
	Inner  task.Operator
	To     core.Output[T]
	codec  *memory.Codec[core.Record[T]]
	sorter *sortjoin.Sorter
	s      *task.Setup
	seq    uint64
	kb, vb []byte
	batch  []core.Record[T]
}

// Open opens the sorter and the operator.
func (s *BufferedInput[T]) Open(st *task.Setup) error {
	s.s = st
	codec, err := memory.NewCodec[core.Record[T]]()
	if err != nil {
		return fmt.Errorf("BATCH mode needs an encodable record: %w", err)
	}
	s.codec = codec
	s.sorter = sortjoin.NewSorter(st.Env(), sortjoin.SortOptions{Name: "stream: hold the non-broadcast input"})
	s.batch = make([]core.Record[T], 0, st.BatchSize())
	return s.Inner.Open(st)
}

// Push holds b.
func (s *BufferedInput[T]) Push(b []core.Record[T]) error {
	for i := range b {
		s.kb = binary.BigEndian.AppendUint64(s.kb[:0], s.seq)
		s.seq++
		s.vb = s.codec.Append(s.vb[:0], &b[i])
		if err := s.sorter.Add(s.kb, s.vb); err != nil {
			return err
		}
	}
	return nil
}

// EndInput feeds the held records to the operator, then ends its input.
func (s *BufferedInput[T]) EndInput() error {
	sorter := s.sorter
	it, err := sorter.Finish(s.s.Context())
	s.sorter = nil
	s.s.Spilled(sorter.Stats().SpilledBytes)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		_, val, ok := it.Next()
		if !ok {
			break
		}
		var r core.Record[T]
		if _, err := s.codec.Decode(val, &r); err != nil {
			return err
		}
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
	if err := s.Flush(); err != nil {
		return err
	}
	return s.Inner.EndInput()
}

func (s *BufferedInput[T]) Flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.To.Push(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

// Close closes the sorter and the operator.
func (s *BufferedInput[T]) Close() error {
	var err error
	if s.sorter != nil {
		err = s.sorter.Close()
		s.sorter = nil
	}
	if cerr := s.Inner.Close(); err == nil {
		err = cerr
	}
	return err
}
