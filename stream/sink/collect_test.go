package sink

import (
	"slices"
	"sync"
	"testing"
)

// Subtasks write at once; each subtask's records keep their order and
// Records lists subtask 0's first.
func TestCollectConcurrent(t *testing.T) {
	const n, batches, size = 4, 50, 7
	c := NewCollect[int]()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		w, err := c.Writer(i, n)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				batch := make([]int, size)
				for k := range batch {
					batch[k] = i*1_000_000 + b*size + k
				}
				if err := w.Write(batch); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	var want []int
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		var sub []int
		for k := range batches * size {
			sub = append(sub, i*1_000_000+k)
		}
		if got := c.Subtask(i); !slices.Equal(got, sub) {
			t.Errorf("subtask %d: %d records, not in arrival order", i, len(got))
		}
		want = append(want, sub...)
	}
	if got := c.Records(); !slices.Equal(got, want) {
		t.Errorf("Records: %d records, not subtask-then-arrival order", len(got))
	}
}
