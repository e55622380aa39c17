package streaming

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
)

// TestWindowJoinNestedLoop runs RunWindowJoin bounded with fixed seeds in
// STREAMING and BATCH mode at parallelism 1 and 2 and compares its printed
// lines with a nested-loop join per tumbling window over the same
// generated inputs: element i at i * 1000 / rate ms, each grade and salary
// of one name in one window giving Flink's Tuple3 "(name,grade,salary)".
func TestWindowJoinNestedLoop(t *testing.T) {
	const n, rate, size = 240, 8000, 4
	prefix := regexp.MustCompile(`^[0-9]+> `)
	for _, seed := range []int64{1, 42} {
		type el struct {
			v   NameValue
			win int64
		}
		gen := func(seed int64, maxValue int32) []el {
			g := WindowJoinSample(seed, maxValue)
			out := make([]el, n)
			for i := range out {
				out[i] = el{g(int64(i)), int64(float64(i)*1000/rate) / size}
			}
			return out
		}
		grades, salaries := gen(seed, WindowJoinGradeMax), gen(seed+1, WindowJoinSalaryMax)
		var want []string
		for _, g := range grades {
			if g.v.Value < 1 || g.v.Value > WindowJoinGradeMax || !slices.Contains(WindowJoinNames, g.v.Name) {
				t.Fatalf("grade %v", g.v)
			}
			for _, s := range salaries {
				if g.v.Name == s.v.Name && g.win == s.win {
					want = append(want, fmt.Sprintf("(%s,%d,%d)", g.v.Name, g.v.Value, s.v.Value))
				}
			}
		}
		slices.Sort(want)
		if len(want) < 300 {
			t.Fatalf("seed %d: the oracle joined only %d pairs", seed, len(want))
		}
		for _, mode := range []stream.Mode{stream.Streaming, stream.Batch} {
			for _, p := range []int{1, 2} {
				var out bytes.Buffer
				o := Options{Stream: stream.Options{Parallelism: p, Mode: mode}, Stdout: &out}
				err := RunWindowJoin(context.Background(), o, WindowJoinParams{
					WindowSize: size * time.Millisecond, Rate: rate, Events: n, Seed: seed,
				})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
					got = append(got, prefix.ReplaceAllString(l, ""))
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("seed %d mode %v p%d: %d lines, want %d", seed, mode, p, len(got), len(want))
				}
			}
		}
	}
}
