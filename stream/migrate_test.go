package stream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// The keyed state of the two programs of TestSavepointStateMigration: the
// second dropped Last and added Count.
type sumV1 struct {
	Sum  int64
	Last string
}

type sumV2 struct {
	Sum   int64
	Count int64
}

// migSums keeps a struct ValueState "acc" per key v%5 in a KeyedProcess
// and writes a line per record: "key:sum" (the first program) or
// "key:sum:count" (the second).
func migSums[A any](env *Env, src *gated[int], dir string, add func(a A, v int) A, line func(k int, a A) string) {
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
	out := KeyedProcess(KeyBy(ds, func(v int) int { return v % 5 }), func() KeyedProcessFunction[int, int, string] {
		var acc state.ValueState[A]
		return KeyedProcessFunction[int, int, string]{
			Open: func(rc *KeyedRuntimeContext[int]) (err error) {
				acc, err = GetState(rc, state.ValueDescriptor[A]{Name: "acc"})
				return err
			},
			ProcessElement: func(v int, ctx *KeyedContext[int], out Collector[string]) error {
				a, _ := acc.Value()
				a = add(a, v)
				acc.Update(a)
				out.Collect(line(ctx.CurrentKey(), a))
				return nil
			},
		}
	}).UID("acc")
	SinkTo(out, sink.Text(dir))
}

// TestSavepointStateMigration: a job keeps a struct ValueState and stops
// with a savepoint after 40 of 100 numbers; a program whose state type lost
// a field and gained one (another Go type under the same descriptor name)
// restores from the savepoint at parallelism 3 on the heap and on the disk
// backend: each key's sum carries over (the last line of a key sums all
// its numbers) and the new field starts at zero (it counts the numbers of
// the second job only).
func TestSavepointStateMigration(t *testing.T) {
	const n = 100
	for _, be := range []StateBackend{HeapBackend, DiskBackend} {
		t.Run(fmt.Sprint(be), func(t *testing.T) {
			dir1, sp := t.TempDir(), t.TempDir()
			dir2 := dir1 // a restore commits the snapshot's parts in the sink's own directory
			src := newGated(ints(n))
			env := New(Options{Parallelism: 2, Clock: manual(), StateBackend: be, TmpDir: t.TempDir()})
			env.EnableCheckpointing(time.Hour)
			migSums(env, src, dir1, func(a sumV1, v int) sumV1 { return sumV1{a.Sum + int64(v), fmt.Sprint(v)} },
				func(k int, a sumV1) string { return fmt.Sprintf("%d:%d", k, a.Sum) })
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			src.release(40)
			waitUntil(t, "40 records read", func() bool { return sourceOut(j) >= 40 })
			path, err := j.StopWithSavepoint(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			first, _ := dirState(t, dir1)
			if len(first) != 40 {
				t.Fatalf("the first job committed %d lines, want 40", len(first))
			}
			before := map[int]int64{} // numbers of a key the first job read
			for _, l := range first {
				var k int
				var s int64
				if _, err := fmt.Sscanf(l, "%d:%d", &k, &s); err != nil {
					t.Fatal(err)
				}
				before[k]++
			}

			snap, err := checkpoint.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			env2 := New(Options{Parallelism: 3, Clock: manual(), Restore: snap, StateBackend: be, TmpDir: t.TempDir()})
			src2 := newGated(ints(n))
			src2.open()
			migSums(env2, src2, dir2, func(a sumV2, v int) sumV2 { return sumV2{a.Sum + int64(v), a.Count + 1} },
				func(k int, a sumV2) string { return fmt.Sprintf("%d:%d:%d", k, a.Sum, a.Count) })
			if _, err := env2.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			all, _ := dirState(t, dir2)
			second := slices.DeleteFunc(all, func(l string) bool { return strings.Count(l, ":") != 2 }) // the second job's lines
			if len(second) != n-40 {
				t.Fatalf("the second job committed %d lines, want %d", len(second), n-40)
			}
			for k := range 5 {
				var total, count int64
				for v := range n {
					if v%5 == k {
						total += int64(v)
						count++
					}
				}
				want := fmt.Sprintf("%d:%d:%d", k, total, count-before[k])
				found := false
				for _, l := range second {
					found = found || l == want
				}
				if !found {
					t.Fatalf("key %d: no line %q among %s", k, want, strings.Join(second, " "))
				}
			}
		})
	}
}
