// Package lines runs a program whose result is text lines, the way weir's
// example and iteration jobs (packages examples and iterate) do: to stdout, or
// to a file written under a temporary name and renamed when complete. A job
// whose result has typed columns can write them to a Parquet file instead
// (EmitParquet, when IsParquet names its output).
package lines

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/formats/text"
)

// Options configure one run of a job.
type Options struct {
	// Dataset configures the program's Env: parallelism, memory budget, segment
	// size and spill directory.
	Dataset dataset.Options
	// Output is the file to write the result to, "" for Stdout: text lines
	// (Emit), or Parquet (EmitParquet) for the jobs that choose it when
	// IsParquet(Output). The file is written under a temporary name beside it
	// and renamed when complete; on error nothing is left.
	Output string
	// Stdout receives the result lines when Output is "" (nil: io.Discard).
	Stdout io.Writer
	// Executed, when set, receives the job's result (its plan with actual
	// rows, its metrics, its supersteps) after the job succeeded.
	Executed func(*dataset.Result)
}

// IsParquet reports whether path names a Parquet file: its name ends in
// ".parquet", in any case.
func IsParquet(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".parquet") }

// Emit adds the sink of the result lines to the program, runs it and returns
// its error, a *text.ParseError unwrapped.
//
// To a file, the subtasks are gathered in order into one subtask (First with
// no limit keeps everything, reading subtask 0 first) whose text sink writes
// one file, whatever its name; to Stdout, Print does the same gathering. A
// sorted data set comes out in order either way.
func Emit(ctx context.Context, env *dataset.Env, lines *dataset.DataSet[string], o Options) error {
	var out *bufio.Writer
	if o.Output != "" {
		dataset.Output(lines.First(math.MaxInt), "result "+o.Output, text.NewSink(o.Output))
	} else {
		w := o.Stdout
		if w == nil {
			w = io.Discard
		}
		out = bufio.NewWriterSize(w, 64<<10)
		dataset.Print(lines, out)
	}
	if err := execute(ctx, env, o); err != nil {
		return err
	}
	if out != nil {
		return out.Flush()
	}
	return nil
}

// EmitParquet adds a Parquet sink of the result rows to the program, runs it
// and returns its error, a *text.ParseError unwrapped. The file, o.Output
// (which must not be ""), has one column per field of R, named by its `weir`
// tag (formats/parquet.NewSink); the subtasks are gathered in order into one
// subtask as Emit does, so a sorted data set's rows come out in order.
func EmitParquet[R any](ctx context.Context, env *dataset.Env, rows *dataset.DataSet[R], o Options) error {
	if o.Output == "" {
		return errors.New("lines: Parquet output needs a file name")
	}
	dataset.Output(rows.First(math.MaxInt), "result "+o.Output, parquet.NewSink[R](o.Output))
	return execute(ctx, env, o)
}

// execute runs the program and hands its result to o.Executed.
func execute(ctx context.Context, env *dataset.Env, o Options) error {
	res, err := env.Execute(ctx)
	if err != nil {
		var pe *text.ParseError
		if errors.As(err, &pe) {
			return pe
		}
		return err
	}
	if o.Executed != nil {
		o.Executed(res)
	}
	return nil
}
