package streaming

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// WordWithCount is the result of Flink's SocketWindowWordCount, printed as
// its toString: "word : count".
type WordWithCount struct {
	Word  string
	Count int64
}

// String is Flink's WordWithCount.toString.
func (w WordWithCount) String() string { return w.Word + " : " + strconv.FormatInt(w.Count, 10) }

// SocketWordCountParams configure RunSocketWindowWordCount.
type SocketWordCountParams struct {
	Host string
	Port int
	// Window is the processing-time tumbling window (Flink's: 5 s).
	Window time.Duration
	// Output is a directory to write the counts to as part files; ""
	// prints them to o.Stdout.
	Output string
}

// RunSocketWindowWordCount is Flink's SocketWindowWordCount: the lines a
// TCP server sends, split at every whitespace character as Java's
// split("\\s") does, keyed by word and counted in tumbling processing-time
// windows of p.Window, printed "word : count" as each window ends. The job
// runs until the server closes the connection or ctx ends; a server that
// cannot be reached is an error at the start naming host:port.
func RunSocketWindowWordCount(ctx context.Context, o Options, p SocketWordCountParams) error {
	src, err := source.Socket(p.Host, p.Port, "\n")
	if err != nil {
		return fmt.Errorf("examples/streaming: socket window wordcount: %w", err)
	}
	tumbling := window.TumblingProcessingTimeWindows(p.Window)
	if err := tumbling.Err(); err != nil {
		return fmt.Errorf("examples/streaming: socket window wordcount: %w", err)
	}
	env := o.newEnv()
	text := stream.FromSource(env, src, watermark.NoWatermarks[string](), "socket-input")
	words := stream.FlatMap(text, func(line string, emit func(WordWithCount)) {
		JavaSplitWhitespace(line, func(w string) { emit(WordWithCount{Word: w, Count: 1}) })
	})
	counts := stream.Window(stream.KeyBy(words, func(w WordWithCount) string { return w.Word }), window.Assigner[window.TimeWindow](tumbling)).
		Reduce(func(a, b WordWithCount) WordWithCount { return WordWithCount{Word: a.Word, Count: a.Count + b.Count} })
	emit(counts, o, p.Output)
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: socket window wordcount: %w", err)
	}
	return nil
}

// JavaSplitWhitespace calls emit with the parts of Java's
// line.split("\\s"): cut at every one of " \t\n\x0B\f\r", empty parts kept
// except trailing ones ("" gives one empty part).
func JavaSplitWhitespace(line string, emit func(string)) {
	if line == "" {
		emit("")
		return
	}
	var parts []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ', '\t', '\n', '\x0b', '\f', '\r':
			parts = append(parts, line[start:i])
			start = i + 1
		}
	}
	parts = append(parts, line[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	for _, p := range parts {
		emit(p)
	}
}
