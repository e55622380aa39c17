package streaming

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// Options configures a run of an example.
type Options struct {
	// Stream configures the job (parallelism, memory, execution mode, spill
	// directory).
	Stream stream.Options
	// Stdout receives printed results.
	Stdout io.Writer
	// Stderr, when set, receives what a job reports of itself when it
	// ends (weir nexmark's throughput line).
	Stderr io.Writer
	// Configure, when set, adjusts the job's Env before the program is
	// built: the command line enables checkpointing through it.
	Configure func(*stream.Env)
	// Notice, when set, receives what the file sinks did that a user must
	// know (sink.WithNotices): committed parts removed on a restore.
	Notice func(msg string)
}

// newEnv returns the Env of a run: stream.New(o.Stream), configured.
func (o Options) newEnv() *stream.Env {
	env := stream.New(o.Stream)
	if o.Configure != nil {
		o.Configure(env)
	}
	return env
}

// WordCount is one word and its count, printed as Flink prints a
// Tuple2<String, Integer>: (word,count).
type WordCount struct {
	Word  string
	Count int
}

// WordCountParams are the inputs and output of RunWordCount.
type WordCountParams struct {
	// Input is a text file, a directory of them or a glob; "" counts
	// WordCountText.
	Input string
	// Monitor, when positive, watches the directory Input at this interval
	// and counts the lines of every new file (an unbounded job).
	Monitor time.Duration
	// Output is a directory to write part files to; "" prints to
	// Options.Stdout.
	Output string
}

// RunWordCount is Flink's streaming WordCount: Tokenize every line, key by
// word and sum the counts. In STREAMING mode every running count is
// emitted, in BATCH mode only the final ones.
func RunWordCount(ctx context.Context, o Options, p WordCountParams) error {
	env := o.newEnv()
	var lines stream.DataStream[string]
	switch {
	case p.Monitor > 0:
		if p.Input == "" {
			return errors.New("examples/streaming: wordcount: --monitor needs an input directory")
		}
		src, err := source.MonitorDirectory(source.Text(), p.Input, p.Monitor)
		if err != nil {
			return fmt.Errorf("examples/streaming: wordcount: input %s: %w", p.Input, err)
		}
		lines = stream.FromSource(env, src, watermark.NoWatermarks[string](), "file-input")
	case p.Input != "":
		src, err := source.Files(source.Text(), p.Input)
		if err != nil {
			return fmt.Errorf("examples/streaming: wordcount: input %s: %w", p.Input, err)
		}
		lines = stream.FromSource(env, src, watermark.NoWatermarks[string](), "file-input")
	default:
		lines = stream.FromSlice(env, WordCountText)
	}
	counts := WordCountProgram(lines)
	if p.Output != "" {
		str := sink.ToString[WordCount]()
		stream.SinkTo(counts, sink.Rows(p.Output, func(dst []byte, v WordCount) []byte { return append(str(dst, v), '\n') }))
	} else {
		stream.PrintTo(counts, o.Stdout, "")
	}
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: wordcount: %w", err)
	}
	return nil
}

// WordCountProgram counts the words of lines: a running count per word
// (STREAMING) or the final counts (BATCH).
func WordCountProgram(lines stream.DataStream[string]) stream.DataStream[WordCount] {
	words := stream.FlatMap(lines, func(line string, emit func(WordCount)) {
		Tokenize(line, func(w string) { emit(WordCount{Word: w, Count: 1}) })
	})
	return stream.Sum(stream.KeyBy(words, func(w WordCount) string { return w.Word }),
		func(w WordCount) int { return w.Count }, func(w *WordCount, n int) { w.Count = n })
}

// Tokenize calls emit with every word of line as Flink's WordCount
// Tokenizer finds them: line.toLowerCase().split("\\W+") without empty
// tokens, a word character being an ASCII letter, digit or '_'.
// Lowercasing is Unicode's, as Java's: the Kelvin sign lowers to the word
// character 'k', and 'İ' to "i\u0307", a word character and a separator.
func Tokenize(line string, emit func(word string)) {
	if strings.Contains(line, "İ") {
		line = strings.ReplaceAll(line, "İ", "i\u0307")
	}
	lower := strings.ToLower(line)
	start := -1
	for i := 0; i < len(lower); i++ {
		if isWordByte(lower[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(lower[start:i])
			start = -1
		}
	}
	if start >= 0 {
		emit(lower[start:])
	}
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
