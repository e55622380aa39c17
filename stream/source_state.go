package stream

import (
	"bytes"
	"fmt"
	"io"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
)

// SourceReaderState names the operator list state in which a source subtask
// keeps its reader's split positions, as Flink's SourceOperator does
// (split-distribute: a restore at another parallelism deals the splits out
// evenly).
const SourceReaderState = "SourceReaderState"

// readerState is a source subtask's operator state: the positions of the
// splits its reader holds, each a source.Split's MarshalBinary form.
type readerState struct {
	store  *state.OperatorStore
	splits state.ListState[[]byte]
}

// openReaderState makes the operator state of a source subtask, restored
// from snap when it is not nil, and returns the splits to hand the reader.
func openReaderState(name string, mem *memory.Manager, snap []byte) (*readerState, []source.Split, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name, Memory: mem})
	r := &readerState{store: store}
	if snap != nil {
		if err := store.Restore(bytes.NewReader(snap)); err != nil {
			store.Dispose()
			return nil, nil, err
		}
	}
	var err error
	if r.splits, err = state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: SourceReaderState}); err != nil {
		store.Dispose()
		return nil, nil, err
	}
	var splits []source.Split
	for _, b := range r.splits.Get() {
		var s source.Split
		if err := s.UnmarshalBinary(b); err != nil {
			store.Dispose()
			return nil, nil, fmt.Errorf("stream: %s: restore: %w", name, err)
		}
		splits = append(splits, s)
	}
	r.splits.Clear()
	return r, splits, nil
}

// snapshot writes the positions of the reader's splits (Flink's
// SourceOperator.snapshotState: the reader's snapshotState into
// SourceReaderState) and the rest of the operator state to w.
func (r *readerState) snapshot(positions []source.Split, w io.Writer) error {
	enc := make([][]byte, len(positions))
	for i, s := range positions {
		b, err := s.MarshalBinary()
		if err != nil {
			return err
		}
		enc[i] = b
	}
	r.splits.Update(enc)
	err := r.store.Snapshot(w)
	r.splits.Clear()
	if err == nil {
		err = r.store.Err()
	}
	return err
}

func (r *readerState) close() error { return r.store.Dispose() }
