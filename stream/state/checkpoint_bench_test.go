package state_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/state/disk"
)

// countingShared counts the bytes written to shared files.
type countingShared struct {
	*checkpoint.Dir
	n int64
}

type countingWriter struct {
	io.WriteCloser
	n *int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	*w.n += int64(n)
	return n, err
}

func (c *countingShared) CreateShared(name string) (io.WriteCloser, error) {
	w, err := c.Dir.CreateShared(name)
	return countingWriter{w, &c.n}, err
}

// BenchmarkCheckpoint measures a checkpoint of a keyed ValueState of
// WEIR_STATE_BENCH_MB megabytes (default 16; 1024 for a gigabyte) after 1%
// of its keys were updated: a full snapshot of the heap and of the disk
// backend, and an incremental one of the disk backend into a
// checkpoint.Dir, and the synchronous part of the heap backend's
// asynchronous snapshot (Capture; the write is not timed). It reports the
// bytes each checkpoint writes (inline state plus new shared files) as
// B/ckpt.
func BenchmarkCheckpoint(b *testing.B) {
	mb := benchMB(b)
	const valueLen = 100
	keys := mb << 20 / (valueLen + 16)
	for _, c := range []struct {
		name                       string
		onDisk, increment, capture bool
	}{{"heap/full", false, false, false}, {"heap/capture", false, false, true}, {"disk/full", true, false, false}, {"disk/incremental", true, true, false}} {
		b.Run(fmt.Sprintf("%s/%dMB", c.name, mb), func(b *testing.B) {
			dir, err := checkpoint.OpenDir(b.TempDir(), checkpoint.DirOptions{Retained: 1})
			if err != nil {
				b.Fatal(err)
			}
			shared := &countingShared{Dir: dir}
			all := state.KeyGroupRange{Start: 0, End: 127}
			o := state.Options{Name: "bench", MaxParallelism: 128, Groups: all, Shared: shared}
			if c.onDisk {
				st, err := disk.Open(disk.Options{Name: "bench", Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				o.Store = st
			}
			be, err := state.NewBackend[int64](o)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Dispose()
			v, err := state.GetValueState[int64](be, state.ValueDescriptor[string]{Name: "v"})
			if err != nil {
				b.Fatal(err)
			}
			val := strings.Repeat("v", valueLen)
			for k := range int64(keys) {
				be.SetCurrentKey(k)
				v.Update(val)
			}
			ckpt := func(id int64) int64 {
				var buf bytes.Buffer
				if c.capture {
					cp, err := be.Capture(all)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					defer b.StartTimer()
					defer cp.Release()
					if _, err := cp.WriteTo(&buf); err != nil {
						b.Fatal(err)
					}
					return int64(buf.Len())
				}
				if !c.increment {
					if err := be.Snapshot(&buf, all); err != nil {
						b.Fatal(err)
					}
					return int64(buf.Len())
				}
				before := shared.n
				names, err := be.SnapshotIncremental(&buf)
				if err != nil {
					b.Fatal(err)
				}
				s := &checkpoint.Snapshot{ID: id, Operators: []checkpoint.OperatorState{{ID: "op", Parallelism: 1, MaxParallelism: 128,
					Subtasks: []checkpoint.SubtaskState{{State: buf.Bytes(), Shared: names}}}}}
				if _, err := dir.Store(s); err != nil {
					b.Fatal(err)
				}
				return int64(buf.Len()) + shared.n - before
			}
			ckpt(1) // the first checkpoint writes everything
			var size int64
			next := int64(0)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				for range keys / 100 { // 1% of the keys, in turn
					be.SetCurrentKey(next % int64(keys))
					v.Update(val[:valueLen-1] + strconv.Itoa(i%10))
					next += 97
				}
				b.StartTimer()
				size += ckpt(int64(i + 2))
			}
			b.ReportMetric(float64(size)/float64(b.N), "B/ckpt")
			if err := be.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkRestore measures the restore of the state BenchmarkCheckpoint
// builds (WEIR_STATE_BENCH_MB megabytes of a keyed ValueState) into a new
// backend of all key groups: a full snapshot into the heap and into the
// disk backend, and an incremental snapshot of the disk backend (its
// shared files copied from the checkpoint directory into a new store).
// The values of three keys are checked after each restore, untimed.
func BenchmarkRestore(b *testing.B) {
	mb := benchMB(b)
	const valueLen = 100
	keys := mb << 20 / (valueLen + 16)
	all := state.KeyGroupRange{Start: 0, End: 127}
	val := strings.Repeat("v", valueLen)
	dir, err := checkpoint.OpenDir(b.TempDir(), checkpoint.DirOptions{Retained: 1})
	if err != nil {
		b.Fatal(err)
	}
	// build fills a backend (on disk when store is set) with the state.
	build := func(store state.Store) *state.Backend[int64] {
		be, err := state.NewBackend[int64](state.Options{Name: "bench", MaxParallelism: 128, Groups: all, Shared: dir, Store: store})
		if err != nil {
			b.Fatal(err)
		}
		v, err := state.GetValueState[int64](be, state.ValueDescriptor[string]{Name: "v"})
		if err != nil {
			b.Fatal(err)
		}
		for k := range int64(keys) {
			be.SetCurrentKey(k)
			v.Update(val)
		}
		return be
	}
	openDisk := func() state.Store {
		st, err := disk.Open(disk.Options{Name: "bench", Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	// One disk backend gives both snapshots: a full one is in the heap
	// backend's format whatever the backend.
	var full, incremental bytes.Buffer
	onDisk := build(openDisk())
	if err := onDisk.Snapshot(&full, all); err != nil {
		b.Fatal(err)
	}
	names, err := onDisk.SnapshotIncremental(&incremental)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := dir.Store(&checkpoint.Snapshot{ID: 1, Operators: []checkpoint.OperatorState{{ID: "op", Parallelism: 1, MaxParallelism: 128,
		Subtasks: []checkpoint.SubtaskState{{State: incremental.Bytes(), Shared: names}}}}}); err != nil {
		b.Fatal(err)
	}
	onDisk.Dispose()
	for _, c := range []struct {
		name   string
		onDisk bool
		snap   []byte
	}{{"heap/full", false, full.Bytes()}, {"disk/full", true, full.Bytes()}, {"disk/incremental", true, incremental.Bytes()}} {
		b.Run(fmt.Sprintf("%s/%dMB", c.name, mb), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				o := state.Options{Name: "bench", MaxParallelism: 128, Groups: all, Shared: dir}
				if c.onDisk {
					o.Store = openDisk()
				}
				be, err := state.NewBackend[int64](o)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := be.Restore(bytes.NewReader(c.snap)); err != nil {
					b.Fatal(err)
				}
				v, err := state.GetValueState[int64](be, state.ValueDescriptor[string]{Name: "v"})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				for _, k := range []int64{0, int64(keys) / 2, int64(keys) - 1} {
					be.SetCurrentKey(k)
					if got, ok := v.Value(); !ok || got != val {
						b.Fatalf("key %d restored as %q, %v", k, got, ok)
					}
				}
				be.Dispose()
				b.StartTimer()
			}
		})
	}
}

// benchMB is the state size of the checkpoint benchmarks in megabytes:
// WEIR_STATE_BENCH_MB, 16 by default.
func benchMB(b *testing.B) int {
	s := os.Getenv("WEIR_STATE_BENCH_MB")
	if s == "" {
		return 16
	}
	mb, err := strconv.Atoi(s)
	if err != nil {
		b.Fatal(err)
	}
	return mb
}
