package stream_test

import (
	"context"
	"strings"

	"github.com/weirdata/weir/stream"
)

type wordCount struct {
	Word  string
	Count int
}

// A streaming word count: running counts per word, printed as Flink
// prints tuples (no subtask prefix at parallelism 1).
func Example() {
	env := stream.New(stream.Options{Parallelism: 1})
	lines := stream.FromSlice(env, []string{"to be or", "not to be"})
	words := stream.FlatMap(lines, func(line string, emit func(wordCount)) {
		for _, w := range strings.Fields(line) {
			emit(wordCount{w, 1})
		}
	})
	counts := stream.Sum(stream.KeyBy(words, func(w wordCount) string { return w.Word }),
		func(w wordCount) int { return w.Count },
		func(w *wordCount, n int) { w.Count = n })
	stream.Print(counts)
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// (to,1)
	// (be,1)
	// (or,1)
	// (not,1)
	// (to,2)
	// (be,2)
}
