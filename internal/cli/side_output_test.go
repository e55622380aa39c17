package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/weirdata/weir/examples/streaming"
)

// TestSideOutput follows Flink's SideOutputExample over WordCountData.TEXT
// (checkSideOutput), at parallelism 1 and 2, printed and written to files.
func TestSideOutput(t *testing.T) {
	for _, c := range []struct {
		p     int
		files bool // --output and --rejected-words-output
	}{{1, false}, {2, false}, {2, true}} {
		p := c.p
		args := []string{"run", "side-output", "--parallelism", fmt.Sprint(p)}
		out, rej := filepath.Join(t.TempDir(), "counts"), filepath.Join(t.TempDir(), "rejected")
		if c.files {
			args = append(args, "--output", out, "--rejected-words-output", rej)
		}
		code, stdout, stderr := runWeir(context.Background(), args...)
		if code != 0 || stderr != "" {
			t.Fatalf("p%d: exit %d, stderr %q", p, code, stderr)
		}
		lines := printedLines(t, stdout, p)
		if c.files {
			if len(lines) != 0 {
				t.Fatalf("p%d: %d lines printed with --output", p, len(lines))
			}
			lines = append(readPartsSorted(t, out), readPartsSorted(t, rej)...)
			slices.Sort(lines)
		}
		checkSideOutput(t, fmt.Sprintf("p%d", p), lines)
	}
}

// checkSideOutput checks the lines of Flink's SideOutputExample over
// WordCountData.TEXT: the "rejected: word" lines are exactly the words
// longer than five letters (as a multiset), and the "(word,n)" lines of a
// word, whatever windows the ingestion times put them in, add up to its
// occurrences, for the words of at most five letters.
func checkSideOutput(t *testing.T, what string, lines []string) {
	t.Helper()
	var wantRejected []string
	wantCounts := map[string]int{}
	for _, l := range streaming.WordCountText {
		streaming.Tokenize(l, func(w string) {
			if len(w) > 5 {
				wantRejected = append(wantRejected, "rejected: "+w)
			} else {
				wantCounts[w]++
			}
		})
	}
	slices.Sort(wantRejected)
	count := regexp.MustCompile(`^\(([a-z0-9_]+),(\d+)\)$`)
	var rejected []string
	counts := map[string]int{}
	for _, l := range lines {
		if m := count.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			counts[m[1]] += n
			continue
		}
		rejected = append(rejected, l)
	}
	if !slices.Equal(rejected, wantRejected) {
		t.Errorf("%s: %d rejected lines, want %d", what, len(rejected), len(wantRejected))
	}
	if len(counts) != len(wantCounts) {
		t.Errorf("%s: %d words counted, want %d", what, len(counts), len(wantCounts))
	}
	for w, n := range wantCounts {
		if counts[w] != n {
			t.Errorf("%s: %s counted %d, want %d", what, w, counts[w], n)
		}
	}
}
