package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// flinkCounts reads Flink's WordCountData.COUNTS ("word count" lines).
func flinkCounts(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile("testdata/wordcount_counts.txt")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		var w string
		var n int
		if _, err := fmt.Sscanf(l, "%s %d", &w, &n); err != nil {
			t.Fatalf("COUNTS line %q: %v", l, err)
		}
		counts[w] = n
	}
	return counts
}

// runningTuples returns Flink's STREAMING_COUNTS_AS_TUPLES of counts, sorted:
// (w,1) ... (w,n) for every word w with count n.
func runningTuples(counts map[string]int) []string {
	var out []string
	for w, n := range counts {
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("(%s,%d)", w, i))
		}
	}
	slices.Sort(out)
	return out
}

// finalTuples returns (w,n) for every word, sorted.
func finalTuples(counts map[string]int) []string {
	var out []string
	for w, n := range counts {
		out = append(out, fmt.Sprintf("(%s,%d)", w, n))
	}
	slices.Sort(out)
	return out
}

var subtaskPrefix = regexp.MustCompile(`^[0-9]+> `)

// printedLines returns the lines Flink's print sink wrote, without their
// "N> " prefixes, sorted; it fails when a prefix is missing at parallelism
// above 1 or present at 1.
func printedLines(t *testing.T, out string, parallelism int) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		p := subtaskPrefix.FindString(l)
		if (p != "") != (parallelism > 1) {
			t.Fatalf("line %q at parallelism %d", l, parallelism)
		}
		lines = append(lines, l[len(p):])
	}
	slices.Sort(lines)
	return lines
}

// TestStreamingWordCountFlinkData follows Flink's WordCountITCase
// (flink-examples-streaming): over WordCountData.TEXT, STREAMING prints
// STREAMING_COUNTS_AS_TUPLES and BATCH (and AUTOMATIC, every source being
// bounded) COUNTS as tuples, at parallelism 1 and 2.
func TestStreamingWordCountFlinkData(t *testing.T) {
	counts := flinkCounts(t)
	if len(counts) != 418 || counts["und"] != 29 {
		t.Fatalf("COUNTS: %d words, und %d", len(counts), counts["und"])
	}
	for _, p := range []int{1, 2} {
		for mode, want := range map[string][]string{
			"streaming": runningTuples(counts), "batch": finalTuples(counts), "automatic": finalTuples(counts),
		} {
			d := newRunDirs(t)
			code, stdout, stderr := runWeir(context.Background(), "run", "streaming-wordcount",
				"--execution-mode", mode, "--parallelism", fmt.Sprint(p), "--tmp", d.tmp)
			if code != 0 || stderr != "" {
				t.Fatalf("%s p%d: exit %d, stderr %q", mode, p, code, stderr)
			}
			if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
				t.Errorf("%s p%d: %d lines, want %d; first lines %q", mode, p, len(got), len(want), got[:min(5, len(got))])
			}
			d.check(t, false)
		}
	}
}

// naiveWordCount counts words as Flink's Tokenizer: lower-case, split on
// \W+, drop empty tokens.
func naiveWordCount(lines []string) map[string]int {
	nonWord := regexp.MustCompile(`\W+`)
	counts := map[string]int{}
	for _, l := range lines {
		for _, w := range nonWord.Split(strings.ToLower(l), -1) {
			if w != "" {
				counts[w]++
			}
		}
	}
	return counts
}

// randomText returns lines of random words (mixed case, digits, '_') and
// separators (punctuation, spaces, non-ASCII letters).
func randomText(r *rand.Rand, lines int) []string {
	words := []string{"Alpha", "beta", "GAMMA", "d3lta", "eps_ilon", "zeta", "Eta", "x", "42"}
	seps := []string{" ", ", ", "--", ". ", "!", " ü ", "\t", "'"}
	out := make([]string, lines)
	for i := range out {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		out[i] = b.String()
	}
	return out
}

// TestStreamingWordCountRandomText counts a random text from a file and
// checks every mode and parallelism against a naive count.
func TestStreamingWordCountRandomText(t *testing.T) {
	lines := randomText(rand.New(rand.NewPCG(7, 11)), 500)
	input := writeRunInput(t, "text.txt", lines...)
	counts := naiveWordCount(lines)
	for _, p := range []int{1, 2} {
		for _, mode := range []string{"streaming", "batch", "automatic"} {
			code, stdout, stderr := runWeir(context.Background(), "run", "streaming-wordcount", "--input", input,
				"--execution-mode", mode, "--parallelism", fmt.Sprint(p))
			if code != 0 || stderr != "" {
				t.Fatalf("%s p%d: exit %d, stderr %q", mode, p, code, stderr)
			}
			want := finalTuples(counts)
			if mode == "streaming" {
				want = runningTuples(counts)
			}
			if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
				t.Errorf("%s p%d: got %d lines, want %d", mode, p, len(got), len(want))
			}
		}
	}
}

// TestStreamingWordCountOutput writes the final counts as part files:
// committed, nothing hidden left, the spill directory empty.
func TestStreamingWordCountOutput(t *testing.T) {
	lines := randomText(rand.New(rand.NewPCG(3, 5)), 200)
	input := writeRunInput(t, "text.txt", lines...)
	out, tmp := t.TempDir(), t.TempDir()
	code, stdout, stderr := runWeir(context.Background(), "run", "streaming-wordcount", "--input", input,
		"--execution-mode", "batch", "--parallelism", "2", "--output", out, "--tmp", tmp)
	if code != 0 || stderr != "" || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	ents, _ := os.ReadDir(out)
	var got []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasPrefix(e.Name(), "part-") {
			t.Errorf("output holds %s", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Split(strings.TrimRight(string(b), "\n"), "\n")...)
	}
	slices.Sort(got)
	if want := finalTuples(naiveWordCount(lines)); !slices.Equal(got, want) {
		t.Errorf("part files hold %d lines, want %d", len(got), len(want))
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("spill directory holds %v", ents)
	}
}

func TestStreamingWordCountBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-file.txt")
	for _, args := range [][]string{
		{"--input", missing},
		{"--input", missing, "--monitor", "1s"},
	} {
		code, _, stderr := runWeir(context.Background(), append([]string{"run", "streaming-wordcount"}, args...)...)
		if code != 1 || !strings.Contains(stderr, missing) {
			t.Errorf("%v: exit %d, stderr %q: want 1 and the path", args, code, stderr)
		}
	}
	dir := t.TempDir()
	code, _, stderr := runWeir(context.Background(), "run", "streaming-wordcount", "--input", dir, "--monitor", "1s", "--execution-mode", "batch")
	if code != 1 || !strings.Contains(stderr, "BATCH") {
		t.Errorf("batch over a watched directory: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runWeir(context.Background(), "run", "streaming-wordcount", "--execution-mode", "fast")
	if code != 1 || !strings.Contains(stderr, "--execution-mode") {
		t.Errorf("bad mode: exit %d, stderr %q", code, stderr)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// dropFile writes lines into dir as a complete file: written elsewhere, then
// renamed in.
func dropFile(t *testing.T, dir, name string, lines ...string) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or 20 s have passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hasAll says whether out's lines (without prefixes) include every want.
func hasAll(out string, want []string) bool {
	have := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		have[l[len(subtaskPrefix.FindString(l)):]] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// TestStreamingWordCountMonitor runs the directory-watching job in process:
// two files dropped in while it runs are counted, and cancelling its context
// (what Ctrl-C does in cmd/weir) ends it with ExitInterrupted, its spill
// directory and output empty of anything hidden.
func TestStreamingWordCountMonitor(t *testing.T) {
	in, out, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	for _, output := range []string{"", out} {
		ctx, cancel := context.WithCancel(context.Background())
		var stdout, stderr syncBuffer
		done := make(chan int)
		args := []string{"run", "streaming-wordcount", "--input", in, "--monitor", "50ms", "--parallelism", "2", "--tmp", tmp}
		if output != "" {
			args = append(args, "--output", output)
		}
		go func() { done <- Execute(ctx, args, &stdout, &stderr) }()
		if output == "" {
			dropFile(t, in, "a.txt", "To be, or not", "to BE")
			waitFor(t, "the first file's counts", func() bool { return hasAll(stdout.String(), []string{"(to,2)", "(be,2)", "(or,1)", "(not,1)"}) })
			dropFile(t, in, "b.txt", "be quick")
			waitFor(t, "the second file's counts", func() bool { return hasAll(stdout.String(), []string{"(be,3)", "(quick,1)"}) })
		} else {
			// the files already there are read at start: their counts go to
			// in-progress parts, which the interruption must remove
			waitFor(t, "an in-progress part", func() bool {
				ents, _ := os.ReadDir(out)
				return len(ents) > 0
			})
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		if code := <-done; code != ExitInterrupted {
			t.Fatalf("output %q: exit %d, stderr %q", output, code, stderr.String())
		}
		if got := stderr.String(); got != "weir: interrupted\n" {
			t.Errorf("stderr %q", got)
		}
		if output == "" {
			if got, want := printedLines(t, stdout.String(), 2), []string{"(be,1)", "(be,2)", "(be,3)", "(not,1)", "(or,1)", "(quick,1)", "(to,1)", "(to,2)"}; !slices.Equal(got, want) {
				t.Errorf("printed %q, want %q", got, want)
			}
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("spill directory holds %v", ents)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("output directory holds %v after an interrupted run", ents)
		}
	}
}
