package dataset

import (
	"context"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
)

// runSortedReduce runs a Reduce whose local strategy is SortGroup: it walks
// the groups of its input in key order, folding the consecutive records of
// one key with fn, and emits one record per group, in key order. With
// InputLocal SORT (the planner's choice when the input is not known to be
// sorted) it first sorts the subtask's input by key with the external sorter
// GroupReduce uses (its share of the memory budget, spilling runs to disk,
// removed when the task's body returns); with NONE (the input arrives sorted on
// the key, forwarded from a sort-merge join, a sort or another sorted
// grouping) it streams the input as it comes, holding one group at a time.
// A streamed input found out of order fails with sortjoin.ErrUnsortedInput
// rather than emit a key twice.
func runSortedReduce[T any](tc *task, n *node, where string, k *keyer[T], codec *memory.Codec[T],
	fn func(a, b T) T, out collector[T], batch int) error {
	f := typed.NewFolder(codec, fn, out.Collect, batch)
	if il := n.planned.Decision.InputLocal; len(il) == 0 || il[0] == optimizer.LocalNone {
		n.variants.ran(sortedInput)
		return flow.Pump[T](tc.TaskContext, 0, &streamFolder[T]{f: f, ctx: tc.Context(), key: k.Appender(), next: out})
	}
	n.variants.ran(sorter)
	it, err := sortInput(tc, where, k, codec)
	if err != nil {
		return err
	}
	if err := f.FoldSorted(tc.Context(), it, codec); err != nil {
		return err
	}
	if err := f.Finish(tc.Context()); err != nil {
		return err
	}
	return out.End()
}

// streamFolder is the collector of a sorted grouping whose input arrives
// sorted on the key: it folds each batch as it comes. Its close emits the
// last group and closes the output.
type streamFolder[T any] struct {
	flow.Plain
	f    *typed.Folder[T]
	ctx  context.Context
	key  func(dst []byte, v *T) []byte
	next collector[T]
}

func (s *streamFolder[T]) Collect(b []T) error { return s.f.AddBatch(s.ctx, s.key, b) }

func (s *streamFolder[T]) End() error {
	if err := s.f.Finish(s.ctx); err != nil {
		return err
	}
	return s.next.End()
}
