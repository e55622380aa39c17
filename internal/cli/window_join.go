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
		args: "[--windowSize MS] [--rate R] [--events N] [--seed S] " +
			"[--execution-mode streaming|batch|automatic] [--output DIR]",
		short: "Join generated grades and salaries by name in tumbling windows (Flink's WindowJoin)",
		long: `Run Flink's WindowJoin: two generators (Flink's WindowJoinSampleData) release
--rate elements per second each, (name, grade) with a grade in [1, 5] and (name,
salary) with a salary in [1, 10000], the names drawn from tom, jerry, alice, bob,
john and grace (java.util.Random from --seed for the grades, --seed + 1 for the
salaries). The streams are joined on the name in tumbling event-time windows of
--windowSize milliseconds: every grade and salary of one name in one window give a
line "(name,grade,salary)" ("N> " before each at a parallelism above 1).

Flink stamps each element with the wall clock when it enters the job; here element
i of a stream carries the time it is due, i * 1000 / rate milliseconds, so the
output depends on the flags alone. --events N bounds each stream to N elements (0,
the default, makes them unbounded as Flink's are: the job runs until Ctrl-C); a
bounded run fires every window at the end. --execution-mode batch (or automatic
with --events) joins the bounded streams in BATCH mode, with the same result.

--output DIR writes the lines to part files (part-<subtask>-<n>) instead, committed
when a bounded run ends.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.WindowJoinParams
			var size int64
			var mode string
			f.Int64Var(&size, "windowSize", 2000, "size of the tumbling windows in milliseconds")
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
				switch {
				case size <= 0:
					return &usageError{err: fmt.Errorf("--windowSize must be positive, got %d", size)}
				case !(p.Rate > 0):
					return &usageError{err: fmt.Errorf("--rate must be positive, got %v", p.Rate)}
				case p.Events < 0:
					return &usageError{err: fmt.Errorf("--events must not be negative, got %d", p.Events)}
				}
				p.WindowSize = time.Duration(size) * time.Millisecond
				return streaming.RunWindowJoin(ctx, o, p)
			}
		},
	}
}
