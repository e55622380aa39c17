// Command nexmark runs the hand-written Go loops `weir nexmark` is compared
// with (bench/nexmark.sh): queries q0, q1, q2, q5 and q7 over the events of
// the in-process generator, in one goroutine.
//
//	nexmark --query q5 --events N [--rate R] [--seed S] [--output FILE]
//
// The loop makes event n = 0, 1, ... with nexmark.Generator (the events
// weir nexmark --events N makes, in order) and computes the query on the
// spot: q0, q1 and q2 count the rows they select (q1 adding up the euro
// prices, so the work is done); q5 keeps a map of counts per auction for
// each open hop window and q7 the highest price and its bids for each
// open tumbling window; a window closes when the watermark, the largest
// dateTime seen less 4 s less 1 ms, reaches its end - 1. Nothing is
// checkpointed and no row is formatted unless --output names a CSV file
// to write them to (the tests compare it with the oracle). It ends with
// the line weir nexmark prints: events, wall and CPU seconds (getrusage),
// events per second and per CPU-second, and the rows.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/weirdata/weir/nexmark"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "nexmark:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("nexmark", flag.ContinueOnError)
	query := fs.String("query", "", "q0, q1, q2, q5 or q7")
	events := fs.Int64("events", 0, "events to make")
	rate := fs.Int64("rate", nexmark.DefaultRate, "events per second of event time")
	seed := fs.Uint64("seed", 0, "the generator's seed")
	output := fs.String("output", "", "CSV file to write the rows to (default: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *events <= 0 || *rate <= 0 {
		return errors.New("--events and --rate must be positive")
	}
	var w *bufio.Writer
	if *output != "" {
		f, err := os.Create(*output)
		if err != nil {
			return err
		}
		defer f.Close()
		w = bufio.NewWriter(f)
	}
	start := time.Now()
	cpu0 := cpuTime()
	rows, err := Hand(*query, nexmark.Config{Seed: *seed, Rate: *rate}, *events, w)
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		return err
	}
	if w != nil {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "hand %s: events %d, wall %.2f s, cpu %.2f s, events/s %.0f, events per cpu-second %.0f, rows %d\n",
		*query, *events, wall.Seconds(), cpu.Seconds(), float64(*events)/wall.Seconds(), float64(*events)/cpu.Seconds(), rows)
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bound is the watermark's: the largest dateTime seen less 4 s less 1 ms.
const bound = 4000 + 1

// Hand computes query q over events 0 to n-1 of c and returns the number
// of rows; with w set it writes them there as CSV after the header.
func Hand(q string, c nexmark.Config, n int64, w *bufio.Writer) (int64, error) {
	g := nexmark.NewGenerator(c)
	header, err := nexmark.Header(q, false)
	if err != nil {
		return 0, err
	}
	var line []byte
	emit := func(fields ...int64) {
		if w == nil {
			return
		}
		line = line[:0]
		for i, f := range fields {
			if i > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendInt(line, f, 10)
		}
		w.Write(append(line, '\n'))
	}
	if w != nil {
		w.WriteString(header + "\n")
	}
	var (
		e    nexmark.Event
		rows int64
		sum  int64
	)
	switch q {
	case "q0", "q1", "q2":
		for i := range n {
			g.Event(i, &e)
			if e.Kind != nexmark.KindBid {
				continue
			}
			b := &e.Bid
			switch q {
			case "q0":
				rows++
				if w != nil {
					w.WriteString(fmt.Sprintf("%d,%d,%d,%d,%s\n", b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra))
				}
			case "q1":
				rows++
				sum += b.Price * 908
				if w != nil {
					w.WriteString(fmt.Sprintf("%d,%d,%d.%03d,%d,%s\n", b.Auction, b.Bidder, b.Price*908/1000, b.Price*908%1000, b.DateTime, b.Extra))
				}
			case "q2":
				if b.Auction%123 == 0 {
					rows++
					emit(b.Auction, b.Price)
				}
			}
		}
		_ = sum
	case "q5":
		rows = hotItems(g, n, emit)
	case "q7":
		rows = highestBids(g, n, w)
	default:
		return 0, fmt.Errorf("no hand loop for %q: want q0, q1, q2, q5 or q7", q)
	}
	return rows, nil
}

// hotItems is q5: counts per auction for each open window of 10 s
// starting every 2 s; a closing window emits its auctions with the most
// bids.
func hotItems(g *nexmark.Generator, n int64, emit func(...int64)) int64 {
	open := map[int64]map[int64]int64{} // window start -> auction -> bids
	var starts []int64                  // the open windows' starts, ascending
	var e nexmark.Event
	var rows int64
	wm := int64(-1 << 63)
	closeUpTo := func(wm int64) {
		for len(starts) > 0 && starts[0]+10000-1 <= wm {
			s := starts[0]
			starts = starts[1:]
			counts := open[s]
			delete(open, s)
			var most int64
			for _, c := range counts {
				most = max(most, c)
			}
			for a, c := range counts {
				if c == most {
					rows++
					emit(a, c, s, s+10000)
				}
			}
		}
	}
	for i := range n {
		g.Event(i, &e)
		t := e.Time()
		if e.Kind == nexmark.KindBid {
			last := t - t%2000
			for s := last - 8000; s <= last; s += 2000 {
				m := open[s]
				if m == nil {
					m = map[int64]int64{}
					open[s] = m
					k, _ := slices.BinarySearch(starts, s)
					starts = slices.Insert(starts, k, s)
				}
				m[e.Bid.Auction]++
			}
		}
		if t-bound > wm {
			wm = t - bound
			closeUpTo(wm)
		}
	}
	closeUpTo(1<<63 - 1)
	return rows
}

// highestBids is q7: the highest price and its bids for each open
// tumbling window of 10 s; a closing window emits its bids.
func highestBids(g *nexmark.Generator, n int64, w *bufio.Writer) int64 {
	type top struct {
		price int64
		bids  []nexmark.Bid
	}
	open := map[int64]*top{}
	var starts []int64
	var e nexmark.Event
	var rows int64
	wm := int64(-1 << 63)
	closeUpTo := func(wm int64) {
		for len(starts) > 0 && starts[0]+10000-1 <= wm {
			s := starts[0]
			starts = starts[1:]
			for _, b := range open[s].bids {
				rows++
				if w != nil {
					fmt.Fprintf(w, "%d,%d,%d,%d,%s,%d,%d\n", b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra, s, s+10000)
				}
			}
			delete(open, s)
		}
	}
	for i := range n {
		g.Event(i, &e)
		t := e.Time()
		if e.Kind == nexmark.KindBid {
			s := t - t%10000
			tp := open[s]
			switch {
			case tp == nil:
				open[s] = &top{price: e.Bid.Price, bids: []nexmark.Bid{e.Bid}}
				k, _ := slices.BinarySearch(starts, s)
				starts = slices.Insert(starts, k, s)
			case e.Bid.Price > tp.price:
				tp.price, tp.bids = e.Bid.Price, append(tp.bids[:0], e.Bid)
			case e.Bid.Price == tp.price:
				tp.bids = append(tp.bids, e.Bid)
			}
		}
		if t-bound > wm {
			wm = t - bound
			closeUpTo(wm)
		}
	}
	closeUpTo(1<<63 - 1)
	return rows
}
