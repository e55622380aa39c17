package streaming

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// WindowWordCountParams are the inputs and output of RunWindowWordCount.
type WindowWordCountParams struct {
	// Input is a text file, a directory of them or a glob; "" counts
	// WordCountText.
	Input string
	// Window and Slide are the count window: the last Window occurrences
	// of a word, every Slide occurrences.
	Window, Slide int64
	// Output is a directory to write part files to; "" prints to
	// Options.Stdout.
	Output string
}

// RunWindowWordCount is Flink's WindowWordCount: Tokenize every line, key
// by word and sum the counts of count windows (countWindow(window, slide)):
// every Slide occurrences of a word print "(word,n)", n the occurrences
// among its last Window.
func RunWindowWordCount(ctx context.Context, o Options, p WindowWordCountParams) error {
	env := o.newEnv()
	var lines stream.DataStream[string]
	if p.Input != "" {
		src, err := source.Files(source.Text(), p.Input)
		if err != nil {
			return fmt.Errorf("examples/streaming: window wordcount: input %s: %w", p.Input, err)
		}
		lines = stream.FromSource(env, src, watermark.NoWatermarks[string](), "file-input")
	} else {
		lines = stream.FromSlice(env, WordCountText)
	}
	words := stream.FlatMap(lines, func(line string, emit func(WordCount)) {
		Tokenize(line, func(w string) { emit(WordCount{Word: w, Count: 1}) })
	})
	ws := stream.CountWindowSlide(stream.KeyBy(words, func(w WordCount) string { return w.Word }), p.Window, p.Slide)
	counts := stream.WindowSum(ws, func(w WordCount) int { return w.Count }, func(w *WordCount, n int) { w.Count = n })
	emit(counts, o, p.Output)
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: window wordcount: %w", err)
	}
	return nil
}
