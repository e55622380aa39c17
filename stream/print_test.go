package stream

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestPrint prints in Flink's format: "N> " before every line at
// parallelism 2 (N the subtask from 1), no prefix at parallelism 1, an
// identifier before the subtask; values as Flink prints tuples.
func TestPrint(t *testing.T) {
	type pair struct {
		Word  string
		Count int
	}
	in := []pair{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}}
	for _, tc := range []struct {
		p          int
		identifier string
		prefixes   []string
	}{
		{1, "", []string{""}},
		{2, "", []string{"1> ", "2> "}},
		{2, "out", []string{"out:1> ", "out:2> "}},
	} {
		env := New(Options{Parallelism: tc.p})
		var buf bytes.Buffer
		PrintTo(FromSlice(env, in), &buf, tc.identifier)
		execute(t, env)
		lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		var values []string
		for _, l := range lines {
			i := strings.Index(l, "(")
			if i < 0 || !slices.Contains(tc.prefixes, l[:i]) {
				t.Fatalf("p%d %q: line %q has no prefix of %q", tc.p, tc.identifier, l, tc.prefixes)
			}
			values = append(values, l[i:])
		}
		slices.Sort(values)
		if want := []string{"(a,1)", "(b,2)", "(c,3)", "(d,4)"}; !slices.Equal(values, want) {
			t.Fatalf("p%d: printed %v, want %v", tc.p, values, want)
		}
	}
}
