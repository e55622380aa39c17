package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// flinkIterateResults is Flink's IterateExampleData.RESULTS.
var flinkIterateResults = []string{
	"((1,40),3)", "((24,41),2)", "((3,16),5)", "((1,1),10)", "((17,15),4)", "((29,38),2)",
	"((7,33),3)", "((23,36),3)", "((10,6),6)", "((7,9),5)", "((11,15),4)", "((20,2),5)",
	"((15,23),4)", "((21,5),5)", "((17,39),3)", "((11,5),6)", "((28,13),4)", "((14,36),3)",
}

// TestIterateFlinkData follows Flink's IterateExampleITCase: weir run
// iterate on IterateExampleData.INPUT_PAIRS (the default, and the same
// pairs as an --input file) prints exactly RESULTS, as multisets, at
// parallelism 1 and 2.
func TestIterateFlinkData(t *testing.T) {
	want := slices.Sorted(slices.Values(flinkIterateResults))
	in := filepath.Join(t.TempDir(), "pairs.txt")
	pairs := "(1,40)\n(29,38)\n(11,15)\n(17,39)\n(24,41)\n(7,33)\n(20,2)\n(11,5)\n(3,16)\n(23,36)\n(15,23)\n(28,13)\n(1,1)\n(10,6)\n(21,5)\n(14,36)\n(17,15)\n(7,9)\n"
	if err := os.WriteFile(in, []byte(pairs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2} {
		for _, args := range [][]string{nil, {"--input", in}} {
			d := newRunDirs(t)
			argv := append([]string{"run", "iterate", "--max-wait", "1s", "--parallelism", fmt.Sprint(p), "--tmp", d.tmp}, args...)
			code, stdout, stderr := runWeir(context.Background(), argv...)
			if code != 0 || stderr != "" {
				t.Fatalf("p%d %v: exit %d, stderr %q", p, args, code, stderr)
			}
			if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
				t.Fatalf("p%d %v:\n got %q\nwant %q", p, args, got, want)
			}
			d.check(t, false)
		}
	}
}

// TestIterateBadFlags: a malformed line is an error naming the file and
// the line; a non-positive --max-wait is a usage error.
func TestIterateBadFlags(t *testing.T) {
	in := filepath.Join(t.TempDir(), "pairs.txt")
	if err := os.WriteFile(in, []byte("(1,2)\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWeir(context.Background(), "run", "iterate", "--input", in, "--max-wait", "50ms")
	if code == 0 || !strings.Contains(stderr, `pairs.txt line 2: line "1,2"`) {
		t.Fatalf("malformed line: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runWeir(context.Background(), "run", "iterate", "--max-wait", "0s")
	if code == 0 || !strings.Contains(stderr, "--max-wait") {
		t.Fatalf("--max-wait 0: exit %d, stderr %q", code, stderr)
	}
}
