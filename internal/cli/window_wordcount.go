package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func windowWordCountJob() *streamJob {
	return &streamJob{
		name:  "window-wordcount",
		args:  "[--input PATH] [--window 10] [--slide 5] [--output DIR]",
		short: "Count words over count windows (Flink's WindowWordCount)",
		long: `Run Flink's WindowWordCount: tokenize each line of --input (a text file, a directory
of them or a glob; default: Flink's WordCountData.TEXT) as streaming-wordcount does,
key by word and sum over count windows (countWindow(window, slide)): every --slide
occurrences of a word print "(word,n)", n its occurrences among the last --window.
The defaults, 10 and 5, are Flink's WindowWordCount's: on Flink's text they print
48 lines for the 30 words that occur 5 times or more, "(und,5)" "(und,10)" ...
(Flink's WindowWordCountITCase runs 250 and 150, which print nothing there: no
word occurs 150 times). Lines print as Flink's print sink does ("N> " before each at a
parallelism above 1); words that occur fewer than --slide times print nothing.

--output DIR writes the lines to part files (part-<subtask>-<n>) instead, committed
when the job ends.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.WindowWordCountParams
			f.StringVar(&p.Input, "input", "", "text to count the words of (default: Flink's WordCountData.TEXT)")
			f.Int64Var(&p.Window, "window", 10, "count window size: the last N occurrences of a word")
			f.Int64Var(&p.Slide, "slide", 5, "count window slide: fire every N occurrences of a word")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				if p.Window <= 0 || p.Slide <= 0 {
					return &usageError{err: fmt.Errorf("--window and --slide must be positive, got %d and %d", p.Window, p.Slide)}
				}
				return streaming.RunWindowWordCount(ctx, o, p)
			}
		},
	}
}
