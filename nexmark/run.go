package nexmark

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// DefaultOutOfOrderness is the watermark's bound of the suite's Flink DDL:
// dateTime - 4 s.
const DefaultOutOfOrderness = 4 * time.Second

// ZeroOutOfOrderness is the Params.OutOfOrderness of a bound of 0: the
// watermark is the largest dateTime seen less 1 ms.
const ZeroOutOfOrderness time.Duration = -1

// Queries are the queries Run knows, in order.
var Queries = []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q11", "q14"}

// Options configure how a query runs.
type Options struct {
	// Stream configures the job (parallelism, memory, execution mode,
	// restore, restarts).
	Stream stream.Options
	// Configure, when set, adjusts the Env before the program is built:
	// the command line enables checkpointing through it.
	Configure func(*stream.Env)
	// Stdout receives the CSV when Params.Output, Discard and RowSink are
	// unset.
	Stdout io.Writer
	// Notice, when set, receives what the file sink did that a user must
	// know (sink.WithNotices).
	Notice func(msg string)
}

// Params say which query runs over which events, and where its rows go.
type Params struct {
	// Query is one of Queries.
	Query string
	// Source, when set, is the stream of events (a Kafka topic's, through
	// Decode); else Input, else the generator.
	Source source.Source[Event]
	// Input is a file of JSON lines, read in order as one stream by one
	// subtask.
	Input string
	// Events and Generator are the in-process generator's: events 0 to
	// Events-1, or unbounded when Events <= 0, made by every source subtask
	// (GeneratorSource).
	Events    int64
	Generator Config
	// OutOfOrderness is the watermark's bound: the largest dateTime seen
	// minus it, minus 1 ms. Zero means DefaultOutOfOrderness;
	// ZeroOutOfOrderness asks for a bound of 0.
	OutOfOrderness time.Duration
	// SkipBad sends lines that do not decode to the dead-letter output,
	// counted in Stats, instead of failing the job.
	SkipBad bool
	// Output, when set, is a directory of part files; Discard drops the
	// rows (Flink's blackhole sink, for throughput); RowSink, when set,
	// gets every row as its CSV line without line end (a Kafka sink's
	// records). Without any, the CSV goes to Options.Stdout.
	Output  string
	Discard bool
	RowSink func(rows stream.DataStream[[]byte])
	// Changelog makes q3, q4 and q9 write their updates with an op column
	// first (+I, -U, +U, -D). Run sets it for an unbounded source.
	Changelog bool
}

// Stats is what a run counted.
type Stats struct {
	// Events is the number of events the source handed out (bad lines
	// included).
	Events int64
	// Skipped is the number of lines sent to the dead-letter output;
	// FirstSkipped names the first of them: its place (file and line, or
	// topic, partition and offset) and error.
	Skipped      int64
	FirstSkipped string
}

// build is a program being built: its parameters and what the queries
// leave for Run.
type build struct {
	o      Options
	p      Params
	stdout *lockedWriter
}

// Header returns the CSV header of query q's output (with changelog, the
// op column first).
func Header(q string, changelog bool) (string, error) {
	h, ok := headers[q]
	if !ok {
		return "", unknownQuery(q)
	}
	if changelog && updating(q) {
		h = "op," + h
	}
	return h, nil
}

var headers = map[string]string{
	"q0":  "auction,bidder,price,dateTime,extra",
	"q1":  "auction,bidder,price,dateTime,extra",
	"q2":  "auction,price",
	"q3":  "name,city,state,id",
	"q4":  "category,avg_final",
	"q5":  "auction,num,window_start,window_end",
	"q7":  "auction,bidder,price,dateTime,extra,window_start,window_end",
	"q8":  "id,name,window_start,window_end",
	"q9":  "id,itemName,description,initialBid,reserve,dateTime,expires,seller,category,extra,auction,bidder,price,bid_dateTime,bid_extra",
	"q11": "bidder,bid_count,starttime,endtime",
	"q14": "auction,bidder,price,bidTimeType,dateTime,extra,c_counts",
}

// updating says whether q's result is updated as events come: q3, q4, q9.
func updating(q string) bool { return q == "q3" || q == "q4" || q == "q9" }

func unknownQuery(q string) error {
	return fmt.Errorf("nexmark: unknown query %q: want one of %s", q, strings.Join(Queries, ", "))
}

// Run runs query p.Query until its events end (or ctx does) and returns
// what it counted. The events' time is their dateTime and the watermark
// trails the largest seen by p.OutOfOrderness. The rows go as Params say;
// on standard output the header line comes first.
func Run(ctx context.Context, o Options, p Params) (Stats, error) {
	var st Stats
	if !slices.Contains(Queries, p.Query) {
		return st, unknownQuery(p.Query)
	}
	var src source.Source[Event]
	switch {
	case p.Source != nil:
		src = p.Source
	case p.Input != "":
		lines, err := source.Files(source.Text(), p.Input)
		if err != nil {
			return st, fmt.Errorf("nexmark: %w", err)
		}
		src = Decode(lines, p.SkipBad)
	default:
		src = GeneratorSource(p.Generator, p.Events)
	}
	if src.Boundedness() == source.Unbounded {
		p.Changelog = true
	}
	bound := p.OutOfOrderness
	switch {
	case bound == 0:
		bound = DefaultOutOfOrderness
	case bound < 0:
		bound = 0
	}
	strategy := watermark.ForBoundedOutOfOrderness[Event](bound).
		WithTimestampAssigner(func(e Event, _ int64) int64 { return e.Time() })
	env := stream.New(o.Stream)
	if o.Configure != nil {
		o.Configure(env)
	}
	var n atomic.Int64
	events := stream.FromSource(env, counted[Event]{Source: src, n: &n}, strategy, "NexmarkEvents").UID("nexmark-source")
	if p.Input != "" && p.Source == nil {
		events = events.SetParallelism(1)
	}
	var dead deadLetters
	if p.SkipBad {
		events = dead.split(events)
	}
	b := &build{o: o, p: p}
	if o.Stdout != nil {
		b.stdout = &lockedWriter{w: o.Stdout}
	} else {
		b.stdout = &lockedWriter{w: io.Discard}
	}
	queryBuilders[p.Query](b, events)
	if p.Output == "" && !p.Discard && p.RowSink == nil {
		header, _ := Header(p.Query, p.Changelog)
		if err := b.stdout.write([]byte(header + "\n")); err != nil {
			return st, fmt.Errorf("nexmark: write the output: %w", err)
		}
	}
	_, err := env.Execute(ctx)
	st.Events = n.Load()
	st.Skipped, st.FirstSkipped = dead.result()
	if err != nil {
		return st, fmt.Errorf("nexmark: %s: %w", p.Query, err)
	}
	return st, nil
}

// deadLetters counts the lines that did not decode, sent to a side output.
type deadLetters struct {
	mu    sync.Mutex
	n     int64
	first string
}

var deadTag = stream.NewOutputTag[Event]("dead-letter")

// split sends KindBad events to the dead-letter side output, counted, and
// returns the others.
func (d *deadLetters) split(events stream.DataStream[Event]) stream.DataStream[Event] {
	good := stream.Process(events, func() stream.ProcessFunction[Event, Event] {
		return stream.ProcessFunction[Event, Event]{
			ProcessElement: func(e Event, ctx *stream.Context, out stream.Collector[Event]) error {
				if e.Kind == KindBad {
					stream.Output(ctx, deadTag, e)
					return nil
				}
				out.Collect(e)
				return nil
			},
		}
	}).Name("DeadLetters")
	bad := stream.GetSideOutput(good, deadTag)
	stream.SinkToWriter(bad, d).Name("DeadLetterCount")
	return good
}

func (d *deadLetters) CreateWriter(sink.InitContext) (sink.Writer[Event], error) { return d, nil }

func (d *deadLetters) Write(e Event, _ sink.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == 0 && e.Bad != nil {
		d.first = fmt.Sprintf("%s: %v", e.Bad.Where(), e.Bad.Err)
	}
	d.n++
	return nil
}

func (d *deadLetters) Flush(bool) error { return nil }
func (d *deadLetters) Close() error     { return nil }

func (d *deadLetters) result() (int64, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n, d.first
}
