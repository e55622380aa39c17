package sink_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/weirdata/weir/stream/sink"
)

type wordCount struct {
	Word  string
	Count int
}

// Subtask 1 of 2 of WordCount's print sink.
func ExamplePrint() {
	p := sink.NewPrint[wordCount]("")
	w, _ := p.Writer(1, 2)
	w.Write([]wordCount{{"to", 1}, {"be", 2}})
	// Output:
	// 2> (to,1)
	// 2> (be,2)
}

// A checkpoint prepares the in-progress part; its commit publishes it. The
// pending file's name ends in the writer's nonce, 16 hex digits.
func ExampleFileSink() {
	dir, _ := os.MkdirTemp("", "sink")
	defer os.RemoveAll(dir)
	s := sink.Text(dir, sink.WithOutputFileConfig(sink.OutputFileConfig{PartSuffix: ".txt"}))
	w, _ := s.Writer(0, 1)
	w.Write([]string{"hello", "world"})
	committables, _ := w.PrepareCommit(1)
	for _, c := range committables {
		pending := filepath.Base(c.Pending)
		fmt.Println(pending[:len(pending)-17], "->", filepath.Base(c.Final))
	}
	_ = w.Snapshot() // the checkpoint's state of the writer
	if err := sink.Commit(committables); err != nil {
		fmt.Println(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "part-0-0.txt"))
	fmt.Print(string(b))
	// Output:
	// .part-0-0.txt.pending -> part-0-0.txt
	// hello
	// world
}
