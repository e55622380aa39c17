package nexmark

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
)

// This file writes a query's rows as CSV: the encoders of the fields, and
// the sinks of the three outputs (standard output, part files, nothing).

// Op is the change a changelog row makes to an updating result.
type Op uint8

// The changes of a changelog, as Flink's RowKind.
const (
	Insert       Op = iota // +I
	UpdateBefore           // -U: the row as it was before an update
	UpdateAfter            // +U: the row after it
	Delete                 // -D
)

func (o Op) String() string {
	switch o {
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return "+I"
}

// appendField appends s as a CSV field (RFC 4180): quoted, its quotes
// doubled, when it holds a comma, a quote or a line break.
func appendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := range len(s) {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// appendMillis appends v/1000 as an exact decimal with 3 places:
// 870772 is 870.772.
func appendMillis(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		if v == -v { // the least int64 has no positive counterpart
			return append(b, "9223372036854775.808"...)
		}
		v = -v
	}
	b = strconv.AppendInt(b, v/1000, 10)
	f := v % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendDouble appends v in its shortest round-trip form, without an
// exponent.
func appendDouble(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'f', -1, 64) }

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// lockedWriter is one writer that the subtasks of a sink write whole
// blocks of lines to.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) write(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(b)
	return err
}

// writerSink writes rows to one io.Writer from every subtask: each
// subtask encodes its rows into a buffer of its own and writes it whole
// when it passes flushBytes, on every checkpoint and at the end, so lines
// never mix. It is at-least-once: a restore writes again the rows after
// the checkpoint.
type writerSink[R any] struct {
	out *lockedWriter
	enc func([]byte, R) []byte
}

const flushBytes = 64 << 10

func (s *writerSink[R]) CreateWriter(sink.InitContext) (sink.Writer[R], error) {
	return &rowWriter[R]{out: s.out, enc: s.enc}, nil
}

type rowWriter[R any] struct {
	out *lockedWriter
	enc func([]byte, R) []byte
	buf []byte
}

func (w *rowWriter[R]) Write(v R, _ sink.Context) error {
	w.buf = append(w.enc(w.buf, v), '\n')
	if len(w.buf) >= flushBytes {
		return w.Flush(false)
	}
	return nil
}

func (w *rowWriter[R]) WriteBatch(vals []R) error {
	for i := range vals {
		w.buf = append(w.enc(w.buf, vals[i]), '\n')
	}
	if len(w.buf) >= flushBytes {
		return w.Flush(false)
	}
	return nil
}

func (w *rowWriter[R]) Flush(bool) error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.out.write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("nexmark: write the output: %w", err)
	}
	return nil
}

// Close drops what was not flushed: the job failed or was cancelled.
func (w *rowWriter[R]) Close() error { return nil }

// headedSink is a FileSink of CSV rows whose subtask 0, when the job does
// not restore, starts its first part with the header line: the parts
// read in name order (part-0-0 first) are the CSV. Its writers are the
// FileSink's, with all their abilities.
type headedSink[R any] struct {
	dir    string
	header string
	enc    func([]byte, R) []byte
	opts   []sink.Option
	fs     *sink.FileSink[R] // the committer and the serializer
}

func newHeadedSink[R any](dir, header string, enc func([]byte, R) []byte, opts ...sink.Option) *headedSink[R] {
	s := &headedSink[R]{dir: dir, header: header, enc: enc, opts: opts}
	s.fs = sink.Rows(dir, func(dst []byte, v R) []byte { return append(enc(dst, v), '\n') }, opts...)
	return s
}

func (s *headedSink[R]) CreateWriter(ctx sink.InitContext) (sink.CommittingWriter[R, sink.Committable], error) {
	header := ctx.Subtask == 0 && !ctx.Restored
	pending := header
	fs := sink.Rows(s.dir, func(dst []byte, v R) []byte {
		if pending {
			pending = false
			return append(append(dst, s.header...), '\n')
		}
		return append(s.enc(dst, v), '\n')
	}, s.opts...)
	w, err := fs.CreateWriter(ctx)
	if err != nil {
		return nil, err
	}
	if header {
		var zero R // encoded as the header
		if err := w.Write(zero, sink.Context{Timestamp: sink.NoTimestamp}); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

func (s *headedSink[R]) CreateCommitter(ctx sink.InitContext) (sink.Committer[sink.Committable], error) {
	return s.fs.CreateCommitter(ctx)
}

func (s *headedSink[R]) CommittableSerializer() sink.Serializer[sink.Committable] {
	return s.fs.CommittableSerializer()
}

// UnionWriterState is the FileSink's: every old subtask's state to each.
func (s *headedSink[R]) UnionWriterState() bool { return s.fs.UnionWriterState() }

// output sends a query's rows where the job's parameters say: the RowSink
// hook, nothing, part files under Output, or standard output (whose
// header Run writes before the job starts).
func output[R any](b *build, rows stream.DataStream[R], enc func([]byte, R) []byte) {
	header, _ := Header(b.p.Query, b.p.Changelog)
	switch {
	case b.p.RowSink != nil:
		b.p.RowSink(stream.Map(rows, func(r R) []byte { return enc(nil, r) }).Name("EncodeRow"))
	case b.p.Discard:
		stream.Discard(rows).Name("Discard")
	case b.p.Output != "":
		var opts []sink.Option
		if b.o.Notice != nil {
			opts = append(opts, sink.WithNotices(b.o.Notice))
		}
		stream.SinkTo(rows, newHeadedSink(b.p.Output, header, enc, opts...)).Name("FileSink").UID("nexmark-sink")
	default:
		stream.SinkToWriter(rows, &writerSink[R]{out: b.stdout, enc: enc}).Name("CSV")
	}
}
