package examples

import (
	"context"
	"io"
	"testing"

	"github.com/weirdata/weir/dataset"
)

// BenchmarkTokenize measures the tokenizer alone over generated lines.
func BenchmarkTokenize(b *testing.B) {
	lines := wordCountLines(9, 4096)
	var size int64
	for _, l := range lines {
		size += int64(len(l))
	}
	var tk tokenizer
	n := 0
	emit := func(WordCount) { n++ }
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			tk.split(l, emit)
		}
	}
}

// BenchmarkWordCountFile runs `weir run wordcount` on a generated text file.
func BenchmarkWordCountFile(b *testing.B) {
	lines := wordCountLines(10, 200_000)
	var size int64
	for _, l := range lines {
		size += int64(len(l)) + 1
	}
	path := writeFile(b, "input.txt", lines)
	o := Options{Dataset: dataset.Options{TmpDir: b.TempDir(), Memory: 64 << 20}, Stdout: io.Discard}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := RunWordCount(context.Background(), o, path); err != nil {
			b.Fatal(err)
		}
	}
}
