package flow

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestProgressReportsRunningJob(t *testing.T) {
	g := NewGraph()
	release := make(chan struct{})
	src := g.Vertex("src", 2, func(tc *TaskContext) error {
		out := Output[int64](tc, 0)
		for i := int64(0); i < 1000; i++ {
			if err := out.Emit(&i); err != nil {
				return err
			}
		}
		if err := out.Flush(); err != nil {
			return err
		}
		<-release // keep running until the test has seen progress
		return nil
	})
	sink := g.Vertex("sink", 1, func(tc *TaskContext) error {
		in := Input[int64](tc, 0)
		for {
			if _, err := in.Next(tc.Context()); err != nil {
				return nil
			}
		}
	})
	Connect[int64](g, src, sink, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	var mu sync.Mutex
	var seen []Progress
	var once sync.Once
	_, err := Execute(context.Background(), g, Options{
		ProgressEvery: 5 * time.Millisecond,
		Progress: func(p Progress) {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
			if p.Vertices[0].RecordsOut == 2000 && p.Vertices[1].RecordsIn == 2000 {
				once.Do(func() { close(release) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// some call saw the job mid-run: all records through, the sources still running
	found := false
	for _, p := range seen {
		v := p.Vertices
		if v[0].Name == "src" && v[0].Subtasks == 2 && v[0].Done == 0 && v[1].Name == "sink" && v[1].RecordsIn == 2000 {
			found = true
		}
	}
	if !found {
		t.Errorf("no progress call saw 2000 records delivered while the sources ran: %+v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].Elapsed < seen[i-1].Elapsed || seen[i].Vertices[1].RecordsIn < seen[i-1].Vertices[1].RecordsIn {
			t.Fatalf("progress went backwards: %+v then %+v", seen[i-1], seen[i])
		}
	}
}
