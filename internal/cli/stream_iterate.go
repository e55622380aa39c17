package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func streamIterateJob() *streamJob {
	return &streamJob{
		name:  "iterate",
		args:  "[--input PATH] [--max-wait D] [--output DIR]",
		short: "Step Fibonacci-like sequences around a feedback loop (Flink's IterateExample)",
		long: `Run Flink's streaming IterateExample: every input pair (a,b) starts the sequence
a, b, a+b, ... in a stream iteration; each trip around the loop computes the next
number and counts a step, and feeds the pair back while both of its two latest
numbers are below 100. Prints "((a,b),steps)" lines as Flink's print sink does
("N> " before each at a parallelism above 1).

  --input     "(a,b)" lines, a text file, a directory of them or a glob (default:
              Flink's IterateExampleData.INPUT_PAIRS, 18 pairs)
  --max-wait  how long the loop waits for feedback once the input ended (Flink's
              iterate(5000): 5s)

The feedback loop runs in STREAMING mode only. --output DIR writes the lines to part
files (part-<subtask>-<n>) instead, committed when the job ends, or with each
checkpoint under --checkpoint-dir: the loop's head logs the records fed back until
a checkpoint's barrier returns around the loop, so a restored loop loses and
repeats nothing.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.IterateParams
			f.StringVar(&p.Input, "input", "", `"(a,b)" lines (default: Flink's IterateExampleData.INPUT_PAIRS)`)
			f.DurationVar(&p.MaxWait, "max-wait", 5*time.Second, "wait for feedback once the input ended")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				if p.MaxWait <= 0 {
					return &usageError{err: fmt.Errorf("--max-wait must be positive, got %v", p.MaxWait)}
				}
				return streaming.RunIterate(ctx, o, p)
			}
		},
	}
}
