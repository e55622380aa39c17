package flow

import (
	"strings"
	"testing"
)

// TestStreamingRefusesBoundedEdges: a streaming job refuses Blocking edges
// and sampled Range edges, naming the edge; Range edges with Bounds and
// pipelined edges pass, and the same graphs run as batch jobs.
func TestStreamingRefusesBoundedEdges(t *testing.T) {
	cases := []struct {
		name    string
		part    Partitioner[rec]
		mode    ExchangeMode
		wantErr string
	}{
		{"blocking", Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Blocking, "edge source->sink: a streaming job has no BLOCKING edges"},
		{"sampled range", Partitioner[rec]{Strategy: Range, Key: keyOf}, Pipelined, "edge source->sink: a streaming job has no RANGE edges without Bounds"},
		{"range with bounds", Partitioner[rec]{Strategy: Range, Key: keyOf, Bounds: [][]byte{keyOf(nil, &rec{Key: 500})}}, Pipelined, ""},
		{"pipelined hash", Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Pipelined, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			input := genInput(2, 500, uniformKeys, 1)
			build := func() (*Graph, *collector) {
				g := NewGraph()
				col := newCollector(2)
				src := g.Vertex("source", 2, sourceBody(input))
				sink := g.Vertex("sink", 2, col.body)
				Connect(g, src, sink, c.part, c.mode, recCodec(t))
				return g, col
			}
			g, col := build()
			jb, err := Start(bg, g, Options{Streaming: true})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Start returned %v, want %q", err, c.wantErr)
				}
				if jb != nil {
					t.Fatal("Start returned a job with its error")
				}
				g, col = build()
				if _, err := Execute(bg, g, Options{}); err != nil {
					t.Fatalf("as a batch job: %v", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := jb.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			sameMultiset(t, "received", col.all(), flatten(input))
		})
	}
}
