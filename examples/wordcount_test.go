package examples

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// nonWord is Java's \W: RE2's \W is ASCII-only too.
var nonWord = regexp.MustCompile(`\W+`)

// oracleTokens is Flink's tokenizer written the obvious way:
// line.toLowerCase().split("\\W+"), empty tokens dropped. Java lowers 'İ' to
// "i\u0307", Go to "i", hence the replacement.
func oracleTokens(line string) []string {
	lower := strings.ToLower(strings.ReplaceAll(line, "\u0130", "i\u0307"))
	var out []string
	for _, w := range nonWord.Split(lower, -1) {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// oracleWordCount counts words with a map and formats the sorted result.
func oracleWordCount(lines []string) []string {
	counts := map[string]int64{}
	for _, l := range lines {
		for _, w := range oracleTokens(l) {
			counts[w]++
		}
	}
	var out []string
	for _, w := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, w+" "+strconv.FormatInt(counts[w], 10))
	}
	return out
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   ,,, --", nil},
		{"To be, or not to be,--that is the question:--", []string{"to", "be", "or", "not", "to", "be", "that", "is", "the", "question"}},
		{"wish'd O'er", []string{"wish", "d", "o", "er"}},
		{"snake_case CamelCase x42 42", []string{"snake_case", "camelcase", "x42", "42"}},
		{"café naïve", []string{"caf", "na", "ve"}}, // non-ASCII letters are \W in Java
		{"\u212Aelvin", []string{"kelvin"}},         // the Kelvin sign lowers to ASCII 'k'
		{"\u0130STANBUL", []string{"i", "stanbul"}}, // Java: "i\u0307stanbul"
		{"ABC\xffdef", []string{"abc", "def"}},      // invalid UTF-8 separates
		{"tab\tand\r\nnewline", []string{"tab", "and", "newline"}},
	} {
		got := Tokenize(tc.line)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.line, got, tc.want)
		}
		if oracle := oracleTokens(tc.line); !slices.Equal(got, oracle) {
			t.Errorf("Tokenize(%q) = %q, oracle %q", tc.line, got, oracle)
		}
	}
}

func TestTokenizeMatchesOracle(t *testing.T) {
	for _, l := range wordCountLines(7, 2000) {
		if got, want := Tokenize(l), oracleTokens(l); !slices.Equal(got, want) {
			t.Fatalf("Tokenize(%q) = %q, oracle %q", l, got, want)
		}
	}
}

// TestTokenizerAllocs proves that tokenizing allocates nothing per line in the
// steady state (the slab's chunks are amortized over 64 KiB of words).
func TestTokenizerAllocs(t *testing.T) {
	lines := wordCountLines(8, 256)
	var tk tokenizer
	n := 0
	emit := func(WordCount) { n++ }
	allocs := testing.AllocsPerRun(20, func() {
		for _, l := range lines {
			tk.split(l, emit)
		}
	})
	if allocs != 0 || n == 0 {
		t.Fatalf("%v allocations per run of %d lines (%d words)", allocs, len(lines), n)
	}
}

// wordCountLines returns n lines of zipf-distributed words in mixed case with
// punctuation, non-ASCII letters, empty lines and one line holding a word
// longer than a memory segment.
func wordCountLines(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 11))
	z := rand.NewZipf(r, 1.2, 1, 5000)
	seps := []string{" ", ", ", "--", "'", " é ", "\t", "!? "}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := r.IntN(15); j > 0; j-- {
			w := fmt.Sprintf("w%d", z.Uint64())
			switch r.IntN(5) {
			case 0:
				w = strings.ToUpper(w)
			case 1:
				w = "Über" + w
			}
			b.WriteString(w)
			b.WriteString(seps[r.IntN(len(seps))])
		}
		out[i] = b.String()
	}
	if n > 10 {
		out[n/2] = "Long " + strings.Repeat("Ab", 5000) + " long"
	}
	return out
}

func TestWordCountDefaultData(t *testing.T) {
	want := oracleWordCount(WordCountLines)
	// hand-checked against the text: "to" occurs 15 times, "be" 4 times
	if !slices.Contains(want, "to 15") || !slices.Contains(want, "be 4") {
		t.Fatalf("oracle: %q", want)
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			run := func(ctx context.Context, o Options) error { return RunWordCount(ctx, o, "") }
			checkLines(t, "stdout", runToStdout(t, options(t, c), run), want)
			checkLines(t, "file", runToFile(t, options(t, c), run), want)
		})
	}
}

func TestWordCountFile(t *testing.T) {
	inputs := []struct {
		name  string
		lines []string
	}{
		{"empty", nil},
		{"zipf", wordCountLines(3, 6000)},
		{"all-equal", slices.Repeat([]string{"Same same SAME"}, 3000)},
	}
	for _, in := range inputs {
		path := writeFile(t, "input.txt", in.lines)
		want := oracleWordCount(in.lines)
		for _, c := range configs {
			t.Run(in.name+"/"+c.name, func(t *testing.T) {
				run := func(ctx context.Context, o Options) error { return RunWordCount(ctx, o, path) }
				checkLines(t, "file", runToFile(t, options(t, c), run), want)
				if c.parallelism == 3 {
					checkLines(t, "stdout", runToStdout(t, options(t, c), run), want)
				}
			})
		}
	}
}

func TestWordCountParallelPrograms(t *testing.T) {
	// several programs at once, each on its hash partition of the input
	lines := wordCountLines(5, 3000)
	const parts = 3
	byPart := make([][]string, parts)
	for i, l := range lines {
		byPart[i%parts] = append(byPart[i%parts], l)
	}
	errs := make(chan error, parts)
	outs := make([][]string, parts)
	for p := range parts {
		path := writeFile(t, "part.txt", byPart[p])
		o := options(t, config{parallelism: 2, memory: 256 << 10})
		go func() {
			var b strings.Builder
			o.Stdout = &b
			err := RunWordCount(context.Background(), o, path)
			outs[p] = splitLines(b.String())
			errs <- err
		}()
	}
	for range parts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for p := range parts {
		checkLines(t, fmt.Sprintf("part %d", p), outs[p], oracleWordCount(byPart[p]))
	}
}

func TestWordCountCancelled(t *testing.T) {
	path := writeFile(t, "input.txt", wordCountLines(4, 5000))
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			o := options(t, c)
			dir := t.TempDir()
			o.Output = filepath.Join(dir, "out.txt")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := RunWordCount(ctx, o, path)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("output directory holds %v after cancellation", ents)
			}
		})
	}
}
