package streaming

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
)

// iterateResults is Flink's IterateExampleData.RESULTS.
var iterateResults = []string{
	"((1,40),3)", "((24,41),2)", "((3,16),5)", "((1,1),10)", "((17,15),4)", "((29,38),2)",
	"((7,33),3)", "((23,36),3)", "((10,6),6)", "((7,9),5)", "((11,15),4)", "((20,2),5)",
	"((15,23),4)", "((21,5),5)", "((17,39),3)", "((11,5),6)", "((28,13),4)", "((14,36),3)",
}

// printed returns the printed lines without the "N> " prefix, sorted.
func printed(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if i := strings.Index(l, "> "); i >= 0 {
			l = l[i+2:]
		}
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return lines
}

// TestIterate follows Flink's IterateExampleITCase: IterateExample over
// IterateExampleData.INPUT_PAIRS prints exactly RESULTS (as multisets), at
// parallelism 1 and 2, on the default data and on the same pairs read
// from a file.
func TestIterate(t *testing.T) {
	want := slices.Sorted(slices.Values(iterateResults))
	file := filepath.Join(t.TempDir(), "pairs.txt")
	if err := os.WriteFile(file, []byte(strings.Join(IteratePairs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2} {
		for _, input := range []string{"", file} {
			var out bytes.Buffer
			o := Options{Stream: stream.Options{Parallelism: p}, Stdout: &out}
			if err := RunIterate(context.Background(), o, IterateParams{Input: input, MaxWait: time.Second}); err != nil {
				t.Fatal(err)
			}
			if got := printed(t, out.String()); !slices.Equal(got, want) {
				t.Fatalf("parallelism %d input %q:\n got %v\nwant %v", p, input, got, want)
			}
		}
	}
}

// TestIterateBadInput: a line that is not (a,b) fails the job naming the
// file, the line number and the line.
func TestIterateBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pairs.txt")
	if err := os.WriteFile(file, []byte("(1,2)\n(3;4)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := RunIterate(context.Background(), Options{Stream: stream.Options{Parallelism: 1}, Stdout: &out}, IterateParams{Input: file, MaxWait: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "(3;4)") || !strings.Contains(err.Error(), "pairs.txt line 2") {
		t.Fatalf("err = %v, want one naming pairs.txt line 2, (3;4)", err)
	}
}
