package checkpoint

import "testing"

func TestMemoryRetains(t *testing.T) {
	m := NewMemory(2)
	if s, _, err := m.Latest(); s != nil || err != nil {
		t.Fatalf("empty Latest = %v, %v", s, err)
	}
	for id, kind := range []Kind{Checkpoint, Savepoint, Checkpoint, Checkpoint, Checkpoint} {
		if _, err := m.Store(&Snapshot{ID: int64(id + 1), Kind: kind}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	for _, s := range m.Retained() {
		got = append(got, s.ID)
	}
	// The savepoint (2) stays; of the checkpoints 1, 3, 4, 5 the newest two.
	if want := []int64{2, 4, 5}; !equal(got, want) {
		t.Fatalf("retained %v, want %v", got, want)
	}
	if s, _, _ := m.Latest(); s.ID != 5 {
		t.Fatalf("Latest = %d, want 5", s.ID)
	}
	if _, err := m.Store(&Snapshot{ID: 5}); err == nil {
		t.Fatal("Store of an old id succeeded")
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
