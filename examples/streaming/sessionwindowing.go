package streaming

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

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
// prints as its first element with the summed count.
func RunSessionWindowing(ctx context.Context, o Options, p SessionWindowingParams) error {
	events := SessionWindowingInput
	if p.Input != "" {
		var err error
		if events, err = ReadSessionEvents(p.Input); err != nil {
			return err
		}
	}
	env := o.newEnv()
	src := stream.FromSource(env, source.FromSlice(events),
		watermark.ForMonotonousTimestamps[SessionEvent]().WithTimestampAssigner(func(e SessionEvent, _ int64) int64 { return e.Timestamp }),
		"session-events").SetParallelism(1)
	sessions, err := window.EventTimeSessionWindows(p.Gap)
	if err != nil {
		return fmt.Errorf("examples/streaming: session windowing: %w", err)
	}
	ws := stream.Window(stream.KeyBy(src, func(e SessionEvent) string { return e.Key }), window.Assigner[window.TimeWindow](sessions))
	sums := stream.WindowSum(ws, func(e SessionEvent) int { return e.Count }, func(e *SessionEvent, n int) { e.Count = n })
	emit(sums, o, p.Output)
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: session windowing: %w", err)
	}
	return nil
}

// ReadSessionEvents reads a CSV of session events with the header
// key,timestamp,count. A malformed line is an error naming the file, the
// line and the column.
func ReadSessionEvents(path string) ([]SessionEvent, error) {
	var events []SessionEvent
	err := readCSVLines(path, []string{"key", "timestamp", "count"}, func(fields []string, _ string, col func(i int, err error) error) error {
		ts, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return col(1, err)
		}
		n, err := strconv.Atoi(fields[2])
		if err != nil {
			return col(2, err)
		}
		events = append(events, SessionEvent{Key: fields[0], Timestamp: ts, Count: n})
		return nil
	})
	return events, err
}

// readCSVLines reads path, a CSV file whose header names the columns in order
// (found by name, in any order),
// and calls row with every data line's fields of the header's columns and
// the line itself.
// Fields are comma-separated without quoting; blank lines are skipped.
// col makes the error of the i-th column of header on the current line.
func readCSVLines(path string, header []string, row func(fields []string, line string, col func(i int, err error) error) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("examples/streaming: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var pos []int
	fields := make([]string, len(header))
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		cells := strings.Split(text, ",")
		if pos == nil {
			pos = make([]int, len(header))
			for i, h := range header {
				pos[i] = -1
				for j, c := range cells {
					if strings.TrimSpace(c) == h {
						pos[i] = j
					}
				}
				if pos[i] < 0 {
					return fmt.Errorf("examples/streaming: %s:%d: the header has no column %q", path, line, h)
				}
			}
			continue
		}
		for i, p := range pos {
			if p >= len(cells) {
				return fmt.Errorf("examples/streaming: %s:%d: column %q (%d) is missing: %d fields", path, line, header[i], p+1, len(cells))
			}
			fields[i] = strings.TrimSpace(cells[p])
		}
		if err := row(fields, text, func(i int, err error) error {
			return fmt.Errorf("examples/streaming: %s:%d: column %q (%d): %w", path, line, header[i], pos[i]+1, err)
		}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("examples/streaming: %s: %w", path, err)
	}
	if pos == nil {
		return fmt.Errorf("examples/streaming: %s: no header line", path)
	}
	return nil
}
