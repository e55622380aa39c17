package source_test

import (
	"context"
	"fmt"
	"io"

	"github.com/weirdata/weir/stream/source"
)

// A runtime creates one enumerator and a reader per subtask, reads batches
// until io.EOF, and at a checkpoint keeps the readers' positions and the
// enumerator's snapshot; a restored job starts from them.
func Example() {
	src, err := source.Sequence(1, 10, source.BatchSize(4))
	if err != nil {
		panic(err)
	}
	en, _ := src.Enumerator(2, nil)
	r, _ := src.Reader(source.ReaderContext{Subtask: 0, Parallelism: 2, Splits: en})
	b, _ := r.Next(context.Background())
	fmt.Println(b.Split, b.First, b.Records)

	// Checkpoint, then restore into a new reader.
	positions, pending := r.Positions(), en.Snapshot()
	r.Close()
	en2, _ := src.Enumerator(2, &pending)
	r2, _ := src.Reader(source.ReaderContext{Subtask: 0, Parallelism: 2, Splits: en2})
	defer r2.Close()
	r2.AddSplits(positions)
	for {
		b, err := r2.Next(context.Background())
		if err == io.EOF {
			break
		}
		if b.End {
			fmt.Println(b.Split, "ended after", b.First)
			continue
		}
		fmt.Println(b.Split, b.First, b.Records)
	}
	// Output:
	// sequence 0 0 [1 2 3 4]
	// sequence 0 4 [5]
	// sequence 0 ended after 5
	// sequence 1 0 [6 7 8 9]
	// sequence 1 4 [10]
	// sequence 1 ended after 5
}
