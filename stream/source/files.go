package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weirdata/weir/formats"
)

// Files reads a file, the files of a directory (sorted by name, skipping
// names that start with "." or "_", and for Parquet those not ending in
// .parquet) or the files a glob matches, each in
// format, as Flink's FileSource in its bounded mode. Each file is a split,
// read from its start, named by its absolute path: a checkpoint's
// positions resume from any working directory. A missing path, or a
// directory or glob naming no file, is an error here.
func Files[T any](format Format[T], path string, opts ...Option) (Source[T], error) {
	paths, err := formats.Expand(path, format.ext())
	if err != nil {
		return nil, fmt.Errorf("stream/source: %w", err)
	}
	for i, p := range paths {
		if paths[i], err = filepath.Abs(p); err != nil {
			return nil, fmt.Errorf("stream/source: %w", err)
		}
	}
	c := newConfig(opts)
	return &simple[T]{
		cfg:  c,
		kind: Bounded,
		splits: func(int) ([]Split, error) {
			return fileSplits(paths), nil
		},
		open: func(ctx context.Context, _ ReaderContext, s Split) (splitReader[T], error) {
			return format.open(ctx, s, c)
		},
	}, nil
}

func fileSplits(paths []string) []Split {
	out := make([]Split, len(paths))
	for i, p := range paths {
		out[i] = Split{ID: p, Len: -1}
	}
	return out
}

// MonitorDirectory reads the files of dir in format and keeps watching it,
// as Flink's FileSource with monitorContinuously(interval): the enumerator
// lists dir at start and then, when a reader asks for a split and none is
// pending, at most once per interval; every file not seen before (names
// starting with "." or "_" skipped, and for Parquet those not ending in
// .parquet) becomes a split, in order of discovery
// and by name within one listing, and is read once, from start to end. The
// files seen are the enumerator's state (EnumeratorState.Processed), so a
// restored source does not read them again. A file should appear complete
// (written elsewhere and renamed into dir), as with Flink. The source is
// unbounded; a missing directory is an error here and at every listing.
func MonitorDirectory[T any](format Format[T], dir string, interval time.Duration, opts ...Option) (Source[T], error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("stream/source: monitor: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("stream/source: monitor %s: not a directory", dir)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("stream/source: monitor %s: interval %v must be positive", dir, interval)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("stream/source: monitor: %w", err)
	}
	return &monitor[T]{cfg: newConfig(opts), format: format, dir: dir, interval: interval}, nil
}

type monitor[T any] struct {
	cfg      config
	format   Format[T]
	dir      string
	interval time.Duration
}

func (m *monitor[T]) Boundedness() Boundedness { return Unbounded }

func (m *monitor[T]) Enumerator(parallelism int, restored *EnumeratorState) (Enumerator, error) {
	return newEnumerator(nil, parallelism, m.cfg, restored, m.list, m.interval)
}

// list returns the files of dir as splits, sorted by name.
func (m *monitor[T]) list() ([]Split, error) {
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		return nil, fmt.Errorf("stream/source: monitor: %w", err)
	}
	var paths []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || !strings.HasSuffix(n, m.format.ext()) {
			continue
		}
		paths = append(paths, filepath.Join(m.dir, n))
	}
	slices.Sort(paths)
	return fileSplits(paths), nil
}

func (m *monitor[T]) Reader(rc ReaderContext) (Reader[T], error) {
	return newReader(rc, m.cfg, Unbounded, func(ctx context.Context, s Split) (splitReader[T], error) {
		return m.format.open(ctx, s, m.cfg)
	}), nil
}
