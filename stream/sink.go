package stream

import (
	"io"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
)

// addSink adds a sink node whose subtasks write batches with the function
// open returns for subtask i of n (nil: the caller sets the node's build).
func addSink[T any](ds DataStream[T], name string, open func(i, n int) (func([]Record[T]) error, error)) *graph.Node {
	n := addNode[struct{}](ds.env, name, name, ds.edge())
	n.Sink = true
	if open == nil {
		return n // the caller builds
	}
	n.Build = func(b *graph.Build, _ map[string]any) ([]any, task.Operator, error) {
		w, err := open(b.Subtask(), b.Parallelism())
		if err != nil {
			return nil, nil, err
		}
		s := &op.Sink[T]{Write: w}
		return []any{s}, s, nil
	}
	return n
}

// Collected holds what a Collect sink received, once the job ended.
type Collected[T any] struct{ c *sink.Collect[Record[T]] }

// Collect adds a sink keeping every record with its timestamp in memory.
func Collect[T any](ds DataStream[T]) *Collected[T] {
	c := &Collected[T]{c: sink.NewCollect[Record[T]]()}
	addSink(ds, "Collect", func(i, n int) (func([]Record[T]) error, error) {
		w, err := c.c.Writer(i, n)
		if err != nil {
			return nil, err
		}
		return w.Write, nil
	})
	return c
}

// Records returns the records with their timestamps: subtask 0's in
// arrival order, then subtask 1's, and so on.
func (c *Collected[T]) Records() []Record[T] { return c.c.Records() }

// Values returns the records' values in the order of Records.
func (c *Collected[T]) Values() []T {
	rs := c.c.Records()
	out := make([]T, len(rs))
	for i := range rs {
		out[i] = rs[i].Value
	}
	return out
}

// Print adds a sink printing every record to standard output in Flink's
// format: "N> " before each line (N the subtask from 1) when the sink's
// parallelism is above 1, the value as sink.ToString prints it.
func Print[T any](ds DataStream[T]) DataStreamSink { return printTo(ds, sink.NewPrint[T]("")) }

// PrintTo is Print to w, with an identifier before the subtask
// ("id:N> "; "id> " at parallelism 1; "" for none).
func PrintTo[T any](ds DataStream[T], w io.Writer, identifier string) DataStreamSink {
	return printTo(ds, sink.NewPrintTo[T](w, identifier))
}

func printTo[T any](ds DataStream[T], p *sink.Print[T]) DataStreamSink {
	n := addSink(ds, "Print", func(i, n int) (func([]Record[T]) error, error) {
		w, err := p.Writer(i, n)
		if err != nil {
			return nil, err
		}
		var vals []T
		return func(b []Record[T]) error {
			vals = vals[:0]
			for i := range b {
				vals = append(vals, b[i].Value)
			}
			return w.Write(vals)
		}, nil
	})
	return DataStreamSink{ds.env, n}
}

// Discard adds a sink that drops every record (Flink's DiscardingSink): a
// program run for its side effects, its metrics or its speed still names
// where its records end.
func Discard[T any](ds DataStream[T]) DataStreamSink {
	n := addSink(ds, "Discard", func(int, int) (func([]Record[T]) error, error) {
		return func([]Record[T]) error { return nil }, nil
	})
	return DataStreamSink{ds.env, n}
}
