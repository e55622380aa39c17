package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/formats/csv"
)

// TestCancelEndsEveryReader runs each kind of reader in a goroutine, mid-way
// through its input or waiting for more, cancels its context and expects
// Next to return context.Canceled promptly; after Close no goroutine is
// left (Parquet and iter.Seq readers hold a suspended iter.Pull).
func TestCancelEndsEveryReader(t *testing.T) {
	dir := t.TempDir()
	var big strings.Builder
	big.WriteString("n,name\n")
	for i := range 5000 {
		fmt.Fprintf(&big, "%d,x%d\n", i, i)
	}
	csvPath := writeFile(t, dir, "big.csv", big.String())
	tailPath := writeFile(t, dir, "tail.log", "one\n")
	watched := t.TempDir()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	quiet := make(chan struct{})
	accepted := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		close(accepted)
		<-quiet // say nothing until the test ends
		c.Close()
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	sources := map[string]func() (Source[string], error){
		"csv": func() (Source[string], error) {
			src, err := Files(CSV[struct{ Name string }](csv.Options{BatchRows: 10}), csvPath)
			if err != nil {
				return nil, err
			}
			return asStrings(src, func(r struct{ Name string }) string { return r.Name }), nil
		},
		"seq": func() (Source[string], error) {
			return FromSeq(func(yield func(string) bool) {
				for i := 0; ; i++ {
					if !yield(fmt.Sprint(i)) {
						return
					}
				}
			}, BatchSize(10)), nil
		},
		"tail":    func() (Source[string], error) { return Tail(tailPath) },
		"monitor": func() (Source[string], error) { return MonitorDirectory(Text(), watched, time.Hour) },
		"socket":  func() (Source[string], error) { return Socket("127.0.0.1", port, "\n", PollInterval(time.Hour)) },
		"generator": func() (Source[string], error) {
			return Generator(func(i int64) string { return fmt.Sprint(i) }, 0, 0.01), nil
		},
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range sources {
			if !yield(k) {
				return
			}
		}
	}) {
		src, err := sources[name]()
		if err != nil {
			t.Fatal(err)
		}
		en, err := src.Enumerator(1, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := src.Reader(ReaderContext{Parallelism: 1, Splits: en})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		batches := make(chan int, 1000)
		done := make(chan error, 1)
		go func() {
			for {
				b, err := r.Next(ctx)
				if err != nil {
					done <- err
					return
				}
				if len(batches) < cap(batches) {
					batches <- len(b.Records)
				}
				if name == "csv" || name == "seq" {
					// Stay mid-way: wait for the cancellation between batches.
					<-ctx.Done()
				}
			}
		}()
		if name == "socket" {
			<-accepted
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Next returned %v, want context.Canceled", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Next did not return after cancellation", name)
		}
		if err := r.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
	close(quiet)
	ln.Close()
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

// asStrings maps a source's records to strings (a test helper).
func asStrings[T any](src Source[T], fn func(T) string) Source[string] {
	return &mapped[T]{src: src, fn: fn}
}

type mapped[T any] struct {
	src Source[T]
	fn  func(T) string
}

func (m *mapped[T]) Boundedness() Boundedness { return m.src.Boundedness() }
func (m *mapped[T]) Enumerator(n int, st *EnumeratorState) (Enumerator, error) {
	return m.src.Enumerator(n, st)
}
func (m *mapped[T]) Reader(rc ReaderContext) (Reader[string], error) {
	r, err := m.src.Reader(rc)
	return &mappedReader[T]{Reader: r, fn: m.fn}, err
}

type mappedReader[T any] struct {
	Reader[T]
	fn func(T) string
}

func (r *mappedReader[T]) Next(ctx context.Context) (Batch[string], error) {
	b, err := r.Reader.Next(ctx)
	out := make([]string, len(b.Records))
	for i, v := range b.Records {
		out[i] = r.fn(v)
	}
	return Batch[string]{Split: b.Split, First: b.First, Records: out, End: b.End}, err
}
