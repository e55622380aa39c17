package streaming

import (
	"context"
	"fmt"
	"time"

	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// SessionEvent is one element of Flink's SessionWindowing, a
// Tuple3<String, Long, Integer> printed (key,timestamp,count).
type SessionEvent struct {
	Key       string
	Timestamp int64
	Count     int
}

// SessionWindowingInput is the input of Flink's SessionWindowing.
var SessionWindowingInput = []SessionEvent{
	{"a", 1, 1}, {"b", 1, 1}, {"b", 3, 1}, {"b", 5, 1}, {"c", 6, 1}, {"a", 10, 1}, {"c", 11, 1},
}

// SessionWindowingParams are the inputs and output of RunSessionWindowing.
type SessionWindowingParams struct {
	// Input is a CSV file with the header key,timestamp,count (timestamps
	// in milliseconds); "" reads SessionWindowingInput.
	Input string
	// Gap is the session gap (Flink's: 3ms).
	Gap time.Duration
	// Output is a directory to write part files to; "" prints to
	// Options.Stdout.
	Output string
}

// RunSessionWindowing is Flink's SessionWindowing: the events, in order and
// with ascending timestamps (watermark: the latest timestamp - 1), keyed by
// key into event-time sessions of p.Gap, summing the count. Every session
// prints as its first element with the summed count. An input file is read
// as one stream through formats/csv, in constant memory; a malformed record,
// or a timestamp whose session would end past the int64 range, is an error
// naming the file, the line and the column.
func RunSessionWindowing(ctx context.Context, o Options, p SessionWindowingParams) error {
	sessions := window.EventTimeSessionWindows(p.Gap)
	if err := sessions.Err(); err != nil {
		return fmt.Errorf("examples/streaming: session windowing: %w", err)
	}
	env := o.newEnv()
	strategy := watermark.ForMonotonousTimestamps[SessionEvent]().WithTimestampAssigner(func(e SessionEvent, _ int64) int64 { return e.Timestamp })
	var src stream.DataStream[SessionEvent]
	if p.Input == "" {
		src = stream.FromSource(env, source.FromSlice(SessionWindowingInput), strategy, "session-events").SetParallelism(1)
	} else {
		opts := csv.Options{TrimSpace: true}
		if err := checkInput[sessionRow](p.Input, opts); err != nil {
			return fmt.Errorf("examples/streaming: session windowing: %w", err)
		}
		files, err := source.Files(source.CSV[sessionRow](opts), p.Input)
		if err != nil {
			return fmt.Errorf("examples/streaming: session windowing: %w", err)
		}
		lo, hi := timeRange(sessions)
		spec := fmt.Sprintf("session:%v", p.Gap)
		rows := stream.FromSource(env, files, watermark.ForMonotonousTimestamps[sessionRow]().WithTimestampAssignerErr(func(r sessionRow, _ int64) (int64, error) {
			if r.Timestamp < lo || r.Timestamp > hi {
				return 0, badTime(p.Input, r.Offset, "timestamp", r.Timestamp, spec, lo, hi)
			}
			return r.Timestamp, nil
		}), "session-events").SetParallelism(1)
		src = stream.Map(rows, func(r sessionRow) SessionEvent {
			return SessionEvent{Key: r.Key, Timestamp: r.Timestamp, Count: r.Count}
		})
	}
	ws := stream.Window(stream.KeyBy(src, func(e SessionEvent) string { return e.Key }), window.Assigner[window.TimeWindow](sessions))
	sums := stream.WindowSum(ws, func(e SessionEvent) int { return e.Count }, func(e *SessionEvent, n int) { e.Count = n })
	emit(sums, o, p.Output)
	created := newDirs(p.Output)
	if _, err := env.Execute(ctx); err != nil {
		created.removeEmpty()
		return fmt.Errorf("examples/streaming: session windowing: %w", inputCause(err))
	}
	return nil
}

// sessionRow is a record of a session-windowing input file, with the byte
// offset where it starts (for errors naming its line).
type sessionRow struct {
	Key       string
	Timestamp int64
	Count     int
	Offset    int64 `weir:",offset"`
}
