package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func topSpeedJob() *streamJob {
	return &streamJob{
		name:  "top-speed-windowing",
		args:  "[--input FILE] [--output DIR]",
		short: "The top speed of each car over its last 10 s, every 50 m (Flink's TopSpeedWindowing)",
		long: `Run Flink's TopSpeedWindowing: car events "(carId,speed,distance,time)" (speed in
km/h, distance in metres, time in epoch milliseconds; default: Flink's
TopSpeedWindowingExampleData.CAR_DATA, two cars), read in order with ascending
timestamps, keyed by car into a global window with a delta trigger (fire when the
car has driven more than 50 m since the event that last fired) and a time evictor
(keep the events of the last 10 s). Each firing prints the kept event with the
largest speed (the first one on ties) in the input's form, numbers as Java prints
them ("N> " before each line at a parallelism above 1).

--output DIR writes the lines to part files (part-<subtask>-<n>) instead, committed
when the job ends.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.TopSpeedParams
			f.StringVar(&p.Input, "input", "", `"(carId,speed,distance,time)" lines (default: Flink's CAR_DATA)`)
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				return streaming.RunTopSpeedWindowing(ctx, o, p)
			}
		},
	}
}
