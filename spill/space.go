package spill

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by a Space, Writer or Reader used after it was closed,
// finished or aborted.
var ErrClosed = errors.New("spill: closed")

// Handle names a finished spill file and says what it holds. Only a Handle
// returned by Writer.Finish can be opened: the Reader checks the file against
// Records, Bytes and DiskBytes, so a truncated file is an error even when it is
// cut at a block boundary.
type Handle struct {
	Name      string // file name in the FS
	Records   int64  // number of records
	Bytes     int64  // sum of the records' lengths
	DiskBytes int64  // file size (headers and compressed payloads)
}

// Stats counts a Space's I/O since NewSpace.
type Stats struct {
	BytesWritten     int64 // record bytes appended (raw, before framing and compression)
	DiskBytesWritten int64 // bytes written to files (headers and compressed payloads)
	BytesRead        int64 // record bytes returned by Readers (counted at their end or Close)
	DiskBytesRead    int64 // bytes read from files
	Files            int64 // files created
}

// Space is one operator's set of spill files: it names them after the owner and
// a sequence number, tracks which exist, and removes them.
//
// Space's methods are safe for concurrent use. Each Writer and Reader belongs to
// one goroutine at a time, and Close must not run concurrently with calls on the
// Space's Writers and Readers: the operator calls it once its goroutines have
// stopped (on success, error or cancellation). DiskFS.Close is the last resort
// when even that cannot happen.
type Space struct {
	fs     FS
	prefix string
	opts   Options

	seq   atomic.Int64
	stats struct {
		written, diskWritten, read, diskRead, files atomic.Int64
	}

	mu      sync.Mutex
	closed  bool
	files   map[string]struct{} // created and not yet removed
	writers map[*Writer]struct{}
	readers map[*Reader]struct{}
}

var spaceSeq atomic.Int64

// NewSpace returns a Space that keeps its files in fs, under names that start
// with owner (characters other than letters, digits, '.', '_' and '-' become
// '_') followed by a number unique in this process, so two Spaces with the same
// owner never collide.
func NewSpace(fs FS, owner string, opts Options) *Space {
	clean := strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, owner)
	if clean == "" {
		clean = "spill"
	}
	return &Space{
		fs:      fs,
		prefix:  fmt.Sprintf("%s-%d-", clean, spaceSeq.Add(1)),
		opts:    opts.EnsureDefaults(),
		files:   map[string]struct{}{},
		writers: map[*Writer]struct{}{},
		readers: map[*Reader]struct{}{},
	}
}

// Options returns the Space's options, defaults filled in.
func (s *Space) Options() Options { return s.opts }

// Create creates a new file and returns a Writer for it. The file belongs to the
// Space until Remove or Close, whatever happens to the Writer.
func (s *Space) Create() (*Writer, error) {
	if !s.opts.Codec.valid() {
		return nil, fmt.Errorf("spill: create: unknown codec %d", s.opts.Codec)
	}
	name := fmt.Sprintf("%s%06d.spill", s.prefix, s.seq.Add(1))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("spill: create %s: %w", name, ErrClosed)
	}
	s.files[name] = struct{}{} // before the FS call, so Close never misses it
	s.mu.Unlock()

	f, err := s.fs.Create(name)
	if err != nil {
		s.mu.Lock()
		delete(s.files, name)
		s.mu.Unlock()
		return nil, fmt.Errorf("spill: create %s: %w", name, err)
	}
	s.stats.files.Add(1)
	w := newWriter(s, name, f)
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.writers[w] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		w.Abort()
		return nil, fmt.Errorf("spill: create %s: %w", name, ErrClosed)
	}
	return w, nil
}

// Open opens a finished file and returns a Reader that reads it ahead in the
// background.
func (s *Space) Open(h Handle) (*Reader, error) {
	if h.Records < 0 || h.Bytes < 0 || h.DiskBytes < 0 {
		return nil, fmt.Errorf("spill: open %s: bad handle %+v", h.Name, h)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("spill: open %s: %w", h.Name, ErrClosed)
	}
	f, err := s.fs.Open(h.Name)
	if err != nil {
		return nil, fmt.Errorf("spill: open %s: %w", h.Name, err)
	}
	r := newReader(s, h, f)
	s.mu.Lock()
	closed = s.closed
	if !closed {
		s.readers[r] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		r.Close()
		return nil, fmt.Errorf("spill: open %s: %w", h.Name, ErrClosed)
	}
	return r, nil
}

// Remove removes a finished file. Readers open on it keep reading (the FS
// permitting); Close them as usual.
func (s *Space) Remove(h Handle) error { return s.remove(h.Name) }

func (s *Space) remove(name string) error {
	if err := s.fs.Remove(name); err != nil {
		return fmt.Errorf("spill: remove %s: %w", name, err)
	}
	s.mu.Lock()
	delete(s.files, name)
	s.mu.Unlock()
	return nil
}

// Close aborts open Writers, closes open Readers and removes every file of the
// Space that still exists. It returns the errors of the removals, joined. After
// Close, Create and Open fail with ErrClosed. Close is safe to call twice; the
// second call does nothing.
func (s *Space) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	writers := make([]*Writer, 0, len(s.writers))
	for w := range s.writers {
		writers = append(writers, w)
	}
	readers := make([]*Reader, 0, len(s.readers))
	for r := range s.readers {
		readers = append(readers, r)
	}
	s.mu.Unlock()

	var errs []error
	for _, w := range writers {
		w.Abort()
	}
	for _, r := range readers {
		r.Close() // errors of readers are of no interest once the data is dropped
	}
	s.mu.Lock()
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	s.mu.Unlock()
	for _, n := range names {
		if err := s.remove(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stats returns the Space's counters.
func (s *Space) Stats() Stats {
	return Stats{
		BytesWritten:     s.stats.written.Load(),
		DiskBytesWritten: s.stats.diskWritten.Load(),
		BytesRead:        s.stats.read.Load(),
		DiskBytesRead:    s.stats.diskRead.Load(),
		Files:            s.stats.files.Load(),
	}
}

// Files returns the names of the Space's files that exist (created and not yet
// removed), in no particular order.
func (s *Space) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	return names
}

func (s *Space) forgetWriter(w *Writer) {
	s.mu.Lock()
	delete(s.writers, w)
	s.mu.Unlock()
}

func (s *Space) forgetReader(r *Reader) {
	s.mu.Lock()
	delete(s.readers, r)
	s.mu.Unlock()
}
