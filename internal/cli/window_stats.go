package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func windowStatsJob() *streamJob {
	return &streamJob{
		name: "window-stats",
		args: "--input CSV --key K --time T --value V --window tumbling:SIZE|sliding:SIZE,SLIDE|session:GAP " +
			"[--out-of-orderness D] [--allowed-lateness D] [--late-output DIR] [--aggregate sum|count|min|max|avg] " +
			"[--execution-mode streaming|batch|automatic] [--output DIR]",
		short: "Aggregate a CSV of events per key and event-time window",
		long: `Aggregate the --value column of a CSV of events (a header row naming the columns)
per --key and event-time window, --time being epoch milliseconds:

  --window tumbling:SIZE          fixed windows of SIZE
  --window sliding:SIZE,SLIDE     windows of SIZE starting every SLIDE
  --window session:GAP            sessions of a key, closed after GAP without events
  --aggregate sum|count|min|max|avg

Durations are Go durations (1s, 250ms) or whole milliseconds (250). The file is
CSV as RFC 4180 has it (quoted fields may hold commas, "" and newlines; a UTF-8
byte-order mark before the header is skipped), read in order as one stream in
constant memory; with checkpoints a restore resumes at the byte offset reached.
After every record the watermark advances to the largest timestamp seen minus
--out-of-orderness minus 1 (Flink's bounded out-of-orderness), so results do not
depend on timing or --parallelism. A window
fires when the watermark reaches its end; an event for a window that already fired
but is within --allowed-lateness fires it again with the event added (a late
firing); an event later than that is dropped, or written to --late-output DIR as
its input record. Each firing prints "key,window_start,window_end,value" (epoch
milliseconds, the end exclusive; count as an integer, the others as the shortest
decimal of the float64); --output DIR writes the lines to part files
(part-<subtask>-<n>) in DIR instead, committed when the input ends (and as each
checkpoint completes); an interrupted run removes what it did not commit.

In --execution-mode batch (and automatic, the file being bounded) the watermark
does not advance until the input ended, as in Flink's BATCH mode: no event is late
and every window fires once with all of its events.

A missing column, an unparsable number (NaN, infinities, hexadecimal floats and
1_000 included), a time of -9223372036854775808 (weir's mark of no timestamp) or a
time whose window would reach past the int64 range, and a record longer than 16 MiB
stop the job with an error naming the file, the line and the column (or the limit).`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.WindowStatsParams
			var mode, ooo, lateness string
			f.StringVar(&p.Input, "input", "", "CSV file of events with a header row, a regular file (required)")
			f.StringVar(&p.Key, "key", "", "column of the key (required)")
			f.StringVar(&p.Time, "time", "", "column of the event time, epoch milliseconds (required)")
			f.StringVar(&p.Value, "value", "", "column of the value (required)")
			f.StringVar(&p.Window, "window", "", "tumbling:SIZE, sliding:SIZE,SLIDE or session:GAP (required)")
			f.StringVar(&ooo, "out-of-orderness", "0", "watermark bound D: largest timestamp seen - D - 1")
			f.StringVar(&lateness, "allowed-lateness", "0", "how long after its end a window takes late events")
			f.StringVar(&p.LateOutput, "late-output", "", "directory to write the late events' input lines to as part files")
			f.StringVar(&p.Aggregate, "aggregate", "sum", "sum, count, min, max or avg")
			f.StringVar(&mode, "execution-mode", "streaming", "streaming, batch or automatic")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				m, err := parseExecutionMode(mode)
				if err != nil {
					return err
				}
				o.Stream.Mode = m
				for _, r := range []struct{ name, v string }{{"input", p.Input}, {"key", p.Key}, {"time", p.Time}, {"value", p.Value}, {"window", p.Window}} {
					if r.v == "" {
						return &usageError{err: fmt.Errorf("--%s is required", r.name)}
					}
				}
				if _, err := streaming.ParseWindow(p.Window); err != nil {
					return &usageError{err: fmt.Errorf("--window: %w", err)}
				}
				switch p.Aggregate {
				case "sum", "count", "min", "max", "avg":
				default:
					return &usageError{err: fmt.Errorf("--aggregate must be sum, count, min, max or avg, got %q", p.Aggregate)}
				}
				if p.OutOfOrderness, err = streaming.ParseMillis(ooo); err != nil || p.OutOfOrderness < 0 {
					return &usageError{err: fmt.Errorf("--out-of-orderness: want a duration of 0 or more, got %q", ooo)}
				}
				if p.AllowedLateness, err = streaming.ParseMillis(lateness); err != nil || p.AllowedLateness < 0 {
					return &usageError{err: fmt.Errorf("--allowed-lateness: want a duration of 0 or more, got %q", lateness)}
				}
				return streaming.RunWindowStats(ctx, o, p)
			}
		},
	}
}
