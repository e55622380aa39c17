package iterate

import (
	"context"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/lines"
)

// Options configure one run of a job; they are examples.Options too:
// Dataset configures the Env; the result goes to Output (written under a
// temporary name and renamed when complete: Parquet if its name ends in
// ".parquet" in any case, else text lines) or, when it is "", to Stdout as
// text lines; Executed, when set, receives the job's result (plan, metrics,
// supersteps).
type Options = lines.Options

// emit adds the sink of the sorted result lines to the program, runs it and
// returns its error, a *ParseError unwrapped (lines.Emit).
func emit(ctx context.Context, env *dataset.Env, out *dataset.DataSet[string], o Options) error {
	return lines.Emit(ctx, env, out, o)
}

// emitParquet adds a Parquet sink of the sorted result rows, one column per
// field of R, to the program, runs it and returns its error, a *ParseError
// unwrapped (lines.EmitParquet). o.Output names the file.
func emitParquet[R any](ctx context.Context, env *dataset.Env, rows *dataset.DataSet[R], o Options) error {
	return lines.EmitParquet(ctx, env, rows, o)
}
