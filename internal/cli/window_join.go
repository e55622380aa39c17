package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func windowJoinJob() *streamJob {
	return &streamJob{
		name: "window-join",
		args: "[--grades FILE --salaries FILE] [--window D | --windowSize MS] [--rate R] [--events N] [--seed S] " +
			"[--execution-mode streaming|batch|automatic] [--output DIR]",
		short: "Join grades and salaries by name in tumbling event-time windows (Flink's WindowJoin)",
		long: `Run Flink's WindowJoin: a grades and a salaries stream joined on the name in
tumbling event-time windows of --window (a Go duration or whole milliseconds; Flink's
--windowSize MS says the same): every grade and salary of one name in one window give
a line "(name,grade,salary)" ("N> " before each at a parallelism above 1).

With --grades FILE --salaries FILE the streams are the files' lines "time,name,value"
(CSV without a header, as Flink's WindowJoinData), time in epoch milliseconds and
the name taken as it is; each file is read in order as one stream, in constant
memory, its watermark its largest time - 1: a line behind it is late and dropped, as
in Flink. A malformed line, or a time whose window would reach past the int64 range,
stops the job with an error naming the file, the line and the column.

Without them two generators (Flink's WindowJoinSampleData) release
--rate elements per second each, (name, grade) with a grade in [1, 5] and (name,
salary) with a salary in [1, 10000], the names drawn from tom, jerry, alice, bob,
john and grace (java.util.Random from --seed for the grades, --seed + 1 for the
salaries). Flink stamps each element with the wall clock when it enters the job; here element
i of a stream carries the time it is due, i * 1000 / rate milliseconds, so the
output depends on the flags alone. --events N bounds each stream to N elements (0,
the default, makes them unbounded as Flink's are: the job runs until Ctrl-C); a
bounded run fires every window at the end. --execution-mode batch (or automatic
with files or --events) joins the bounded streams in BATCH mode, with the same
result when each stream is in time order.

--output DIR writes the lines to part files (part-<subtask>-<n>) instead, committed
when a bounded run ends.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.WindowJoinParams
			var size int64
			var mode, win string
			f.StringVar(&p.Grades, "grades", "", `file of "time,name,grade" lines (default: generated grades)`)
			f.StringVar(&p.Salaries, "salaries", "", `file of "time,name,salary" lines (default: generated salaries)`)
			f.StringVar(&win, "window", "", "size of the tumbling windows: a Go duration or whole milliseconds (default 2s)")
			f.Int64Var(&size, "windowSize", 2000, "size of the tumbling windows in milliseconds (Flink's flag; --window says the same)")
			f.Float64Var(&p.Rate, "rate", 3, "elements per second of each stream")
			f.Int64Var(&p.Events, "events", 0, "elements of each stream (0: unbounded, until Ctrl-C)")
			f.Int64Var(&p.Seed, "seed", 1, "seed of the grades generator (the salaries' is seed + 1)")
			f.StringVar(&mode, "execution-mode", "streaming", "streaming, batch or automatic")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				m, err := parseExecutionMode(mode)
				if err != nil {
					return err
				}
				o.Stream.Mode = m
				p.WindowSize = time.Duration(size) * time.Millisecond
				switch {
				case win != "" && f.Changed("windowSize"):
					return &usageError{err: fmt.Errorf("--window and --windowSize say the same: give one")}
				case win != "":
					if p.WindowSize, err = streaming.ParseMillis(win); err != nil || p.WindowSize <= 0 {
						return &usageError{err: fmt.Errorf("--window: want a positive Go duration or whole milliseconds, got %q", win)}
					}
				}
				files := p.Grades != "" || p.Salaries != ""
				switch {
				case (p.Grades == "") != (p.Salaries == ""):
					return &usageError{err: fmt.Errorf("--grades and --salaries go together")}
				case files && (f.Changed("rate") || f.Changed("events") || f.Changed("seed")):
					return &usageError{err: fmt.Errorf("--rate, --events and --seed shape the generators, not --grades and --salaries")}
				case size <= 0:
					return &usageError{err: fmt.Errorf("--windowSize must be positive, got %d", size)}
				case !(p.Rate > 0):
					return &usageError{err: fmt.Errorf("--rate must be positive, got %v", p.Rate)}
				case p.Events < 0:
					return &usageError{err: fmt.Errorf("--events must not be negative, got %d", p.Events)}
				}
				return streaming.RunWindowJoin(ctx, o, p)
			}
		},
	}
}
