package dbgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// TableNames are the eight TPC-H tables.
var TableNames = []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}

// Options configures Generate.
type Options struct {
	// Scale is the scale factor, 0 < Scale < 30000.
	Scale float64
	// Dir is the directory the files are written into (created if missing):
	// <Dir>/<table>.parquet.
	Dir string
	// Parallelism is the number of goroutines generating rows; < 1 means
	// runtime.GOMAXPROCS(0). The files do not depend on it.
	Parallelism int
	// Tables are the tables to write; empty means all eight.
	Tables []string
	// Progress, if set, is called after each batch of rows is written with
	// the table and the number of its rows written so far (-1 for nation and
	// region, written at once). Calls are serialized.
	Progress func(table string, rows int64)
}

// Block sizes, in rows of the driving table (variables for tests).
var (
	orderBlock int64 = 8192  // about 32k lineitems
	partBlock  int64 = 8192  // 32k partsupp rows
	otherBlock int64 = 32768 // customers, suppliers
)

// Generate writes the TPC-H tables of o.Tables at scale o.Scale, row for row
// what dbgen (as embedded in DuckDB) generates. Each file is written under a
// temporary name; only when every table is complete are they renamed to
// their final names, so a failed or cancelled run leaves no file behind.
func Generate(ctx context.Context, o Options) (err error) {
	sc, err := NewScale(o.Scale)
	if err != nil {
		return err
	}
	if o.Dir == "" {
		return fmt.Errorf("%s: no output directory", pkg)
	}
	want := map[string]bool{}
	for _, t := range o.Tables {
		if !slices.Contains(TableNames, t) {
			return fmt.Errorf("%s: unknown table %q (want one of %v)", pkg, t, TableNames)
		}
		want[t] = true
	}
	if len(want) == 0 {
		for _, t := range TableNames {
			want[t] = true
		}
	}
	p := o.Parallelism
	if p < 1 {
		p = runtime.GOMAXPROCS(0)
	}
	_, statErr := os.Stat(o.Dir)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	if os.IsNotExist(statErr) {
		// a directory made for this run goes if the run fails (and left it
		// empty)
		defer func() {
			if err != nil {
				os.Remove(o.Dir)
			}
		}()
	}
	// The orders and lineitem group (most of the data, its lineitem writer
	// the longest serial part) runs beside the other tables.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &generation{ctx: ctx, sc: sc, dir: o.Dir, workers: p, progress: o.Progress}
	defer func() {
		if err != nil {
			for _, f := range g.files {
				f.abort()
			}
		}
	}()
	var (
		wg        sync.WaitGroup
		ordersErr error
	)
	if want["orders"] || want["lineitem"] {
		wg.Go(func() {
			if ordersErr = g.orders(want["orders"], want["lineitem"]); ordersErr != nil {
				cancel()
			}
		})
	}
	otherErr := g.others(want)
	if otherErr != nil {
		cancel()
	}
	wg.Wait()
	switch {
	case ordersErr != nil && !errors.Is(ordersErr, context.Canceled):
		return ordersErr
	case otherErr != nil:
		return otherErr
	case ordersErr != nil:
		return ordersErr
	}
	for i, f := range g.files {
		if cerr := f.commit(); cerr != nil {
			for _, c := range g.files[:i] {
				os.Remove(c.name())
			}
			g.files = g.files[i+1:]
			return cerr
		}
	}
	return nil
}

// others writes the tables other than orders and lineitem.
func (g *generation) others(want map[string]bool) error {
	if want["part"] || want["partsupp"] {
		if err := g.parts(want["part"], want["partsupp"]); err != nil {
			return err
		}
	}
	if want["customer"] {
		if err := g.customers(); err != nil {
			return err
		}
	}
	if want["supplier"] {
		if err := g.suppliers(); err != nil {
			return err
		}
	}
	if want["nation"] {
		if err := g.small("nation", func() (file, error) { return writeAll(g.dir, "nation", Nations()) }); err != nil {
			return err
		}
	}
	if want["region"] {
		if err := g.small("region", func() (file, error) { return writeAll(g.dir, "region", Regions()) }); err != nil {
			return err
		}
	}
	return nil
}

// generation is the state of one Generate call.
type generation struct {
	ctx        context.Context
	sc         Scale
	dir        string
	workers    int
	progress   func(string, int64)
	progressMu sync.Mutex
	filesMu    sync.Mutex
	files      []file // closed, not yet committed
}

// keep adds closed files to those Generate commits.
func (g *generation) keep(fs ...file) {
	g.filesMu.Lock()
	defer g.filesMu.Unlock()
	g.files = append(g.files, fs...)
}

func (g *generation) report(table string, rows int64) {
	if g.progress == nil {
		return
	}
	g.progressMu.Lock()
	defer g.progressMu.Unlock()
	g.progress(table, rows)
}

func (g *generation) small(table string, write func() (file, error)) error {
	if err := g.ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	f, err := write()
	if err != nil {
		return err
	}
	g.keep(f)
	g.report(table, -1)
	return nil
}

// sink is one output table of a group: its writer and how to take its rows
// out of a block.
type sink[B, T any] struct {
	table string
	w     *tableWriter[T]
	rows  func(*B) []T
}

// consumer returns the function that writes a block's rows.
func (s *sink[B, T]) consumer(g *generation) func(*B) error {
	return func(b *B) error {
		if err := s.w.write(s.rows(b)); err != nil {
			return err
		}
		g.report(s.table, s.w.rows)
		return nil
	}
}

// openFile is a table file being written.
type openFile interface {
	file
	close() error
}

// finish closes the files of a group when err is nil and keeps them for the
// commit; otherwise (or when a close fails) it removes them all.
func (g *generation) finish(ws []openFile, err error) error {
	if err == nil {
		for i, w := range ws {
			if err = w.close(); err != nil {
				ws = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
	}
	if err != nil {
		for _, w := range ws {
			w.abort()
		}
		return err
	}
	for _, w := range ws {
		g.keep(w)
	}
	return nil
}

// open opens the writer of table into ws and adds its consumer to cons.
func open[B, T any](g *generation, ws *[]openFile, cons *[]func(*B) error, table string, rows func(*B) []T) error {
	w, err := newTableWriter[T](g.dir, table)
	if err != nil {
		return err
	}
	*ws = append(*ws, w)
	s := &sink[B, T]{table: table, w: w, rows: rows}
	*cons = append(*cons, s.consumer(g))
	return nil
}

// runGroup generates the n rows of a driving table in blocks of size rows,
// fill(b, from, to) making the rows [from, to) into a (recycled) block on
// g.workers goroutines, and hands the blocks to the consumers in order, each
// consumer on its own goroutine.
func runGroup[B any](g *generation, n int64, size int64, fill func(b *B, from, to int64), consumers []func(*B) error) error {
	blocks := int((n + size - 1) / size)
	pool := sync.Pool{New: func() any { return new(B) }}
	return runBlocks(g.ctx, blocks, g.workers,
		func(i int) *B {
			b := pool.Get().(*B)
			from := int64(i) * size
			fill(b, from, min(from+size, n))
			return b
		},
		func(b *B) { pool.Put(b) },
		consumers)
}

// runBlocks runs produce(i) for the blocks 0..n-1 on workers goroutines and
// hands every block to each consumer in block order, each consumer on its
// own goroutine; recycle gets a block back when all consumers are done with
// it. At most 2·workers+1 blocks exist at once. The first error (or the
// context's) stops everything and is returned once all goroutines are done.
func runBlocks[B any](ctx context.Context, n, workers int, produce func(int) B, recycle func(B), consumers []func(B) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inflight := 2*workers + 1
	var (
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel()
	}
	tokens := make(chan struct{}, inflight)
	for range inflight {
		tokens <- struct{}{}
	}
	slots := make([]chan B, inflight)
	refs := make([]atomic.Int32, inflight)
	for i := range slots {
		slots[i] = make(chan B, 1)
	}
	jobs := make(chan int)
	// dispatcher: hands out blocks in order, one token each
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		for i := range n {
			select {
			case <-tokens:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if ctx.Err() != nil {
					continue
				}
				// the slot is free: block i-inflight was consumed before
				// block i got its token
				slots[i%inflight] <- produce(i)
			}
		}()
	}
	type item struct {
		b    B
		slot int
	}
	chans := make([]chan item, len(consumers))
	for c := range consumers {
		chans[c] = make(chan item, inflight)
	}
	release := func(it item) {
		if refs[it.slot].Add(-1) == 0 {
			recycle(it.b)
			tokens <- struct{}{}
		}
	}
	// fan-out: takes the blocks in order and gives each to every consumer
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			for _, ch := range chans {
				close(ch)
			}
		}()
		for i := range n {
			s := i % inflight
			var b B
			select {
			case b = <-slots[s]:
			case <-ctx.Done():
				return
			}
			refs[s].Store(int32(len(consumers)))
			for _, ch := range chans {
				ch <- item{b, s}
			}
		}
	}()
	for c, consume := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range chans[c] {
				if ctx.Err() == nil {
					if err := consume(it.b); err != nil {
						fail(err)
					}
				}
				release(it)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := parent.Err(); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	return nil
}
