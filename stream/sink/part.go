package sink

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/weirdata/weir/formats"
)

// part is the in-progress part file of a writer.
type part[T any] struct {
	name     string // committed name, without the directory
	counter  uint64
	path     string // the in-progress file
	info     PartInfo
	f        *os.File      // row formats
	bw       *bufio.Writer // row formats
	fw       formats.Writer[T]
	complete bool // closed and at path: only the rename to pending is left
}

// openPart creates the in-progress file of the part with the given counter:
// path itself for row formats; for bulk formats the format's temporary file
// beside path, which the format's Commit renames to path. When the
// directory is gone (it can only go while it holds no file: another run
// that created it removed it empty on its failure), it is created again,
// as Flink's file systems create a part's parent directories.
func (s *FileSink[T]) openPart(subtask int, counter uint64, nonce string, info PartInfo) (*part[T], error) {
	name := s.cfg.partName(subtask, counter)
	p := &part[T]{name: name, counter: counter, path: inProgressPath(s.dir, name, nonce), info: info}
	if s.bulk != nil {
		create := func() (formats.Writer[T], error) { return s.bulk(p.path).Create(context.Background(), 0, 1) }
		fw, err := create()
		if errors.Is(err, fs.ErrNotExist) && os.MkdirAll(s.dir, 0o755) == nil {
			fw, err = create()
		}
		if err != nil {
			return nil, errorf("open", p.path, err)
		}
		p.fw = fw
		p.info.Size = -1
		return p, nil
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, formats.Mode)
	if errors.Is(err, fs.ErrNotExist) && os.MkdirAll(s.dir, 0o755) == nil {
		f, err = os.OpenFile(p.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, formats.Mode)
	}
	if err != nil {
		return nil, errorf("open", p.path, err)
	}
	p.f, p.bw = f, bufio.NewWriterSize(f, 1<<20)
	return p, nil
}

// finish completes the part at its in-progress path: flushed, synced and
// closed (a bulk format writes its footer). On error the file is removed.
func (p *part[T]) finish() error {
	if p.fw != nil {
		if err := p.fw.Close(); err != nil {
			return errorf("close", p.path, err)
		}
		if err := p.fw.Commit(); err != nil {
			return errorf("close", p.path, err)
		}
		p.complete = true
		return nil
	}
	err := p.bw.Flush()
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p.path)
		return errorf("close", p.path, err)
	}
	p.complete = true
	return nil
}

// abort removes the part's in-progress file.
func (p *part[T]) abort() error {
	switch {
	case p.complete:
	case p.fw != nil:
		p.fw.Abort()
		return nil
	default:
		p.f.Close()
	}
	if err := os.Remove(p.path); err != nil && !os.IsNotExist(err) {
		return errorf("abort", p.path, err)
	}
	return nil
}
