package streaming

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// CarEvent is one event of Flink's TopSpeedWindowing, a
// Tuple4<Integer, Integer, Double, Long> printed
// (carId,speed,distance,time): speed in km/h, distance in metres, time in
// epoch milliseconds.
type CarEvent struct {
	CarID    int32
	Speed    int32
	Distance float64
	Time     int64
}

// TopSpeedParams are the inputs and output of RunTopSpeedWindowing.
type TopSpeedParams struct {
	// Input is a file of "(carId,speed,distance,time)" lines; "" reads
	// TopSpeedCarData.
	Input string
	// Output is a directory to write part files to; "" prints to
	// Options.Stdout.
	Output string
}

// Flink's TopSpeedWindowing fires every triggerMeters metres and looks at
// the last evictionTime.
const (
	topSpeedTriggerMeters = 50
	topSpeedEvictionTime  = 10 * time.Second
)

// RunTopSpeedWindowing is Flink's TopSpeedWindowing: car events with
// ascending timestamps keyed by car into a global window with a delta
// trigger (fire when the car has driven more than 50 m since the last
// firing) and a time evictor (keep the last 10 s), printing the event of
// the largest speed of what is kept (the first one on ties). An input file
// is read as one stream of lines (source.Text), in constant memory; a line
// that does not parse is an error naming the file and the line.
func RunTopSpeedWindowing(ctx context.Context, o Options, p TopSpeedParams) error {
	env := o.newEnv()
	strategy := watermark.ForMonotonousTimestamps[CarEvent]().WithTimestampAssigner(func(c CarEvent, _ int64) int64 { return c.Time })
	var src source.Source[CarEvent]
	if p.Input == "" {
		cars := make([]CarEvent, 0, len(TopSpeedCarData))
		for i, l := range TopSpeedCarData {
			c, err := ParseCarEvent(l)
			if err != nil {
				return fmt.Errorf("examples/streaming: top speed windowing: default data line %d: %w", i+1, err)
			}
			cars = append(cars, c)
		}
		src = source.FromSlice(cars)
	} else {
		lines, err := source.Files(source.Text(), p.Input)
		if err != nil {
			return fmt.Errorf("examples/streaming: top speed windowing: %w", err)
		}
		src = source.Parse(lines, ParseCarEvent)
	}
	events := stream.FromSource(env, src, strategy, "car-events").SetParallelism(1)
	trigger := window.DeltaTriggerOf[CarEvent, window.GlobalWindow](topSpeedTriggerMeters,
		func(old, cur CarEvent) float64 { return cur.Distance - old.Distance })
	if err := trigger.Err(); err != nil {
		return fmt.Errorf("examples/streaming: top speed windowing: %w", err)
	}
	ws := stream.Window(stream.KeyBy(events, func(c CarEvent) int32 { return c.CarID }), window.Assigner[window.GlobalWindow](window.GlobalWindows())).
		Evictor(window.TimeEvictorOf[window.GlobalWindow](topSpeedEvictionTime)).
		Trigger(trigger)
	top := stream.WindowMaxBy(ws, func(c CarEvent) int32 { return c.Speed })
	emit(top, o, p.Output)
	created := newDirs(p.Output)
	if _, err := env.Execute(ctx); err != nil {
		created.removeEmpty()
		return fmt.Errorf("examples/streaming: top speed windowing: %w", err)
	}
	return nil
}

// ParseCarEvent parses "(carId,speed,distance,time)" as Flink's
// ParseCarData does: the text between the parentheses split on commas.
func ParseCarEvent(line string) (CarEvent, error) {
	s := strings.TrimSpace(line)
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return CarEvent{}, fmt.Errorf("want (carId,speed,distance,time), got %q", line)
	}
	f := strings.Split(s[1:len(s)-1], ",")
	if len(f) != 4 {
		return CarEvent{}, fmt.Errorf("want 4 fields (carId,speed,distance,time), got %d in %q", len(f), line)
	}
	id, err := strconv.ParseInt(f[0], 10, 32)
	if err != nil {
		return CarEvent{}, fmt.Errorf("column 1 (carId): %w", err)
	}
	speed, err := strconv.ParseInt(f[1], 10, 32)
	if err != nil {
		return CarEvent{}, fmt.Errorf("column 2 (speed): %w", err)
	}
	dist, err := strconv.ParseFloat(f[2], 64)
	if err != nil {
		return CarEvent{}, fmt.Errorf("column 3 (distance): %w", err)
	}
	t, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return CarEvent{}, fmt.Errorf("column 4 (time): %w", err)
	}
	return CarEvent{CarID: int32(id), Speed: int32(speed), Distance: dist, Time: t}, nil
}
