package oracle

import (
	"maps"
	"slices"
	"testing"
)

func TestShortestPaths(t *testing.T) {
	edges := []WeightedEdge{
		{1, 2, 7}, {1, 3, 9}, {1, 6, 14}, {2, 3, 10}, {2, 4, 15}, {3, 4, 11},
		{3, 6, 2}, {4, 5, 6}, {6, 5, 9}, {7, 1, 1}, {5, 5, 0},
	}
	got := ShortestPaths(1, edges)
	want := map[int64]float64{1: 0, 2: 7, 3: 9, 6: 11, 4: 20, 5: 20}
	if !maps.Equal(got, want) {
		t.Errorf("from 1: %v, want %v", got, want)
	}
	if got := ShortestPaths(5, edges); !maps.Equal(got, map[int64]float64{5: 0}) {
		t.Errorf("from 5: %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("negative weight: no panic")
		}
	}()
	ShortestPaths(1, []WeightedEdge{{1, 2, -1}})
}

func TestTransitiveClosure(t *testing.T) {
	got := TransitiveClosure([][2]int64{{1, 2}, {2, 3}, {3, 1}, {4, 5}, {2, 3}})
	want := [][2]int64{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}, {3, 3}, {4, 5}}
	if !slices.Equal(got, want) {
		t.Errorf("cycle: %v, want %v", got, want)
	}
	got = TransitiveClosure([][2]int64{{3, 4}, {2, 3}, {1, 2}})
	want = [][2]int64{{1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}
	if !slices.Equal(got, want) {
		t.Errorf("chain: %v, want %v", got, want)
	}
	if got := TransitiveClosure(nil); len(got) != 0 {
		t.Errorf("no edges: %v", got)
	}
}
