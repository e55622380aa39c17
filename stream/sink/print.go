package sink

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// Print is Flink's print sink (DataStream.print and printToErr): every
// record is written as one line, its ToString, after a prefix naming the
// sink and the subtask (see Writer). Subtasks share the output; a batch's
// lines are written at once, so lines of different subtasks never mix.
type Print[T any] struct {
	out        io.Writer
	identifier string
	format     func(dst []byte, v T) []byte
	mu         *sync.Mutex // guards out
}

// stdMu guards the standard streams, which every Print to them shares.
var stdMu sync.Mutex

// NewPrint returns a sink printing to standard output (Flink's print);
// identifier ("" for none) starts every line.
func NewPrint[T any](identifier string) *Print[T] {
	return &Print[T]{out: os.Stdout, identifier: identifier, format: ToString[T](), mu: &stdMu}
}

// NewPrintErr returns a sink printing to standard error (Flink's printToErr).
func NewPrintErr[T any](identifier string) *Print[T] {
	return &Print[T]{out: os.Stderr, identifier: identifier, format: ToString[T](), mu: &stdMu}
}

// NewPrintTo returns a sink printing to w, as NewPrint does to standard
// output.
func NewPrintTo[T any](w io.Writer, identifier string) *Print[T] {
	return &Print[T]{out: w, identifier: identifier, format: ToString[T](), mu: new(sync.Mutex)}
}

// Writer returns the writer of subtask i of n. As Flink's
// PrintSinkOutputWriter, its prefix is "identifier:N> " where N is i+1, the
// identifier and its colon left out when the identifier is empty, N and
// the colon left out when n is 1, and "> " left out when both are.
func (p *Print[T]) Writer(i, n int) (*PrintWriter[T], error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("stream/sink: print: subtask %d of %d out of range", i, n)
	}
	prefix := p.identifier
	if n > 1 {
		if prefix != "" {
			prefix += ":"
		}
		prefix += strconv.Itoa(i + 1)
	}
	if prefix != "" {
		prefix += "> "
	}
	return &PrintWriter[T]{p: p, prefix: prefix}, nil
}

// PrintWriter prints one subtask's records. It is used by one goroutine.
type PrintWriter[T any] struct {
	p      *Print[T]
	prefix string
	buf    []byte
}

// Write prints one line per record.
func (w *PrintWriter[T]) Write(batch []T) error {
	w.buf = w.buf[:0]
	for i := range batch {
		w.buf = append(w.buf, w.prefix...)
		w.buf = w.p.format(w.buf, batch[i])
		w.buf = append(w.buf, '\n')
	}
	if len(w.buf) == 0 {
		return nil
	}
	w.p.mu.Lock()
	_, err := w.p.out.Write(w.buf)
	w.p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("stream/sink: print: %w", err)
	}
	return nil
}
