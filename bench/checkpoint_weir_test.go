package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
)

// The cost of checkpoints: the tumbling window job of window_weir_test.go
// on each state backend, without checkpoints and with a checkpoint every
// second into a checkpoint.Dir on local disk (the disk backend's full and
// incremental). Reported: events/s, the
// checkpoints completed, and the mean checkpoint duration and size written.
//
//	WEIR_STREAM_EVENTS=80000000 go test ./bench -run '^$' -bench 'WindowCheckpointing/backend=heap' -count 3
//	WEIR_STREAM_EVENTS=4000000 go test ./bench -run '^$' -bench 'WindowCheckpointing/backend=disk' -count 3
func BenchmarkWindowCheckpointing(b *testing.B) {
	for _, c := range []struct {
		name        string
		interval    time.Duration
		backend     stream.StateBackend
		incremental bool
	}{
		{"backend=heap/checkpoints=none", 0, stream.HeapBackend, false},
		{"backend=heap/checkpoints=1s", time.Second, stream.HeapBackend, false},
		{"backend=disk/checkpoints=none", 0, stream.DiskBackend, false},
		{"backend=disk/checkpoints=1s", time.Second, stream.DiskBackend, false},
		{"backend=disk/checkpoints=1s-incremental", time.Second, stream.DiskBackend, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := streamEvents(b) &^ 1
			gen := windowEvent(n, windowEventsPerSecond(b, 200_000))
			var count, xor atomic.Int64
			var done, took, size int64
			for b.Loop() {
				count.Store(0)
				var job *stream.Job
				env := stream.New(stream.Options{Parallelism: streamWorkers, Mode: stream.Streaming,
					StateBackend: c.backend, Incremental: c.incremental, TmpDir: b.TempDir(), Started: func(j *stream.Job) { job = j }})
				if c.interval > 0 {
					dir, err := checkpoint.OpenDir(b.TempDir(), checkpoint.DirOptions{})
					if err != nil {
						b.Fatal(err)
					}
					env.EnableCheckpointing(c.interval).Storage = dir
				}
				out, err := windowJob(env, n, gen, time.Second, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				countSink(out, func(e tev) int64 { return e.Value }, &count, &xor)
				if _, err := env.Execute(context.Background()); err != nil {
					b.Fatal(err)
				}
				for _, s := range job.Checkpoints().Completed {
					done++
					took += int64(s.Duration)
					size += s.Size
				}
			}
			reportEvents(b, n)
			b.ReportMetric(float64(done)/float64(b.N), "checkpoints")
			if done > 0 {
				b.ReportMetric(float64(took)/float64(done)/1e6, "ms/checkpoint")
				b.ReportMetric(float64(size)/float64(done), "B/checkpoint")
			}
		})
	}
}
