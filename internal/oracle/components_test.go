package oracle

import (
	"maps"
	"testing"
)

func TestComponents(t *testing.T) {
	got := Components([]int64{1, 2, 3, 4, 5, 6, 7, 10},
		[][2]int64{{3, 2}, {2, 1}, {6, 5}, {5, 4}, {4, 6}, {12, 11}, {7, 7}})
	want := map[int64]int64{1: 1, 2: 1, 3: 1, 4: 4, 5: 4, 6: 4, 7: 7, 10: 10, 11: 11, 12: 11}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestComponentsLongChain joins a path 0-1-...-n in the order that builds
// the longest parent chain.
func TestComponentsLongChain(t *testing.T) {
	const n = 100000
	var edges [][2]int64
	for v := int64(n - 1); v >= 0; v-- {
		edges = append(edges, [2]int64{v + 1, v})
	}
	got := Components(nil, edges)
	if len(got) != n+1 {
		t.Fatalf("%d vertices, want %d", len(got), n+1)
	}
	for v, c := range got {
		if c != 0 {
			t.Fatalf("vertex %d in component %d, want 0", v, c)
		}
	}
}
