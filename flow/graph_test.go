package flow

import (
	"testing"
)

func TestShipStrategyString(t *testing.T) {
	for s, want := range map[ShipStrategy]string{Forward: "FORWARD", Hash: "HASH", Range: "RANGE", Broadcast: "BROADCAST", Rebalance: "REBALANCE", Custom: "CUSTOM", 9: "ShipStrategy(9)"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", s, s.String(), want)
		}
	}
}

func TestGraphString(t *testing.T) {
	noop := func(tc *TaskContext) error { return nil }
	g := NewGraph()
	a := g.Vertex("source", 2, noop)
	b := g.Vertex("build", 1, noop)
	j := g.Vertex("join", 2, noop)
	Connect(g, a, j, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Pipelined, nil)
	Connect(g, b, j, Partitioner[rec]{Strategy: Broadcast}, Blocking, nil)
	want := "source p=2\nbuild p=1\njoin p=2 <- source HASH PIPELINED, <- build BROADCAST BLOCKING\n"
	if got := g.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
