package cli

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/examples"
)

// runOracleWordCount counts the words of text as Flink's WordCount does
// (toLowerCase, split on \W+, drop empty), with a map, and returns the sorted
// "word count" lines.
func runOracleWordCount(lines []string) string {
	nonWord := regexp.MustCompile(`\W+`)
	counts := map[string]int{}
	for _, l := range lines {
		for _, w := range nonWord.Split(strings.ToLower(l), -1) {
			if w != "" {
				counts[w]++
			}
		}
	}
	var b strings.Builder
	for _, w := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "%s %d\n", w, counts[w])
	}
	return b.String()
}

// runDirs are the directories of one `weir run`: an output directory that must
// hold only the output (or nothing after an error) and a spill directory that
// must be empty afterwards.
type runDirs struct{ out, tmp string }

func newRunDirs(t *testing.T) runDirs { return runDirs{out: t.TempDir(), tmp: t.TempDir()} }

func (d runDirs) output() string { return filepath.Join(d.out, "result.txt") }

func (d runDirs) check(t *testing.T, wantOutput bool) {
	t.Helper()
	if ents, _ := os.ReadDir(d.tmp); len(ents) != 0 {
		t.Errorf("spill directory holds %v", ents)
	}
	ents, _ := os.ReadDir(d.out)
	want := 0
	if wantOutput {
		want = 1
	}
	if len(ents) != want || wantOutput && ents[0].Name() != "result.txt" {
		t.Errorf("output directory holds %v, want the output: %v", ents, wantOutput)
	}
}

func writeRunInput(t *testing.T, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunWordCount(t *testing.T) {
	want := runOracleWordCount(examples.WordCountLines)
	for _, args := range [][]string{
		{"--parallelism", "1"},
		{"--parallelism", "3", "--memory", "256KiB"},
	} {
		d := newRunDirs(t)
		code, stdout, stderr := runWeir(context.Background(), append([]string{"run", "wordcount", "--tmp", d.tmp}, args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if stdout != want {
			t.Fatalf("%v: stdout\n%s\nwant\n%s", args, stdout, want)
		}
		d.check(t, false)
	}
}

func TestRunWordCountOutputFile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.2, 1, 3000)
	lines := make([]string, 5000)
	for i := range lines {
		var b strings.Builder
		for range r.IntN(12) {
			fmt.Fprintf(&b, "Word%d, ", z.Uint64())
		}
		lines[i] = b.String()
	}
	in := writeRunInput(t, "input.txt", lines...)
	want := runOracleWordCount(lines)
	for _, p := range []string{"1", "3"} {
		d := newRunDirs(t)
		code, stdout, stderr := runWeir(context.Background(), "run", "wordcount", "--input", in, "--output", d.output(),
			"--parallelism", p, "--memory", "256KiB", "--tmp", d.tmp)
		if code != 0 || stderr != "" || stdout != "" {
			t.Fatalf("p%s: exit %d, stdout %q, stderr %q", p, code, stdout, stderr)
		}
		got, err := os.ReadFile(d.output())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("p%s: output differs from the oracle's (%d bytes, want %d)", p, len(got), len(want))
		}
		d.check(t, true)
	}
}

func TestRunWebLogAndTriangles(t *testing.T) {
	// Flink's default data; results checked by hand (see package examples' tests)
	weblog := "41|url_39|33\n48|url_46|37\n69|url_16|34\n"
	triangles := "1 2 3\n1 2 5\n1 3 4\n3 7 8\n"
	// files in Flink's formats: url_2 is visited in 2007, url_3 ranks too low
	docs := writeRunInput(t, "docs.txt", "url_1| editors oscillations |", "url_2| oscillations editors x|", "url_3| editors  oscillations |")
	ranks := writeRunInput(t, "ranks.txt", "50|url_1|7|", "60|url_2|8|", "30|url_3|9|")
	visits := writeRunInput(t, "visits.txt", "1.2.3.4|url_2|2007-1-1|0.1|UA|de|de|x|1|", "1.2.3.4|url_1|2006-1-1|0.1|UA|de|de|x|1|")
	edges := writeRunInput(t, "edges.txt", "10 20", "20 30", "30 10", "30 40", "40 40")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "weblog"}, weblog},
		{[]string{"run", "weblog", "--documents", docs, "--ranks", ranks, "--visits", visits}, "50|url_1|7\n"},
		{[]string{"run", "enum-triangles"}, triangles},
		{[]string{"run", "enum-triangles", "--edges", edges}, "10 20 30\n"},
	} {
		for _, p := range []string{"1", "3"} {
			d := newRunDirs(t)
			args := append(slices.Clone(tc.args), "--parallelism", p, "--memory", "256KiB", "--tmp", d.tmp)
			code, stdout, stderr := runWeir(context.Background(), args...)
			if code != 0 || stderr != "" || stdout != tc.want {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want stdout %q", args, code, stdout, stderr, tc.want)
			}
			d.check(t, false)
			d = newRunDirs(t)
			code, stdout, stderr = runWeir(context.Background(), append(args[:len(args)-1], d.tmp, "--output", d.output())...)
			got, _ := os.ReadFile(d.output())
			if code != 0 || stderr != "" || stdout != "" || string(got) != tc.want {
				t.Fatalf("%v --output: exit %d, stdout %q, stderr %q, output %q; want %q", args, code, stdout, stderr, got, tc.want)
			}
			d.check(t, true)
		}
	}
}

func TestRunErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.txt")
	badEdges := writeRunInput(t, "edges.txt", "1 2", "2 3", "3 x")
	badRanks := writeRunInput(t, "ranks.txt", "50|url_1|7|", "oops")
	for _, tc := range []struct {
		args []string
		want string // stderr's one line contains this
	}{
		{[]string{"run", "wordcount", "--input", missing}, "examples: wordcount: input file: formats/text: stat " + missing},
		{[]string{"run", "enum-triangles", "--edges", missing}, "edges file: stat " + missing},
		{[]string{"run", "weblog", "--visits", missing}, "visits file: stat " + missing},
		{[]string{"run", "enum-triangles", "--edges", badEdges}, badEdges + ` line 3: vertex "x": not an integer`},
		{[]string{"run", "weblog", "--ranks", badRanks}, badRanks + " line 2: 1 '|'-separated fields, want 3"},
		{[]string{"run", "nope"}, `unknown example "nope"`},
		{[]string{"run", "wordcount", "--parallelism", "-1"}, "--parallelism must be positive"},
		{[]string{"run", "wordcount", "stray"}, `unknown command "stray"`},
	} {
		for _, p := range []string{"1", "3"} {
			d := newRunDirs(t)
			args := slices.Clone(tc.args)
			if tc.args[1] != "nope" { // `weir run` itself has no job flags
				args = append(args, "--tmp", d.tmp, "--output", d.output())
			}
			if tc.args[1] != "nope" && !slices.Contains(tc.args, "--parallelism") {
				args = append(args, "--parallelism", p)
			}
			code, stdout, stderr := runWeir(context.Background(), args...)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "weir: ") ||
				!strings.Contains(stderr, tc.want) {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one line containing %q", args, code, stdout, stderr, tc.want)
			}
			d.check(t, false)
		}
	}
}
