package stream

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestPartitionings: broadcast copies every record to each subtask,
// rebalance spreads them round robin, shuffle delivers each once, and a
// forward edge between different parallelisms is refused.
func TestPartitionings(t *testing.T) {
	in := make([]int, 90)
	for i := range in {
		in[i] = i
	}
	env := New(Options{Parallelism: 3})
	src := FromSlice(env, in).SetParallelism(1)
	broadcast := Collect(Map(src.Broadcast(), func(v int) int { return v }))
	rebalance := Collect(Map(src.Rebalance(), func(v int) int { return v }))
	shuffle := Collect(Map(src.Shuffle(), func(v int) int { return v }))
	execute(t, env)
	if got := broadcast.Values(); len(got) != 3*len(in) {
		t.Errorf("broadcast: %d records, want %d", len(got), 3*len(in))
	}
	for i := 0; i < 3; i++ {
		if got := broadcast.c.Subtask(i); len(got) != len(in) {
			t.Errorf("broadcast: subtask %d got %d records", i, len(got))
		}
		if got := rebalance.c.Subtask(i); len(got) != len(in)/3 {
			t.Errorf("rebalance: subtask %d got %d records, want %d", i, len(got), len(in)/3)
		}
	}
	for name, c := range map[string]*Collected[int]{"rebalance": rebalance, "shuffle": shuffle} {
		if got := sorted(c.Values(), compareInt); !slices.Equal(got, in) {
			t.Errorf("%s: %v", name, got)
		}
	}

	env = New(Options{Parallelism: 2})
	Collect(Map(FromSlice(env, in).SetParallelism(1).Forward(), func(v int) int { return v }))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "forward edge") {
		t.Errorf("forward between parallelisms 1 and 2: %v", err)
	}
}
