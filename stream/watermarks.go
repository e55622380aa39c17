package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/watermark"
)

// AssignTimestampsAndWatermarks returns ds with new timestamps and
// watermarks, as Flink's DataStream.assignTimestampsAndWatermarks: each
// subtask stamps its records with the strategy's assigner (given the
// timestamp a record carries) and makes its watermarks with one generator
// of the strategy, asked for a periodic watermark every
// Options.AutoWatermarkInterval. The watermarks and idleness of ds are
// dropped, but the maximal watermark of the end of input. The operator
// heads its task (it is not chained to ds); a strategy with an invalid
// parameter is a build error at the caller's line. Prefer the strategy of
// the source (FromSource): it makes a generator per split.
func (ds DataStream[T]) AssignTimestampsAndWatermarks(strategy watermark.Strategy[T]) DataStream[T] {
	n := addNode[T](ds.env, "Timestamps/Watermarks", "TimestampsAndWatermarks", ds.edge())
	n.Watermarks = true
	if err := strategy.Err(); err != nil {
		ds.env.fail(caller(1), fmt.Errorf("AssignTimestampsAndWatermarks: %w", err))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		o := op.NewAssign(strategy, core.OutOf[T](outs, ""), b.BatchSize())
		return []any{o}, o, nil
	}
	return stream[T](ds.env, n)
}
