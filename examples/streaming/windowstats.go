package streaming

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// StatEvent is one record of a window-stats input: its key, event time
// (epoch milliseconds) and value, and the byte offset where it starts in the
// file (for the late output and for errors naming its line).
type StatEvent struct {
	Key    string
	Time   int64
	Value  float64
	Offset int64 `weir:",offset"`
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
	var a window.Assigner[window.TimeWindow]
	switch {
	case kind == "tumbling" && len(ds) == 1:
		a = window.TumblingEventTimeWindows(ds[0])
	case kind == "sliding" && len(ds) == 2:
		a = window.SlidingEventTimeWindows(ds[0], ds[1])
	case kind == "session" && len(ds) == 1:
		a = window.EventTimeSessionWindows(ds[0])
	}
	if a != nil {
		return a, window.Err(a)
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

// The aggregates of window-stats, each with the accumulator it needs (a
// window's state holds one per key): sum, min and max a float64, count an
// int64, avg both. The results print as appendCount and appendFloat do.

type sumAgg struct{}

func (sumAgg) CreateAccumulator() float64              { return 0 }
func (sumAgg) Add(e StatEvent, a float64) float64      { return a + e.Value }
func (sumAgg) GetResult(a float64) float64             { return a }
func (sumAgg) Merge(a, b float64) float64              { return a + b }
func (sumAgg) appendResult(b []byte, a float64) []byte { return appendFloat(b, a) }
func (minAgg) CreateAccumulator() float64              { return math.Inf(1) }
func (minAgg) Add(e StatEvent, a float64) float64      { return min(a, e.Value) }
func (minAgg) GetResult(a float64) float64             { return a }
func (minAgg) Merge(a, b float64) float64              { return min(a, b) }
func (minAgg) appendResult(b []byte, a float64) []byte { return appendFloat(b, a) }
func (maxAgg) CreateAccumulator() float64              { return math.Inf(-1) }
func (maxAgg) Add(e StatEvent, a float64) float64      { return max(a, e.Value) }
func (maxAgg) GetResult(a float64) float64             { return a }
func (maxAgg) Merge(a, b float64) float64              { return max(a, b) }
func (maxAgg) appendResult(b []byte, a float64) []byte { return appendFloat(b, a) }
func (countAgg) CreateAccumulator() int64              { return 0 }
func (countAgg) Add(_ StatEvent, a int64) int64        { return a + 1 }
func (countAgg) GetResult(a int64) int64               { return a }
func (countAgg) Merge(a, b int64) int64                { return a + b }
func (countAgg) appendResult(b []byte, a int64) []byte { return strconv.AppendInt(b, a, 10) }
func (avgAgg) CreateAccumulator() avgAcc               { return avgAcc{} }
func (avgAgg) Add(e StatEvent, a avgAcc) avgAcc        { return avgAcc{a.sum + e.Value, a.n + 1} }
func (avgAgg) GetResult(a avgAcc) avgAcc               { return a }
func (avgAgg) Merge(a, b avgAcc) avgAcc                { return avgAcc{a.sum + b.sum, a.n + b.n} }
func (avgAgg) appendResult(b []byte, a avgAcc) []byte  { return appendFloat(b, a.sum/float64(a.n)) }

type (
	minAgg   struct{}
	maxAgg   struct{}
	countAgg struct{}
	avgAgg   struct{}
	avgAcc   struct {
		sum float64
		n   int64
	}
)

// statAggregate is an aggregate of window-stats: its function and how its
// result prints.
type statAggregate[A any] interface {
	state.AggregateFunction[StatEvent, A, A]
	appendResult(b []byte, a A) []byte
}

// appendFloat appends v as the shortest decimal that reads back as it.
func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'f', -1, 64) }

// firing is a firing of window-stats: a key's window and its aggregate.
type firing[A any] struct {
	key        string
	start, end int64
	acc        A
}

// statFirings aggregates the windows of ws with agg and writes a line
// "key,window_start,window_end,value" per firing (counted by the metric
// firings of the window operator): to part files under
// output, or when printed is set to it from one subtask as the firings
// arrive (so the lines carry no "N> " prefix and need no lock). The lines
// are formatted where they are written, into the writer's buffer. It returns
// the late events (the firings' side output of lateTag).
func statFirings[A any](ws stream.WindowedStream[StatEvent, string, window.TimeWindow], agg statAggregate[A], lateTag stream.OutputTag[StatEvent], printed *bufio.Writer, output string) stream.DataStream[StatEvent] {
	firings := stream.WindowAggregateProcess(ws, agg, func() stream.ProcessWindowFunction[string, window.TimeWindow, A, firing[A]] {
		var fired *metrics.Counter
		return stream.ProcessWindowFunction[string, window.TimeWindow, A, firing[A]]{
			Open: func(rc *stream.KeyedRuntimeContext[string]) error {
				fired = rc.MetricGroup().Counter("firings")
				return nil
			},
			Process: func(key string, ctx *stream.WindowContext[string, window.TimeWindow], accs []A, out stream.Collector[firing[A]]) error {
				w := ctx.Window()
				fired.IncBy(int64(len(accs)))
				for _, a := range accs {
					out.Collect(firing[A]{key: key, start: w.Start, end: w.End, acc: a})
				}
				return nil
			},
		}
	})
	line := func(b []byte, f firing[A]) []byte {
		b = appendCSVField(b, f.key)
		b = append(b, ',')
		b = strconv.AppendInt(b, f.start, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, f.end, 10)
		b = append(b, ',')
		return append(agg.appendResult(b, f.acc), '\n')
	}
	if printed == nil {
		stream.SinkTo(firings, sink.Rows(output, line))
	} else {
		written := stream.Process(firings, func() stream.ProcessFunction[firing[A], struct{}] {
			var b []byte
			return stream.ProcessFunction[firing[A], struct{}]{
				ProcessElement: func(f firing[A], _ *stream.Context, _ stream.Collector[struct{}]) error {
					b = line(b[:0], f)
					_, err := printed.Write(b)
					return err
				},
			}
		}).SetParallelism(1)
		stream.Discard(written).SetParallelism(1)
	}
	return stream.GetSideOutput(firings, lateTag)
}

// RunWindowStats aggregates the values of a CSV of events per key and
// event-time window. The file is read in order as one stream (a source of
// parallelism 1, through formats/csv: RFC 4180 quoting, a byte-order mark
// skipped), in constant memory; under checkpoints its position is the byte
// offset of the next record, so a restore resumes mid-file. After every
// record the watermark is the largest timestamp seen - OutOfOrderness - 1,
// so which events are late does not depend on timing or parallelism; it is
// sent downstream ahead of the first record it can change and every 4,096
// records (see heldWatermarks). Every firing (late firings included) gives a
// line "key,window_start,window_end,value"; late events go to LateOutput as
// their input records. Printed lines are written as the windows fire by one
// subtask (buffered, so Stdout gets them in blocks); the output directories
// get part files through the FileSink (see emit), exactly once under
// checkpoints. A record whose value or time does not parse, whose time is
// math.MinInt64 (weir's mark of no timestamp) or whose window would reach past
// the int64 range fails the job with an error naming the file, the line and
// the column.
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
	opts := csv.Options{Columns: map[string]string{"Key": p.Key, "Time": p.Time, "Value": p.Value}}
	if err := checkInput[StatEvent](p.Input, opts); err != nil {
		return fmt.Errorf("examples/streaming: window stats: %w", err)
	}
	src, err := source.Files(source.CSV[StatEvent](opts), p.Input)
	if err != nil {
		return fmt.Errorf("examples/streaming: window stats: %w", err)
	}
	lo, hi := timeRange(assigner)
	bound := p.OutOfOrderness.Milliseconds()
	strategy := watermark.ForGenerator(func(watermark.Context) watermark.Generator[StatEvent] {
		return newHeldWatermarks[StatEvent](bound)
	}).WithTimestampAssignerErr(func(e StatEvent, _ int64) (int64, error) {
		if e.Time < lo || e.Time > hi {
			return 0, badTime(p.Input, e.Offset, p.Time, e.Time, p.Window, lo, hi)
		}
		return e.Time, nil
	})
	env := o.newEnv()
	events := stream.FromSource(env, src, strategy, "csv-events").SetParallelism(1)
	lateTag := stream.NewOutputTag[StatEvent]("late")
	ws := stream.Window(stream.KeyBy(events, func(e StatEvent) string { return e.Key }), assigner).
		AllowedLateness(p.AllowedLateness).SideOutputLateData(lateTag)
	var printed *bufio.Writer
	if p.Output == "" {
		printed = bufio.NewWriter(o.Stdout)
	}
	var late stream.DataStream[StatEvent]
	switch p.Aggregate {
	case "count":
		late = statFirings(ws, countAgg{}, lateTag, printed, p.Output)
	case "min":
		late = statFirings(ws, minAgg{}, lateTag, printed, p.Output)
	case "max":
		late = statFirings(ws, maxAgg{}, lateTag, printed, p.Output)
	case "avg":
		late = statFirings(ws, avgAgg{}, lateTag, printed, p.Output)
	default:
		late = statFirings(ws, sumAgg{}, lateTag, printed, p.Output)
	}
	if p.LateOutput != "" {
		in, err := os.Open(p.Input)
		if err != nil {
			return fmt.Errorf("examples/streaming: window stats: %w", err)
		}
		defer in.Close()
		records := stream.Process(late, func() stream.ProcessFunction[StatEvent, string] {
			return stream.ProcessFunction[StatEvent, string]{
				ProcessElement: func(e StatEvent, _ *stream.Context, out stream.Collector[string]) error {
					rec, err := recordAt(in, e.Offset)
					if err != nil {
						return err
					}
					out.Collect(rec)
					return nil
				},
			}
		})
		emit(records, o, p.LateOutput)
	}
	created := newDirs(p.Output, p.LateOutput)
	if _, err := env.Execute(ctx); err != nil {
		created.removeEmpty()
		return fmt.Errorf("examples/streaming: window stats: %w", inputCause(err))
	}
	if printed != nil {
		if err := printed.Flush(); err != nil {
			return fmt.Errorf("examples/streaming: window stats: %w", err)
		}
	}
	return nil
}

// appendCSVField appends s as a CSV field (RFC 4180): quoted, with its
// quotes doubled, when it holds a comma, a quote or a line break, so that
// a key read from a quoted field is written back as one field.
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := range len(s) {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
