package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/formats/parquet"
)

// FileSink writes rolling part files into a directory, one series of parts
// per subtask, as Flink's FileSink (see the package doc for names, rolling
// and the commit protocol). It holds configuration only; Writer opens a
// subtask's writer and Commit publishes what writers prepared.
type FileSink[T any] struct {
	dir    string
	format string // for errors
	cfg    config
	// encode appends one record of a row format, its line end included
	encode func(dst []byte, v T) []byte
	// bulk returns the formats sink of one part file of a bulk format
	bulk func(path string) formats.Sink[T]
}

// Text returns a row-format sink writing each string as a line (Flink's
// SimpleStringEncoder).
func Text(dir string, opts ...Option) *FileSink[string] {
	return Rows(dir, func(dst []byte, s string) []byte { return append(append(dst, s...), '\n') }, opts...)
}

// TextOf returns a row-format sink writing each record as its ToString and a
// line end: Flink's SimpleStringEncoder, "(to,1)" for a WordCount tuple.
func TextOf[T any](dir string, opts ...Option) *FileSink[T] {
	str := ToString[T]()
	return Rows(dir, func(dst []byte, v T) []byte { return append(str(dst, v), '\n') }, opts...)
}

// Rows returns a row-format sink (Flink's forRowFormat with an Encoder):
// encode appends one record's bytes, its line end included, to dst.
func Rows[T any](dir string, encode func(dst []byte, v T) []byte, opts ...Option) *FileSink[T] {
	return &FileSink[T]{dir: dir, format: "rows", cfg: newConfig(opts), encode: encode}
}

// CSV returns a bulk-format sink writing each part as a CSV file with
// formats/csv (a header row unless format.NoHeader), as Flink's CSV bulk
// writer; parts roll on checkpoints.
func CSV[T any](dir string, format csv.Options, opts ...Option) *FileSink[T] {
	opts = append([]Option{WithRollingPolicy(OnCheckpointRollingPolicy{})}, opts...)
	return &FileSink[T]{dir: dir, format: "csv", cfg: newConfig(opts),
		bulk: func(path string) formats.Sink[T] { return csv.NewSink[T](path, format) }}
}

// Parquet returns a bulk-format sink writing each part as a Parquet file
// with formats/parquet, as Flink's ParquetWriterFactory; parts roll on
// checkpoints. Part names end in ".parquet" unless an OutputFileConfig says
// otherwise, so that formats/parquet reads the directory.
func Parquet[T any](dir string, format []parquet.SinkOption, opts ...Option) *FileSink[T] {
	opts = append([]Option{WithRollingPolicy(OnCheckpointRollingPolicy{}),
		WithOutputFileConfig(OutputFileConfig{PartSuffix: ".parquet"})}, opts...)
	return &FileSink[T]{dir: dir, format: "parquet", cfg: newConfig(opts),
		bulk: func(path string) formats.Sink[T] { return parquet.NewSink[T](path, format...) }}
}

// Dir returns the output directory.
func (s *FileSink[T]) Dir() string { return s.dir }

// CheckInterval is how often the runtime calls each writer's Tick.
func (s *FileSink[T]) CheckInterval() time.Duration { return s.cfg.interval }

// Writer opens the writer of subtask i of n. A fresh job passes no state: its writer
// removes the hidden parts of subtask i that a killed run left. A
// restored job passes every subtask's Snapshot of the checkpoint it restores
// (Flink's union state, so that any parallelism works): the writer continues
// after the highest part counter among them, so no name is used twice, and
// removes the hidden files that the subtasks of those states whose index is
// i modulo n left after the checkpoint: their in-progress parts, and the
// pending parts of checkpoints that did not complete, and the committed
// parts numbered from their counter on, which a later checkpoint or
// savepoint than the restored one committed (said through WithNotices). It
// keeps the pending parts of the checkpoint, which the restored
// committables name. A writer
// also starts after every part of subtask i already committed in the
// directory (by an earlier job, or a run after an older checkpoint), so
// Commit never replaces a committed file.
func (s *FileSink[T]) Writer(i, n int, restored ...[]byte) (*FileWriter[T], error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("stream/sink: %s: subtask %d of %d out of range", s.dir, i, n)
	}
	if err := s.cfg.validate(s.dir); err != nil {
		return nil, err
	}
	if s.bulk != nil {
		if _, ok := s.cfg.policy.(OnCheckpointRollingPolicy); !ok {
			return nil, fmt.Errorf("stream/sink: %s: %s is a bulk format: its parts roll on checkpoints only (OnCheckpointRollingPolicy)", s.dir, s.format)
		}
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, errorf("create", s.dir, err)
	}
	w := &FileWriter[T]{s: s, subtask: i, nonce: newNonce()}
	stray := map[int]uint64{} // old subtask -> its next counter
	for _, b := range restored {
		sub, next, err := decodeState(b)
		if err != nil {
			return nil, fmt.Errorf("%w (restoring %s)", err, s.dir)
		}
		w.next = max(w.next, next)
		if sub%n == i {
			stray[sub] = next
		}
	}
	// Committed parts of those subtasks from after the checkpoint were
	// committed by a later checkpoint or savepoint than the one the job
	// restores from (it fell back past a damaged one, or resumes its
	// checkpoints after a stop with savepoint): their records are written
	// again, so they go, and the sink says so.
	// A fresh writer removes the hidden parts of its subtask: a killed run
	// that no checkpoint names left them.
	var removed []string
	err := s.scanNames(func(name string, sub int, c uint64, k partKind) bool {
		if len(restored) == 0 {
			return sub == i && (k == inProgress || k == pending)
		}
		next, ok := stray[sub]
		if ok && k == committed && c >= next {
			removed = append(removed, name)
		}
		return ok && (k == inProgress || k == pending && c >= next)
	})
	for _, name := range removed {
		if err != nil {
			break
		}
		if rerr := os.Remove(filepath.Join(s.dir, name)); rerr != nil && !os.IsNotExist(rerr) {
			err = errorf("remove", filepath.Join(s.dir, name), rerr)
		}
	}
	if err == nil && len(removed) > 0 {
		err = syncDir(s.dir)
		if s.cfg.notice != nil {
			s.cfg.notice(fmt.Sprintf("stream/sink: %s: removed %d committed part(s) written after the checkpoint restored, whose records are written again: %s",
				s.dir, len(removed), strings.Join(removed, ", ")))
		}
	}
	// never reuse a committed name, even of a run restored from an older
	// checkpoint
	if err == nil {
		err = s.scan(func(sub int, c uint64, k partKind) bool {
			if k == committed && sub == i {
				w.next = max(w.next, c+1)
			}
			return false
		})
	}
	if err != nil {
		return nil, err
	}
	w.start = w.next
	return w, nil
}

// scan calls drop with every part file of the directory and removes the
// hidden ones for which it returns true.
func (s *FileSink[T]) scan(drop func(sub int, counter uint64, k partKind) bool) error {
	return s.scanNames(func(_ string, sub int, c uint64, k partKind) bool { return drop(sub, c, k) })
}

// scanNames is scan with each file's name.
func (s *FileSink[T]) scanNames(drop func(name string, sub int, counter uint64, k partKind) bool) error {
	return s.scanNonces(func(name string, sub int, c uint64, k partKind, _ string) bool { return drop(name, sub, c, k) })
}

// scanNonces is scanNames with each hidden file's nonce.
func (s *FileSink[T]) scanNonces(drop func(name string, sub int, counter uint64, k partKind, nonce string) bool) error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return errorf("list", s.dir, err)
	}
	for _, e := range ents {
		sub, c, k, nonce := s.cfg.parsePartNonce(e.Name())
		if k == notPart || !drop(e.Name(), sub, c, k, nonce) || k == committed {
			continue
		}
		p := filepath.Join(s.dir, e.Name())
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return errorf("remove", p, err)
		}
	}
	return nil
}
