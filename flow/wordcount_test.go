package flow

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
)

type wordCount struct {
	Word  string
	Count int64
}

// wordCounts is what the word-count sink (one subtask) collects.
type wordCounts struct{ m map[string]int64 }

// lines returns text lines with zipf-distributed words.
func lines(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, 1.2, 1, 2000)
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for j := r.IntN(12); j >= 0; j-- {
			fmt.Fprintf(&sb, "w%d ", z.Uint64())
		}
		out[i] = sb.String()
	}
	return out
}

// wordCountGraph builds source -> HASH -> count -> FORWARD... -> sink: the source
// splits its share of the lines into words, the counter counts words in a map and
// emits one record per word, the sink collects them.
func wordCountGraph(t testing.TB, text []string, p int, mode ExchangeMode, out *wordCounts) *Graph {
	codec, err := memory.NewCodec[wordCount]()
	if err != nil {
		t.Fatal(err)
	}
	g := NewGraph()
	src := g.Vertex("source", p, func(tc *TaskContext) error {
		w := Output[wordCount](tc, 0)
		for i := tc.Subtask; i < len(text); i += tc.Parallelism {
			for _, word := range strings.Fields(text[i]) {
				if err := w.Emit(&wordCount{Word: word, Count: 1}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	count := g.Vertex("count", p, func(tc *TaskContext) error {
		r := Input[wordCount](tc, 0)
		w := Output[wordCount](tc, 0)
		counts := map[string]int64{}
		for {
			b, err := r.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			for i := range b {
				counts[b[i].Word] += b[i].Count
			}
		}
		for word, n := range counts {
			if err := w.Emit(&wordCount{Word: word, Count: n}); err != nil {
				return err
			}
		}
		return nil
	})
	sink := g.Vertex("sink", 1, func(tc *TaskContext) error {
		r := Input[wordCount](tc, 0)
		for {
			b, err := r.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			for _, wc := range b {
				if _, dup := out.m[wc.Word]; dup {
					return fmt.Errorf("word %q counted twice", wc.Word)
				}
				out.m[wc.Word] = wc.Count
			}
		}
	})
	hash := func(v *wordCount) uint64 { return memory.Hash([]byte(v.Word), 1) }
	Connect(g, src, count, Partitioner[wordCount]{Strategy: Hash, Hash: hash}, mode, codec)
	Connect(g, count, sink, Partitioner[wordCount]{Strategy: Rebalance}, mode, codec)
	return g
}

func TestWordCount(t *testing.T) {
	text := lines(3000, 9)
	want := map[string]int64{}
	for _, l := range text {
		for _, w := range strings.Fields(l) {
			want[w]++
		}
	}
	for _, p := range []int{1, 2, 4} {
		for _, mode := range []ExchangeMode{Pipelined, Blocking} {
			for _, bu := range budgets {
				t.Run(fmt.Sprintf("p%d/%v/%s", p, mode, bu.name), func(t *testing.T) {
					env := newTestEnv(t, bu.opts)
					out := &wordCounts{m: map[string]int64{}}
					res, err := Execute(bg, wordCountGraph(t, text, p, mode, out), env.options(Options{BatchSize: 64}))
					if err != nil {
						t.Fatal(err)
					}
					env.check(t)
					got := out.m
					if !maps.Equal(got, want) {
						t.Fatalf("got %d words, want %d; counts differ", len(got), len(want))
					}
					if c, _ := res.Vertex("count"); c.Total().RecordsOut != int64(len(want)) {
						t.Errorf("count emitted %d records, want %d", c.Total().RecordsOut, len(want))
					}
					if mode == Blocking && bu.name == "tiny" {
						if s, _ := res.Vertex("source"); s.Total().Spilled == 0 {
							t.Error("blocking exchange under a tiny budget did not spill")
						}
					}
				})
			}
		}
	}
}

// TestWordCountEdgesRun runs the graph with its edges pipelined and blocking
// under a tiny budget: the counts stay right, the job spills exactly when the
// shuffle is blocking, and Result.Edges reports every edge as it ran.
func TestWordCountEdgesRun(t *testing.T) {
	text := lines(1000, 10)
	want := map[string]int64{}
	for _, l := range text {
		for _, w := range strings.Fields(l) {
			want[w]++
		}
	}
	for _, given := range []ExchangeMode{Pipelined, Blocking} {
		t.Run(given.String(), func(t *testing.T) {
			env := newTestEnv(t, budgets[1].opts)
			out := &wordCounts{m: map[string]int64{}}
			g := wordCountGraph(t, text, 2, given, out)
			res, err := Execute(bg, g, env.options(Options{BatchSize: 64}))
			if err != nil {
				t.Fatal(err)
			}
			env.check(t)
			if !maps.Equal(out.m, want) {
				t.Fatal("counts differ")
			}
			s, _ := res.Vertex("source")
			if spilled := s.Total().Spilled > 0; spilled != (given == Blocking) {
				t.Errorf("spilled %d bytes; blocking shuffle: %v", s.Total().Spilled, given == Blocking)
			}
			// the edges as the graph lists them, one line per vertex
			var ran strings.Builder
			for vi, v := range res.Vertices {
				fmt.Fprintf(&ran, "%s p=%d", v.Name, len(v.Subtasks))
				for _, e := range res.Edges {
					if e.To == vi {
						fmt.Fprintf(&ran, " <- %s %v %v", res.Vertices[e.From].Name, e.Strategy, e.Mode)
					}
				}
				ran.WriteString("\n")
			}
			if ran.String() != g.String() {
				t.Errorf("edges ran:\n%s\ngraph:\n%s", ran.String(), g.String())
			}
		})
	}
}
