package stream

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

type wordCount struct {
	Word  string
	Count int
}

var nonWord = regexp.MustCompile(`\W+`)

// tokenize is the tokenizer of Flink's WordCount example: lower-case, split
// on \W+, drop empty tokens.
func tokenize(line string, emit func(wordCount)) {
	for _, w := range nonWord.Split(strings.ToLower(line), -1) {
		if w != "" {
			emit(wordCount{w, 1})
		}
	}
}

func wordCountLines(t *testing.T) []string {
	b, err := os.ReadFile("testdata/wordcount.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// TestWordCountStreaming runs Flink's streaming WordCount over its
// WordCountData text: the running counts form, per word with final count c,
// the multiset (w,1)...(w,c), checked against a naive count (and a few of
// Flink's COUNTS), at several parallelisms and batch sizes.
func TestWordCountStreaming(t *testing.T) {
	lines := wordCountLines(t)
	final := map[string]int{}
	for _, l := range lines {
		tokenize(l, func(wc wordCount) { final[wc.Word]++ })
	}
	for w, c := range map[string]int{"und": 29, "der": 29, "die": 22, "ich": 14, "er": 13, "mephistopheles": 9} {
		if final[w] != c {
			t.Fatalf("oracle: %s counted %d, Flink's COUNTS say %d", w, final[w], c)
		}
	}
	var want []string
	for w, c := range final {
		for i := 1; i <= c; i++ {
			want = append(want, fmt.Sprintf("%s,%d", w, i))
		}
	}
	slices.Sort(want)
	for _, p := range []int{1, 2, 3} {
		for _, batch := range []int{1, 7, 0} {
			t.Run(fmt.Sprint("p", p, "batch", batch), func(t *testing.T) {
				env := New(Options{Parallelism: p, BatchSize: batch})
				words := FlatMap(FromSlice(env, lines), tokenize)
				counts := Sum(KeyBy(words, func(w wordCount) string { return w.Word }),
					func(w wordCount) int { return w.Count }, func(w *wordCount, n int) { w.Count = n })
				got := Collect(counts)
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				var have []string
				last := map[string]int{}
				for _, wc := range got.Values() {
					if wc.Count != last[wc.Word]+1 {
						t.Fatalf("%s: count %d after %d: a key's running counts must rise by one", wc.Word, wc.Count, last[wc.Word])
					}
					last[wc.Word] = wc.Count
					have = append(have, fmt.Sprintf("%s,%d", wc.Word, wc.Count))
				}
				slices.Sort(have)
				if !slices.Equal(have, want) {
					t.Fatalf("got %d running counts, want %d", len(have), len(want))
				}
			})
		}
	}
}
