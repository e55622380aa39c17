// Command windowstats generates the input of the window-stats benchmark and
// runs the hand-written loop weir's `weir run window-stats` is compared with
// (bench/windowstats.sh):
//
//	windowstats gen --events N --keys K --out FILE
//	windowstats hand --input FILE --window SIZE --out-of-orderness D --output FILE
//
// gen writes a CSV with the header user,ts,amount: event i has a key of K
// (u0, u1, ...), the time 1,700,000,000,000 + i milliseconds give or take
// up to 500, and an amount in [0, 1000), all from a xorshift generator
// seeded with 1, so a file is the same on every machine.
//
// hand is one goroutine: it reads the file through a 1 MiB buffer, cuts
// each line at its commas, parses the time with strconv.ParseInt and the
// amount with strconv.ParseFloat, and keeps a sum per key and open tumbling
// window of SIZE: a map[string]float64 per window (--dense: an array by key
// number, the keys numbered through a map as they come). After every event the
// watermark is the largest time seen minus D minus 1; a window whose end -
// 1 is at or below it is written out ("key,start,end,sum", as window-stats
// writes it) and dropped, and an event whose window was already written
// is late and counted. It does what `weir run window-stats --aggregate
// sum --window tumbling:SIZE --out-of-orderness D` does with the allowed
// lateness 0, and nothing more: no quoting, no checkpoints, no late output.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: windowstats gen|hand [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = genMain(os.Args[2:])
	case "hand":
		err = handMain(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want gen or hand", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "windowstats:", err)
		os.Exit(1)
	}
}

func genMain(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	events := fs.Int64("events", 5_000_000, "events to write")
	keys := fs.Int("keys", 1000, "distinct keys")
	out := fs.String("out", "", "file to write (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *events < 0 || *keys < 1 {
		return errors.New("gen: want --out FILE, --events >= 0 and --keys >= 1")
	}
	tmp := *out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := Gen(w, *events, *keys); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, *out)
}

// Gen writes the header and n events over keys keys to w.
func Gen(w io.Writer, n int64, keys int) error {
	if _, err := io.WriteString(w, "user,ts,amount\n"); err != nil {
		return err
	}
	s := uint64(1)
	var b []byte
	for i := range n {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		b = append(b[:0], 'u')
		b = strconv.AppendUint(b, s%uint64(keys), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, 1_700_000_000_000+i+int64((s>>20)%1001)-500, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, (s>>40)%1000, 10)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func handMain(args []string) error {
	fs := flag.NewFlagSet("hand", flag.ContinueOnError)
	input := fs.String("input", "", "CSV file with the header user,ts,amount (required)")
	size := fs.Duration("window", 10*time.Second, "tumbling window size")
	ooo := fs.Duration("out-of-orderness", time.Second, "watermark bound")
	output := fs.String("output", "", "file to write the firings to (required)")
	dense := fs.Bool("dense", false, "keep the sums of a window in an array by key number instead of a map by key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *input == "" || *output == "" || *size < time.Millisecond || *ooo < 0 {
		return errors.New("hand: want --input, --output, --window of 1ms or more and --out-of-orderness of 0 or more")
	}
	start := time.Now()
	in, err := os.Open(*input)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(*output)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	st, err := Hand(in, w, size.Milliseconds(), ooo.Milliseconds(), *dense)
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "hand: %d events in %v (%.0f events/s), %d firings, %d late\n",
		st.Events, el.Round(time.Millisecond), float64(st.Events)/el.Seconds(), st.Firings, st.Late)
	return nil
}

// Stats count what Hand did.
type Stats struct{ Events, Firings, Late int64 }

// store keeps the sums of the open windows.
type store interface {
	// add adds v to key's sum in the window starting at start.
	add(start int64, key []byte, v float64)
	// fire writes and drops the windows whose start is at or below upTo.
	fire(upTo int64)
}

// Hand runs the hand loop over the CSV in r, writing the firings to w. With
// dense the sums of a window are an array by key number (keys numbered as
// they come), else a map by key.
func Hand(r io.Reader, w *bufio.Writer, size, ooo int64, dense bool) (Stats, error) {
	var st Stats
	br := bufio.NewReaderSize(r, 1<<20)
	header, err := br.ReadSlice('\n')
	if err != nil {
		return st, fmt.Errorf("header: %w", err)
	}
	cols := bytes.Split(bytes.TrimRight(header, "\r\n"), []byte(","))
	ki, ti, vi := slices.IndexFunc(cols, eq("user")), slices.IndexFunc(cols, eq("ts")), slices.IndexFunc(cols, eq("amount"))
	if ki < 0 || ti < 0 || vi < 0 {
		return st, fmt.Errorf("header %q: want the columns user, ts and amount", header)
	}
	var ws store = &mapStore{w: w, size: size, st: &st, open: map[int64]map[string]float64{}}
	if dense {
		ws = &denseStore{w: w, size: size, st: &st, ids: map[string]int32{}}
	}
	wm, maxTs := int64(-1<<63), int64(-1<<63)
	fields := make([][]byte, len(cols))
	for lineNo := 2; ; lineNo++ {
		l, err := br.ReadSlice('\n')
		if err == io.EOF && len(l) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return st, err
		}
		line := bytes.TrimRight(l, "\r\n")
		if len(line) == 0 {
			continue
		}
		n := 0
		for n < len(fields) {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				fields[n] = line
				n++
				break
			}
			fields[n], line = line[:i], line[i+1:]
			n++
		}
		if n != len(fields) {
			return st, fmt.Errorf("line %d: %d fields, want %d", lineNo, n, len(fields))
		}
		ts, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(fields[ti]), len(fields[ti])), 10, 64)
		if err != nil {
			return st, fmt.Errorf("line %d: %w", lineNo, err)
		}
		v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(fields[vi]), len(fields[vi])), 64)
		if err != nil {
			return st, fmt.Errorf("line %d: %w", lineNo, err)
		}
		st.Events++
		start := ts - ((ts%size)+size)%size
		if start+size-1 <= wm {
			st.Late++
		} else {
			ws.add(start, fields[ki], v)
		}
		if ts > maxTs {
			maxTs = ts
			if nw := maxTs - ooo - 1; nw > wm {
				wm = nw
				ws.fire(wm - size + 1)
			}
		}
	}
	ws.fire(1<<63 - 1)
	return st, nil
}

// mapStore is a map by key per open window.
type mapStore struct {
	w      *bufio.Writer
	size   int64
	st     *Stats
	open   map[int64]map[string]float64
	starts []int64 // of open, ascending
	b      []byte
}

func (m *mapStore) add(start int64, key []byte, v float64) {
	sums := m.open[start]
	if sums == nil {
		sums = map[string]float64{}
		m.open[start] = sums
		i, _ := slices.BinarySearch(m.starts, start)
		m.starts = slices.Insert(m.starts, i, start)
	}
	sums[string(key)] += v
}

func (m *mapStore) fire(upTo int64) {
	for len(m.starts) > 0 && m.starts[0] <= upTo {
		s := m.starts[0]
		for k, v := range m.open[s] {
			m.b = appendFiring(m.b[:0], k, s, s+m.size, v)
			m.w.Write(m.b)
			m.st.Firings++
		}
		delete(m.open, s)
		m.starts = m.starts[1:]
	}
}

// denseStore is an array by key number per open window.
type denseStore struct {
	w     *bufio.Writer
	size  int64
	st    *Stats
	ids   map[string]int32
	names []string
	open  []*denseWindow // by start, ascending
	free  []*denseWindow
	b     []byte
}

type denseWindow struct {
	start int64
	sum   []float64
	has   []bool
}

func (d *denseStore) add(start int64, key []byte, v float64) {
	id, ok := d.ids[string(key)]
	if !ok {
		id = int32(len(d.names))
		d.names = append(d.names, string(key))
		d.ids[d.names[id]] = id
	}
	i, found := slices.BinarySearchFunc(d.open, start, func(o *denseWindow, s int64) int { return cmp.Compare(o.start, s) })
	if !found {
		o := &denseWindow{}
		if k := len(d.free); k > 0 {
			o, d.free = d.free[k-1], d.free[:k-1]
		}
		o.start = start
		d.open = slices.Insert(d.open, i, o)
	}
	o := d.open[i]
	for int(id) >= len(o.sum) {
		o.sum, o.has = append(o.sum, 0), append(o.has, false)
	}
	o.sum[id] += v
	o.has[id] = true
}

func (d *denseStore) fire(upTo int64) {
	for len(d.open) > 0 && d.open[0].start <= upTo {
		o := d.open[0]
		for id, ok := range o.has {
			if ok {
				d.b = appendFiring(d.b[:0], d.names[id], o.start, o.start+d.size, o.sum[id])
				d.w.Write(d.b)
				d.st.Firings++
				o.sum[id], o.has[id] = 0, false
			}
		}
		d.free = append(d.free, o)
		d.open = d.open[1:]
	}
}

// appendFiring appends the line window-stats writes for a firing.
func appendFiring(b []byte, key string, start, end int64, sum float64) []byte {
	b = append(b, key...)
	b = append(b, ',')
	b = strconv.AppendInt(b, start, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, end, 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, sum, 'f', -1, 64)
	return append(b, '\n')
}

func eq(name string) func([]byte) bool { return func(b []byte) bool { return string(b) == name } }
