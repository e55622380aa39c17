package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
	"github.com/weirdata/weir/nexmark"
)

// nexmarkJob is `weir nexmark`: a query of the Nexmark suite as a stream
// job, with the flags of every stream job (checkpoints, savepoints,
// restarts) and `weir explain nexmark`.
func nexmarkJob() *streamJob {
	return &streamJob{
		name: "nexmark",
		args: "--query qN (--input FILE.jsonl | --events N [--rate R] [--seed S] | --kafka-brokers B --source-topic T " +
			"[--group G] [--start earliest|latest|committed] [--bounded]) [--out-of-orderness D] [--on-bad-record fail|skip] " +
			"[--execution-mode streaming|batch|automatic] [--output DIR | --discard | --sink-topic T [--delivery exactly-once|at-least-once]]",
		short: "Run a query of the Nexmark benchmark over events from a file, the generator or Kafka",
		long: `Run Nexmark query --query (` + strings.Join(nexmark.Queries, ", ") + `) as a
DataStream program over the events of --input, a file of JSON lines (weir gen
nexmark writes them), read in file order as one stream, or of the in-process
generator: --events N events (0: without end) at --rate events per second of
event time, --seed S, or of the Kafka topic --source-topic on --kafka-brokers,
one event's JSON per record value, a split per partition: from --start
(earliest, latest, committed offsets of --group, committed-or-latest or
timestamp:MILLIS), to the partitions' ends at the start with --bounded, else
without end. The offsets are in the checkpoints, and committed to --group when
a checkpoint completes (for monitoring). With --input or --source-topic, --rate
throttles the source to that many events per second (of the clock). Event time is each event's dateTime; the watermark is the
largest dateTime seen less --out-of-orderness (4s by default) less 1 ms, so an
input out of order by no more than that loses no event.

The rows go to stdout as CSV after a header row, or to --output DIR as part files
committed as checkpoints complete (part-0-0 starts with the header row), or
nowhere with --discard (for throughput, as Flink's blackhole sink), or to the
Kafka topic --sink-topic, one record per row (the CSV line, no header):
--delivery at-least-once flushes on every checkpoint, exactly-once writes a
transaction per subtask and checkpoint, committed when the checkpoint completes
(its consumers read with isolation.level=read_committed; transactional ids start
with --transactional-id-prefix, which must stay the same across restarts). The
columns:

  q0   auction,bidder,price,dateTime,extra              every bid
  q1   auction,bidder,price,dateTime,extra              price in euros (x 0.908, 3 decimals)
  q2   auction,price                                    bids on auctions whose id is a multiple of 123
  q3   name,city,state,id                               auctions of category 10 by sellers in OR, ID or CA
  q4   category,avg_final                               average winning price per category
  q5   auction,num,window_start,window_end              auctions with the most bids per 10s window sliding by 2s
  q7   auction,bidder,price,dateTime,extra,window_start,window_end   highest bids per 10s window
  q8   id,name,window_start,window_end                  persons who opened an auction in the 10s window they joined
  q9   id,itemName,...,category,extra,auction,bidder,price,bid_dateTime,bid_extra   winning bid per auction
  q11  bidder,bid_count,starttime,endtime               bids per session of a bidder (10s gap)
  q14  auction,bidder,price,bidTimeType,dateTime,extra,c_counts   bids between 1M and 50M euros

Windows are aligned to epoch 0 and half open. q3, q4 and q9 write their final
table when the input ends; over an input without end (--events 0, or Kafka
without --bounded) they write a changelog whose first column, op, is +I, -U, +U
or -D. The results are the same at any --parallelism
and in --execution-mode streaming and batch.

A line of --input that is not an event fails the job, naming the file and the
line (status 1), and so does a Kafka record, naming its topic, partition and
offset; --on-bad-record skip sends it to a dead-letter output instead, and the
last line counts it and names the first.

--kafka-brokers, --kafka-timeout (every wait on the cluster; an unreachable
cluster fails the job within it), --kafka-tls, --kafka-tls-ca, --kafka-tls-cert,
--kafka-tls-key, --kafka-tls-server-name, --kafka-sasl-mechanism (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512), --kafka-sasl-user and --kafka-sasl-password
(default $` + kafkaPasswordEnv + `) say how to reach the cluster. At the end one line on stderr says
"nexmark qN: events E, wall W s, cpu C s, events/s X, events per cpu-second Y":
events read, wall-clock and CPU seconds of the process (getrusage) while the job
ran, and the throughputs.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var (
				p                nexmark.Params
				query, mode, ooo string
				onBad            string
				seed             uint64
				rate             int64
				kf               nexmarkKafka
			)
			f.StringVar(&query, "query", "", "the query: "+strings.Join(nexmark.Queries, ", ")+" (required)")
			f.StringVar(&p.Input, "input", "", "file of JSON-lines events, read in order")
			f.Int64Var(&p.Events, "events", 0, "without --input: events the generator makes (0: without end)")
			f.Int64Var(&rate, "rate", nexmark.DefaultRate, "with --events: the generator's events per second of event time; "+
				"with --input or --source-topic: throttle the source to this many events per second")
			f.Uint64Var(&seed, "seed", 0, "without --input: the generator's seed")
			f.StringVar(&ooo, "out-of-orderness", "4s", "watermark bound D: largest dateTime seen - D - 1ms")
			f.StringVar(&onBad, "on-bad-record", "fail", "a line that is not an event: fail the job, or skip it to the dead-letter output")
			f.StringVar(&mode, "execution-mode", "streaming", "streaming, batch or automatic")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			f.BoolVar(&p.Discard, "discard", false, "drop the rows (for throughput)")
			kf.conn.bind(f)
			f.StringVar(&kf.sourceTopic, "source-topic", "", "Kafka topic of the events (one JSON event per record)")
			f.StringVar(&kf.group, "group", "", "with --source-topic: consumer group for --start committed and the checkpoints' offsets")
			f.StringVar(&kf.start, "start", "earliest", "with --source-topic: earliest, latest, committed, committed-or-latest or timestamp:MILLIS")
			f.BoolVar(&kf.bounded, "bounded", false, "with --source-topic: stop at the partitions' ends at the start")
			f.StringVar(&kf.sinkTopic, "sink-topic", "", "Kafka topic for the rows, one record per CSV row")
			f.StringVar(&kf.delivery, "delivery", "at-least-once", "with --sink-topic: at-least-once or exactly-once")
			f.StringVar(&kf.txnPrefix, "transactional-id-prefix", "", "with --delivery exactly-once: the transactional ids' prefix (default weir-nexmark-<query>-<sink topic>)")
			return func(ctx context.Context, o streaming.Options) error {
				m, err := parseExecutionMode(mode)
				if err != nil {
					return err
				}
				o.Stream.Mode = m
				p.Query = strings.ToLower(query)
				if !slices.Contains(nexmark.Queries, p.Query) {
					return &usageError{err: fmt.Errorf("--query must be one of %s, got %q", strings.Join(nexmark.Queries, ", "), query)}
				}
				inputs := 0
				for _, in := range []bool{p.Input != "", f.Changed("events"), kf.sourceTopic != ""} {
					if in {
						inputs++
					}
				}
				if inputs != 1 {
					return &usageError{err: fmt.Errorf("give one of --input FILE, --events N (N = 0: without end) and --source-topic T")}
				}
				if p.Events < 0 || rate <= 0 {
					return &usageError{err: fmt.Errorf("--events must not be negative and --rate must be positive, got %d and %d", p.Events, rate)}
				}
				if n := btoi(p.Output != "") + btoi(p.Discard) + btoi(kf.sinkTopic != ""); n > 1 {
					return &usageError{err: fmt.Errorf("--output, --discard and --sink-topic exclude each other")}
				}
				switch onBad {
				case "fail":
				case "skip":
					p.SkipBad = true
				default:
					return &usageError{err: fmt.Errorf("--on-bad-record must be fail or skip, got %q", onBad)}
				}
				d, err := streaming.ParseMillis(ooo)
				if err != nil || d < 0 {
					return &usageError{err: fmt.Errorf("--out-of-orderness: want a duration of 0 or more, got %q", ooo)}
				}
				p.OutOfOrderness = d
				if d == 0 {
					p.OutOfOrderness = nexmark.ZeroOutOfOrderness
				}
				p.Generator = nexmark.Config{Seed: seed, Rate: rate}
				if !f.Changed("events") && f.Changed("rate") {
					o.Stream.SourceRate = float64(rate)
				}
				if kf.sourceTopic != "" || kf.sinkTopic != "" {
					cfg, err := kf.conn.config()
					if err != nil {
						return err
					}
					if kf.sourceTopic != "" {
						if p.Source, err = kf.source(cfg, p.SkipBad); err != nil {
							return err
						}
					}
					if kf.sinkTopic != "" {
						if p.RowSink, err = kf.sink(cfg, p.Query); err != nil {
							return err
						}
					}
				}
				no := nexmark.Options{Stream: o.Stream, Configure: o.Configure, Stdout: o.Stdout, Notice: o.Notice}
				start := time.Now()
				cpu0, cpuOK := cpuTime()
				st, err := nexmark.Run(ctx, no, p)
				wall := time.Since(start)
				cpu1, _ := cpuTime()
				if err != nil {
					return err
				}
				reportNexmark(o.Stderr, p, st, wall, cpu1-cpu0, cpuOK)
				return nil
			}
		},
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reportNexmark writes weir nexmark's last line to w: events, wall and
// CPU seconds, and the throughputs; with --on-bad-record skip, the lines
// skipped.
func reportNexmark(w io.Writer, p nexmark.Params, st nexmark.Stats, wall, cpu time.Duration, cpuOK bool) {
	if w == nil {
		return
	}
	perCPU := "n/a"
	cpuText := "n/a"
	if cpuOK {
		cpuText = fmt.Sprintf("%.2f", cpu.Seconds())
		if cpu > 0 {
			perCPU = fmt.Sprintf("%.0f", float64(st.Events)/cpu.Seconds())
		}
	}
	line := fmt.Sprintf("nexmark %s: events %d, wall %.2f s, cpu %s s, events/s %.0f, events per cpu-second %s",
		p.Query, st.Events, wall.Seconds(), cpuText, float64(st.Events)/max(wall.Seconds(), 1e-9), perCPU)
	if p.SkipBad {
		line += fmt.Sprintf(", skipped %d", st.Skipped)
		if st.FirstSkipped != "" {
			line += " (the first: " + st.FirstSkipped + ")"
		}
	}
	fmt.Fprintln(w, line)
}
