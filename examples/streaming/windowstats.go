package streaming

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// StatEvent is one data line of a window-stats input: its key, event time
// (epoch milliseconds) and value, and the line itself (written out again
// when the event is late).
type StatEvent struct {
	Key   string
	Time  int64
	Value float64
	Line  string
}

// WindowStatsParams configure RunWindowStats.
type WindowStatsParams struct {
	// Input is a CSV file with a header row naming its columns.
	Input string
	// Key, Time and Value name the columns of the key, the event time
	// (epoch milliseconds) and the value.
	Key, Time, Value string
	// Window is the assigner: "tumbling:SIZE", "sliding:SIZE,SLIDE" or
	// "session:GAP", each a Go duration or whole milliseconds.
	Window string
	// OutOfOrderness is the watermark's bound D: the watermark is the
	// largest timestamp seen - D - 1.
	OutOfOrderness time.Duration
	// AllowedLateness keeps windows for late firings.
	AllowedLateness time.Duration
	// LateOutput, when set, is a directory receiving the late events' input
	// lines as part files.
	LateOutput string
	// Aggregate is sum, count, min, max or avg.
	Aggregate string
	// Output is a directory to write the result lines to as part files;
	// "" prints them to Options.Stdout.
	Output string
}

// ParseWindow parses a window-stats window spec into its event-time
// assigner.
func ParseWindow(spec string) (window.Assigner[window.TimeWindow], error) {
	kind, args, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, fmt.Errorf("window %q: want tumbling:SIZE, sliding:SIZE,SLIDE or session:GAP", spec)
	}
	parts := strings.Split(args, ",")
	ds := make([]time.Duration, len(parts))
	for i, p := range parts {
		d, err := ParseMillis(p)
		if err != nil {
			return nil, fmt.Errorf("window %q: %w", spec, err)
		}
		ds[i] = d
	}
	switch {
	case kind == "tumbling" && len(ds) == 1:
		return window.TumblingEventTimeWindows(ds[0])
	case kind == "sliding" && len(ds) == 2:
		return window.SlidingEventTimeWindows(ds[0], ds[1])
	case kind == "session" && len(ds) == 1:
		return window.EventTimeSessionWindows(ds[0])
	}
	return nil, fmt.Errorf("window %q: want tumbling:SIZE, sliding:SIZE,SLIDE or session:GAP", spec)
}

// ParseMillis parses a duration: a Go duration ("1s", "250ms") or whole
// milliseconds ("250"). It must be whole milliseconds.
func ParseMillis(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a Go duration or milliseconds", s)
	}
	if d%time.Millisecond != 0 {
		return 0, fmt.Errorf("duration %q is not whole milliseconds", s)
	}
	return d, nil
}

// statAcc is the accumulator of every aggregate.
type statAcc struct {
	n             int64
	sum, min, max float64
}

// statAggregate aggregates the values of a window.
type statAggregate struct{}

func (statAggregate) CreateAccumulator() statAcc {
	return statAcc{min: math.Inf(1), max: math.Inf(-1)}
}

func (statAggregate) Add(e StatEvent, a statAcc) statAcc {
	a.n++
	a.sum += e.Value
	a.min = min(a.min, e.Value)
	a.max = max(a.max, e.Value)
	return a
}

func (statAggregate) GetResult(a statAcc) statAcc { return a }

func (statAggregate) Merge(a, b statAcc) statAcc {
	return statAcc{n: a.n + b.n, sum: a.sum + b.sum, min: min(a.min, b.min), max: max(a.max, b.max)}
}

// statValue formats the aggregate of a: count as an integer, the others
// as the shortest decimal that reads back as the same float64.
func statValue(aggregate string, a statAcc) string {
	var v float64
	switch aggregate {
	case "count":
		return strconv.FormatInt(a.n, 10)
	case "min":
		v = a.min
	case "max":
		v = a.max
	case "avg":
		v = a.sum / float64(a.n)
	default:
		v = a.sum
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// RunWindowStats aggregates the values of a CSV of events per key and
// event-time window. The file is read in order as one stream (a source of
// parallelism 1); after every record the watermark advances to the largest
// timestamp seen - OutOfOrderness - 1, so which events are late does not
// depend on timing or parallelism. Every firing (late firings included)
// gives a line "key,window_start,window_end,value"; late events go to
// LateOutput as their input lines. Printed lines are written as the
// windows fire by one subtask (buffered, so Stdout gets them in blocks);
// the output directories get part files through the FileSink (see emit),
// exactly once under checkpoints.
func RunWindowStats(ctx context.Context, o Options, p WindowStatsParams) error {
	switch p.Aggregate {
	case "sum", "count", "min", "max", "avg":
	default:
		return fmt.Errorf("examples/streaming: window stats: aggregate %q: want sum, count, min, max or avg", p.Aggregate)
	}
	assigner, err := ParseWindow(p.Window)
	if err != nil {
		return fmt.Errorf("examples/streaming: window stats: %w", err)
	}
	if p.OutOfOrderness < 0 || p.AllowedLateness < 0 {
		return errors.New("examples/streaming: window stats: the out-of-orderness and the allowed lateness must not be negative")
	}
	events, err := ReadStatEvents(p.Input, p.Key, p.Time, p.Value)
	if err != nil {
		return err
	}
	bound := p.OutOfOrderness.Milliseconds()
	strategy := watermark.ForGenerator(func(watermark.Context) watermark.Generator[StatEvent] {
		maxTs := int64(math.MinInt64)
		return watermark.Punctuated(func(_ StatEvent, ts int64) (int64, bool) {
			if ts <= maxTs {
				return 0, false
			}
			maxTs = ts
			return ts - bound - 1, true
		})
	}).WithTimestampAssigner(func(e StatEvent, _ int64) int64 { return e.Time })
	env := o.newEnv()
	src := stream.FromSource(env, source.FromSlice(events), strategy, "csv-events").SetParallelism(1)
	lateTag := stream.NewOutputTag[StatEvent]("late")
	ws := stream.Window(stream.KeyBy(src, func(e StatEvent) string { return e.Key }), assigner).
		AllowedLateness(p.AllowedLateness).SideOutputLateData(lateTag)
	agg := p.Aggregate
	lines := stream.WindowAggregateProcess(ws, statAggregate{}, func() stream.ProcessWindowFunction[string, window.TimeWindow, statAcc, string] {
		return stream.ProcessWindowFunction[string, window.TimeWindow, statAcc, string]{
			Process: func(key string, ctx *stream.WindowContext[string, window.TimeWindow], accs []statAcc, out stream.Collector[string]) error {
				w := ctx.Window()
				for _, a := range accs {
					out.Collect(key + "," + strconv.FormatInt(w.Start, 10) + "," + strconv.FormatInt(w.End, 10) + "," + statValue(agg, a))
				}
				return nil
			},
		}
	})
	var printed *bufio.Writer
	if p.Output == "" {
		printed = bufio.NewWriter(o.Stdout)
		writeLines(lines, printed)
	} else {
		emit(lines, o, p.Output)
	}
	if p.LateOutput != "" {
		emit(stream.Map(stream.GetSideOutput(lines, lateTag), func(e StatEvent) string { return e.Line }), o, p.LateOutput)
	}
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: window stats: %w", err)
	}
	if printed != nil {
		if err := printed.Flush(); err != nil {
			return fmt.Errorf("examples/streaming: window stats: %w", err)
		}
	}
	return nil
}

// writeLines writes every line of ds to w, a line each, from one subtask
// as the lines arrive (so they carry no "N> " prefix and need no lock).
func writeLines(ds stream.DataStream[string], w *bufio.Writer) {
	writer := stream.Process(ds, func() stream.ProcessFunction[string, struct{}] {
		return stream.ProcessFunction[string, struct{}]{
			ProcessElement: func(l string, _ *stream.Context, _ stream.Collector[struct{}]) error {
				w.WriteString(l)
				return w.WriteByte('\n')
			},
		}
	}).SetParallelism(1)
	stream.Discard(writer).SetParallelism(1)
}

// ReadStatEvents reads the CSV file path: a header row naming the columns,
// then one event a line. A missing column or an unparsable number is an
// error naming the file, the line and the column.
func ReadStatEvents(path, key, ts, value string) ([]StatEvent, error) {
	var events []StatEvent
	err := readCSVLines(path, []string{key, ts, value}, func(fields []string, line string, col func(i int, err error) error) error {
		t, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return col(1, err)
		}
		v, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return col(2, err)
		}
		events = append(events, StatEvent{Key: fields[0], Time: t, Value: v, Line: line})
		return nil
	})
	return events, err
}
