package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func sessionWindowingJob() *streamJob {
	return &streamJob{
		name:  "session-windowing",
		args:  "[--input CSV] [--gap 3ms] [--output DIR]",
		short: "Sum counts per event-time session (Flink's SessionWindowing)",
		long: `Run Flink's SessionWindowing: events (key, timestamp, count), read in order as one
stream with ascending timestamps (the watermark is the latest timestamp - 1), keyed by
key into event-time session windows of --gap (sessions of a key closer than the gap
merge), summing the count. Prints one "(key,timestamp,count)" line per session: its
first event with the summed count, as Flink's print sink does ("N> " before each at
a parallelism above 1).

  --input  a CSV file with the header key,timestamp,count (in any order),
           timestamps in milliseconds, read as one stream in constant memory
           (default: Flink's SessionWindowing input, 7 events)
  --gap    the session gap (Flink's: 3ms)

--output DIR writes the lines to part files (part-<subtask>-<n>) instead, committed
when the job ends. A malformed record, or a timestamp whose session would end past
the int64 range, stops the job with an error naming the file, the line and the
column.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.SessionWindowingParams
			f.StringVar(&p.Input, "input", "", "CSV of key,timestamp,count (default: Flink's SessionWindowing input)")
			f.DurationVar(&p.Gap, "gap", 3*time.Millisecond, "session gap")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				if p.Gap < time.Millisecond {
					return &usageError{err: fmt.Errorf("--gap must be at least 1ms, got %v", p.Gap)}
				}
				return streaming.RunSessionWindowing(ctx, o, p)
			}
		},
	}
}
