package streaming

import (
	"context"
	"fmt"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// SideOutputParams are the inputs and output of RunSideOutput.
type SideOutputParams struct {
	// Input is a text file, a directory of them or a glob; "" reads
	// WordCountText.
	Input string
	// Window is the tumbling window (Flink's: 5 s).
	Window time.Duration
	// Output and RejectedOutput are directories to write the counts and
	// the rejected words to as part files (Flink's --output and
	// --rejected-words-output); "" prints them to o.Stdout.
	Output, RejectedOutput string
}

// rejectedWords is the side output of the words longer than five letters.
var rejectedWords = stream.NewOutputTag[string]("rejected")

// RunSideOutput is Flink's SideOutputExample: every line gets its ingestion
// time (the wall clock when the source reads it, ascending watermarks);
// Tokenize splits it, words longer than five letters go to a side output,
// printed "rejected: word", and the others are keyed by word and summed in
// tumbling event-time windows of p.Window, printed "(word,count)" when a
// window ends (every window fires at the end of a bounded input).
func RunSideOutput(ctx context.Context, o Options, p SideOutputParams) error {
	env := o.newEnv()
	ingestion := watermark.ForMonotonousTimestamps[string]().
		WithTimestampAssigner(func(string, int64) int64 { return time.Now().UnixMilli() })
	var src source.Source[string]
	if p.Input != "" {
		var err error
		if src, err = source.Files(source.Text(), p.Input); err != nil {
			return fmt.Errorf("examples/streaming: side output: input %s: %w", p.Input, err)
		}
	} else {
		src = source.FromSlice(WordCountText)
	}
	lines := stream.FromSource(env, src, ingestion, "text-input")
	tokenized := stream.Process(lines, func() stream.ProcessFunction[string, WordCount] {
		return stream.ProcessFunction[string, WordCount]{
			ProcessElement: func(line string, ctx *stream.Context, out stream.Collector[WordCount]) error {
				Tokenize(line, func(w string) {
					if len(w) > 5 {
						stream.Output(ctx, rejectedWords, w)
					} else {
						out.Collect(WordCount{Word: w, Count: 1})
					}
				})
				return nil
			},
		}
	})
	rejected := stream.Map(stream.GetSideOutput(tokenized, rejectedWords), func(w string) string { return "rejected: " + w })
	tumbling := window.TumblingEventTimeWindows(p.Window)
	if err := tumbling.Err(); err != nil {
		return fmt.Errorf("examples/streaming: side output: %w", err)
	}
	ws := stream.Window(stream.KeyBy(tokenized, func(w WordCount) string { return w.Word }), window.Assigner[window.TimeWindow](tumbling))
	counts := stream.WindowSum(ws, func(w WordCount) int { return w.Count }, func(w *WordCount, n int) { w.Count = n })
	emit(counts, o, p.Output)
	emit(rejected, o, p.RejectedOutput)
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: side output: %w", err)
	}
	return nil
}
