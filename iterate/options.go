package iterate

import (
	"context"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/lines"
)

// Options configure one run of a job; they are examples.Options too:
// Dataset configures the Env; the result lines go to Output (written under a
// temporary name and renamed when complete) or, when it is "", to Stdout;
// Executed, when set, receives the job's result (plan, metrics, supersteps).
type Options = lines.Options

// emit adds the sink of the sorted result lines to the program, runs it and
// returns its error, a *ParseError unwrapped (lines.Emit).
func emit(ctx context.Context, env *dataset.Env, out *dataset.DataSet[string], o Options) error {
	return lines.Emit(ctx, env, out, o)
}
