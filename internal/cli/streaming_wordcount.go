package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
	"github.com/weirdata/weir/stream"
)

func streamingWordCountJob() *streamJob {
	return &streamJob{
		name:  "streaming-wordcount",
		args:  "[--input PATH [--monitor 1s]] [--execution-mode streaming|batch|automatic] [--output DIR]",
		short: "Count words as a stream (Flink's streaming WordCount)",
		long: `Run Flink's streaming WordCount: lowercase each line of --input (a text file, a
directory of them or a glob; default: Flink's WordCountData.TEXT, the opening of
Goethe's Faust), split it on runs of characters other than ASCII letters, digits
and '_' (Java's \W+), drop empty tokens, key by word and sum. Prints "(word,count)"
lines as Flink's print sink does ("N> " before each at a parallelism above 1):

  --execution-mode streaming   every running count, (der,1) (der,2) ... (default)
  --execution-mode batch       only the final counts (bounded inputs only)
  --execution-mode automatic   batch when every input is bounded

With --monitor INTERVAL, --input is a directory watched at that interval: the lines
of every new file are counted as it appears (files should appear complete, written
elsewhere and renamed in), and the job runs until Ctrl-C, which stops it cleanly
(exit status 130). --output DIR writes the lines to part files (part-<subtask>-<n>)
instead, committed when a bounded input ends; an interrupted run removes what it
did not commit.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.WordCountParams
			var mode string
			f.StringVar(&p.Input, "input", "", "text to count the words of (default: Flink's WordCountData.TEXT)")
			f.DurationVar(&p.Monitor, "monitor", 0, "watch the --input directory at this interval and count the lines of new files (runs until Ctrl-C)")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			f.StringVar(&mode, "execution-mode", "streaming", "streaming, batch or automatic")
			return func(ctx context.Context, o streaming.Options) error {
				m, err := parseExecutionMode(mode)
				if err != nil {
					return err
				}
				if p.Monitor < 0 || p.Monitor > 0 && p.Monitor < time.Millisecond {
					return &usageError{err: fmt.Errorf("--monitor must be at least 1ms, got %v", p.Monitor)}
				}
				o.Stream.Mode = m
				return streaming.RunWordCount(ctx, o, p)
			}
		},
	}
}

// parseExecutionMode reads --execution-mode.
func parseExecutionMode(s string) (stream.Mode, error) {
	switch s {
	case "streaming", "STREAMING":
		return stream.Streaming, nil
	case "batch", "BATCH":
		return stream.Batch, nil
	case "automatic", "AUTOMATIC":
		return stream.Automatic, nil
	}
	return 0, &usageError{err: fmt.Errorf("--execution-mode must be streaming, batch or automatic, got %q", s)}
}
