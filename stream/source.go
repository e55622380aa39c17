package stream

import (
	"fmt"
	"iter"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// SourceReaderState names the operator list state in which a source
// subtask keeps its reader's split positions, as Flink's SourceOperator
// does (split-distribute: a restore at another parallelism deals the
// splits out evenly).
const SourceReaderState = task.ReaderState

// FromSource adds a source: every subtask runs a reader of src, one
// watermark generator per split (watermark.Splits) made by strategy, asked
// for watermarks every AutoWatermarkInterval. A bounded source ends with
// the maximal watermark, so every event-time timer fires. A strategy with
// WithWatermarkAlignment aligns the source with the other sources of its
// group (Flink's FLIP-182 and FLIP-217): every update interval each
// subtask reports its watermark, and a split more than the maximal drift
// ahead of the group's least watermark is not read until the others catch
// up (from the batch after the one that took it past the bound); idle and
// ended subtasks and idle splits hold no one back. In BATCH mode sources do
// not align.
func FromSource[T any](env *Env, src source.Source[T], strategy watermark.Strategy[T], name string) DataStream[T] {
	n := addNode[T](env, name, fmt.Sprintf("Source(%T)", src))
	n.Source = true
	if src == nil {
		env.fail(caller(1), fmt.Errorf("%s: nil source", name))
		return stream[T](env, n)
	}
	if err := strategy.Err(); err != nil {
		env.fail(caller(1), fmt.Errorf("%s: %w", name, err))
	}
	n.Bounded = src.Boundedness() == source.Bounded
	n.Enumerator = src.Enumerator
	if a := strategy.Alignment(); a.Enabled() {
		n.Align = &graph.Alignment{Group: a.Group, MaxDrift: a.MaxDrift, UpdateInterval: a.UpdateInterval}
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		s := task.NewSource(src, strategy, b.Enumerator, core.OutOf[T](outs, ""), n.Name, b.BatchSize()).WithMetrics(b.Metrics)
		if b.Aligner != nil {
			s.Align(b.Aligner)
		}
		return nil, s, nil
	}
	return stream[T](env, n)
}

// FromSlice adds a bounded source of items, without timestamps, split
// over the subtasks in order.
func FromSlice[T any](env *Env, items []T) DataStream[T] {
	return FromSource(env, source.FromSlice(items), watermark.NoWatermarks[T](), "FromSlice")
}

// FromSeq adds a bounded source of the values of seq, read by one subtask.
func FromSeq[T any](env *Env, seq iter.Seq[T]) DataStream[T] {
	return FromSource(env, source.FromSeq(seq), watermark.NoWatermarks[T](), "FromSeq").SetParallelism(1)
}
