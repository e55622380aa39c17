package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func stateMachineJob() *streamJob {
	return &streamJob{
		name:  "state-machine",
		args:  "[--events N] [--rate R] [--error-rate P] [--seed S] [--output DIR]",
		short: "Check generated events against a state machine per address (Flink's StateMachineExample)",
		long: `Run Flink's StateMachineExample: a generator (Flink's EventsGenerator, drawing from
java.util.Random with --seed) produces events of up to about 1000 concurrent state
machines, one per IPv4 address; the events are keyed by address and each address's
state is kept in a ValueState:

            +--[a]--> W --[b]--> Y --[e]---+
            |                    ^         |
    Initial-+                    |         |
            |                    |         +--> (Z)-----[g]---> Terminal
            +--[c]--> X --[b]----+         |
                      |                    |
                      +--------[d]---------+

An event that is no transition of its address's state prints Flink's alert line,
"ALERT 64.212.116.146 : X -> f" (the first of --parallelism 1 with the defaults;
"N> " before each at a parallelism above 1). The generator makes an invalid
transition with probability --error-rate, 0.05 by default: the defaults print 535
alerts (Flink's default rate, 0, prints none). --events N bounds the stream (0: unbounded, until Ctrl-C);
--rate R releases R events per second (0: as fast as they are processed).
--output DIR writes the alerts to part files (part-<subtask>-<n>, one alert a line)
instead, committed when a bounded stream ends; an interrupted run removes what it
did not commit.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.StateMachineParams
			f.Int64Var(&p.Events, "events", 10000, "events to generate (0: unbounded, until Ctrl-C)")
			f.Float64Var(&p.Rate, "rate", 0, "events per second (0: as fast as they are processed)")
			f.Float64Var(&p.ErrorRate, "error-rate", 0.05, "probability of an invalid transition (Flink's default, 0, gives no alert)")
			f.Int64Var(&p.Seed, "seed", 1, "seed of the events generator")
			f.StringVar(&p.Output, "output", "", "directory to write the alerts to as part files (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				switch {
				case p.Events < 0:
					return &usageError{err: fmt.Errorf("--events must not be negative, got %d", p.Events)}
				case p.Rate < 0:
					return &usageError{err: fmt.Errorf("--rate must not be negative, got %v", p.Rate)}
				case !(p.ErrorRate >= 0 && p.ErrorRate <= 1):
					return &usageError{err: fmt.Errorf("--error-rate must be in [0, 1], got %v", p.ErrorRate)}
				}
				return streaming.RunStateMachine(ctx, o, p)
			}
		},
	}
}
