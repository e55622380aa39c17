package kafka

import (
	"strconv"
	"testing"

	"github.com/weirdata/weir/stream/sink"
)

// BenchmarkSinkWriter is the cost per record of a sink writer producing to
// the in-process broker: ns/op is ns per record, flushed every 10,000
// records as a barrier would.
func BenchmarkSinkWriter(b *testing.B) {
	for _, d := range []Delivery{AtLeastOnce, ExactlyOnce} {
		b.Run(d.String(), func(b *testing.B) {
			cfg := cluster(b, 4, "out")
			s, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: d, TransactionalIDPrefix: "bench"}, func(v int, r *Record) error {
				r.Value = strconv.AppendInt(r.Value, int64(v), 10)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			w, err := s.CreateWriter(sink.InitContext{Parallelism: 1, Checkpointing: true})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			ctx := sink.Context{Timestamp: sink.NoTimestamp}
			id := int64(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := w.Write(i, ctx); err != nil {
					b.Fatal(err)
				}
				if i%10000 == 9999 {
					id++
					if err := w.Flush(false); err != nil {
						b.Fatal(err)
					}
					if _, err := w.PrepareCommit(id); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := w.Flush(true); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkCommit is the cost of one exactly-once checkpoint's commit:
// ns/op is one transaction of 1,000 records prepared (flushed, handed over)
// and committed; the writes are not timed.
func BenchmarkCommit(b *testing.B) {
	cfg := cluster(b, 4, "out")
	s, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: ExactlyOnce, TransactionalIDPrefix: "bench"}, ValueBytes())
	if err != nil {
		b.Fatal(err)
	}
	w, err := s.CreateWriter(sink.InitContext{Parallelism: 1, Checkpointing: true})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	c, err := s.CreateCommitter(sink.InitContext{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := sink.Context{Timestamp: sink.NoTimestamp}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for k := range 1000 {
			if err := w.Write(strconv.Itoa(k), ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		cs, err := w.PrepareCommit(int64(i + 1))
		if err != nil || len(cs) != 1 {
			b.Fatal(cs, err)
		}
		r := &request{c: cs[0]}
		if err := c.Commit([]sink.CommitRequest[Committable]{r}); err != nil || r.err != nil {
			b.Fatal(err, r.err)
		}
	}
}
