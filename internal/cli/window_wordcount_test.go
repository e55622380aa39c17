package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/examples/streaming"
)

// naiveWindowWordCount is countWindow(window, slide).sum over the word
// occurrences of lines: a word seen n times fires at its k*slide-th
// occurrence, k = 1..n/slide, with min(window, k*slide) occurrences.
func naiveWindowWordCount(lines []string, window, slide int) []string {
	n := map[string]int{}
	for _, l := range lines {
		streaming.Tokenize(l, func(w string) { n[w]++ })
	}
	var out []string
	for w, c := range n {
		for k := 1; k*slide <= c; k++ {
			out = append(out, fmt.Sprintf("(%s,%d)", w, min(window, k*slide)))
		}
	}
	slices.Sort(out)
	return out
}

// TestWindowWordCount follows Flink's WindowWordCountITCase: over
// WordCountData.TEXT every line matches ^\([a-z]+,(\d)+\); the lines also
// equal naiveWindowWordCount, with the default data and --input, windows
// 250/150 (Flink's test: nothing fires, no word occurs 150 times), 25/15
// and 10/5, at parallelism 1 and 2.
func TestWindowWordCount(t *testing.T) {
	re := regexp.MustCompile(`^\([a-z]+,(\d)+\)`)
	in := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(in, []byte(strings.Join(streaming.WordCountText, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ window, slide int }{{250, 150}, {25, 15}, {10, 5}} {
		want := naiveWindowWordCount(streaming.WordCountText, c.window, c.slide)
		if (len(want) == 0) != (c.slide == 150) { // no word of TEXT occurs 150 times
			t.Fatalf("%d/%d: the oracle prints %d lines", c.window, c.slide, len(want))
		}
		for _, input := range []string{"", in} {
			for _, p := range []int{1, 2} {
				args := []string{"run", "window-wordcount", "--window", fmt.Sprint(c.window), "--slide", fmt.Sprint(c.slide), "--parallelism", fmt.Sprint(p)}
				if input != "" {
					args = append(args, "--input", input)
				}
				code, stdout, stderr := runWeir(context.Background(), args...)
				if code != 0 || stderr != "" {
					t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
				}
				got := printedLines(t, stdout, p)
				for _, l := range got {
					if !re.MatchString(l) {
						t.Errorf("%v: line %q does not match %s", args, l, re)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%v: %d lines, want %d", args, len(got), len(want))
				}
			}
		}
	}
	if code, _, stderr := runWeir(context.Background(), "run", "window-wordcount", "--slide", "0"); code != 1 || stderr == "" {
		t.Errorf("--slide 0: exit %d, stderr %q", code, stderr)
	}
}
