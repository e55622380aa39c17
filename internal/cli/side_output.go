package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func sideOutputJob() *streamJob {
	return &streamJob{
		name:  "side-output",
		args:  "[--input PATH] [--window 5s] [--output DIR] [--rejected-words-output DIR]",
		short: "Count short words in 5 s windows, long ones to a side output (Flink's SideOutputExample)",
		long: `Run Flink's SideOutputExample: every line of --input (a text file, a directory of
them or a glob; default: Flink's WordCountData.TEXT) gets its ingestion time (the
wall clock when it is read, ascending watermarks) and is tokenized as
streaming-wordcount does. Words longer than five letters go to a side output,
printed "rejected: word"; the others are keyed by word and summed in tumbling
event-time windows of --window (Flink's: 5 s), printed "(word,count)" when a window
ends (at the end of the input every window fires). Lines print as Flink's print
sink does ("N> " before each at a parallelism above 1); which window a word falls
in depends on when it is read. --output DIR writes the counts to part files
(part-<subtask>-<n>) instead, --rejected-words-output DIR the rejected words,
each committed as checkpoints complete and at the end of the input.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.SideOutputParams
			f.StringVar(&p.Input, "input", "", "text to count the words of (default: Flink's WordCountData.TEXT)")
			f.DurationVar(&p.Window, "window", 5*time.Second, "tumbling window size")
			f.StringVar(&p.Output, "output", "", "directory to write the counts' part files to (default: stdout)")
			f.StringVar(&p.RejectedOutput, "rejected-words-output", "", "directory to write the rejected words' part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				if p.Window < time.Millisecond {
					return &usageError{err: fmt.Errorf("--window must be at least 1ms, got %v", p.Window)}
				}
				if p.Output != "" && p.Output == p.RejectedOutput {
					return &usageError{err: fmt.Errorf("--output and --rejected-words-output must differ, both are %s", p.Output)}
				}
				return streaming.RunSideOutput(ctx, o, p)
			}
		},
	}
}
