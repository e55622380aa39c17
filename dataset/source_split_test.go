package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/text"
)

// countingSplitter records the n that FromSource asks a ParallelSplitter for.
type countingSplitter struct {
	formats.Source[int]
	asked []int
}

func (c *countingSplitter) SplitsFor(ctx context.Context, n int) ([]formats.Split, error) {
	c.asked = append(c.asked, n)
	return c.Source.(formats.ParallelSplitter).SplitsFor(ctx, n)
}

// TestFromSourceSplitsForParallelism reads a file of numbers through a parsed
// text source at several parallelisms: the source is cut for the operator's
// parallelism, once per execution, and every line is read exactly once.
func TestFromSourceSplitsForParallelism(t *testing.T) {
	var b strings.Builder
	const lines = 200_000
	for i := range lines {
		fmt.Fprintf(&b, "%d\n", i)
	}
	p := filepath.Join(t.TempDir(), "n.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, par := range []int{1, 2, 3} {
		src, err := text.OpenParsed(p, func(line []byte, _ *text.Strings) (int, error) { return strconv.Atoi(string(line)) })
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingSplitter{Source: src}
		env := New(Options{Parallelism: par})
		got := Collect(FromSource(env, "numbers", formats.Source[int](cs)))
		if _, err := env.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cs.asked, []int{par}) {
			t.Fatalf("parallelism %d: SplitsFor asked for %v", par, cs.asked)
		}
		vs := got.Values()
		slices.Sort(vs)
		if len(vs) != lines || vs[0] != 0 || vs[lines-1] != lines-1 || len(slices.Compact(vs)) != lines {
			t.Fatalf("parallelism %d: read %d numbers, want 0..%d once each", par, len(vs), lines-1)
		}
	}
}
