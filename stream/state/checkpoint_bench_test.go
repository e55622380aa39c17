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
	mb := 16
	if s := os.Getenv("WEIR_STATE_BENCH_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
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
