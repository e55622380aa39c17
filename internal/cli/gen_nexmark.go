package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/connectors/kafka"
	"github.com/weirdata/weir/nexmark"
)

// newGenNexmarkCommand is `weir gen nexmark`, which writes Nexmark events
// as JSON lines.
func newGenNexmarkCommand() *cobra.Command {
	var (
		o     nexmark.WriteOptions
		out   string
		topic string
		kf    kafkaFlags
	)
	cmd := &cobra.Command{
		Use:   "nexmark --events N [--rate R] [--seed S] [--base MS] [--disorder MS] [--out FILE.jsonl | --kafka-brokers B --topic T]",
		Short: "Write Nexmark events (persons, auctions, bids) as JSON lines",
		Long: `Write the Nexmark events 0 to N-1 as JSON lines, one object per line in the
formats of weir nexmark: {"event_type":0|1|2,"person":...,"auction":...,"bid":...}
with the matching object non-null. The events follow the suite's generator: of
every 50 events one is a person, three are auctions and 46 are bids; event n
has dateTime --base + floor(n*1000/--rate) (epoch milliseconds; 10,000 events
per second from 2025-01-01T00:00:00Z by default); hot sellers, bidders and
auctions, prices from 1 to 1,000,000 dollars in cents, filler to the suite's
sizes. Event n is drawn from its own java.util.Random seeded from --seed and n,
so the file depends only on the flags.

--disorder MS delays a tenth of the events by 1 to MS milliseconds each and
writes the lines in the delayed order (dateTime unchanged): when a line is read,
every earlier line has a dateTime at most MS above it, so a watermark of the
largest dateTime seen less --out-of-orderness (MS or more) makes no event late.

Without --out the lines go to stdout; with it the file is written under a
temporary name and renamed when complete. With --kafka-brokers and --topic
each line is a record of the topic (its value, without line end, and no key),
spread round robin over the partitions, so each partition holds its events in
the order of the lines; the command ends once every record is acknowledged.
The --kafka-* flags of weir nexmark (TLS, SASL, --kafka-timeout) apply.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if o.Events < 0 || o.Rate <= 0 || o.Disorder < 0 {
				return &usageError{err: fmt.Errorf("--events and --disorder must not be negative and --rate must be positive, got %d, %d and %d", o.Events, o.Disorder, o.Rate)}
			}
			write := func(w io.Writer) error { return nexmark.WriteJSON(cmd.Context(), w, o) }
			if topic != "" || kf.brokers != "" {
				if out != "" || topic == "" {
					return &usageError{err: fmt.Errorf("--kafka-brokers needs --topic, and --out excludes both")}
				}
				cfg, err := kf.config()
				if err != nil {
					return err
				}
				return produceLines(cmd.Context(), cfg, topic, write)
			}
			if out == "" {
				return write(cmd.OutOrStdout())
			}
			return writeAtomically(out, write)
		}),
	}
	f := cmd.Flags()
	f.Int64Var(&o.Events, "events", 0, "number of events (required)")
	f.Int64Var(&o.Rate, "rate", nexmark.DefaultRate, "events per second of event time")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed")
	f.Int64Var(&o.Base, "base", nexmark.DefaultBase, "dateTime of the first event, epoch milliseconds")
	f.Int64Var(&o.Disorder, "disorder", 0, "delay a tenth of the events by up to this many milliseconds")
	f.StringVar(&out, "out", "", "file to write (default: stdout)")
	f.StringVar(&topic, "topic", "", "with --kafka-brokers: the Kafka topic to write the events to, one per record")
	kf.bind(f)
	_ = cmd.MarkFlagRequired("events")
	return cmd
}

// produceLines runs write into a writer that produces each line it is
// given as a record of topic, and waits for the records.
func produceLines(ctx context.Context, cfg kafka.Config, topic string, write func(io.Writer) error) error {
	p, err := kafka.NewProducer(cfg, topic)
	if err != nil {
		return err
	}
	lw := &lineProducer{ctx: ctx, p: p}
	werr := write(lw)
	if werr == nil && len(lw.part) > 0 {
		werr = p.Produce(ctx, lw.part)
	}
	if err := p.Close(); werr == nil {
		werr = err
	}
	return werr
}

// lineProducer is an io.Writer that produces each complete line written
// to it, without its line end, as a record.
type lineProducer struct {
	ctx  context.Context
	p    *kafka.Producer
	part []byte // the start of a line not yet ended
}

func (w *lineProducer) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.part = append(w.part, b...)
			break
		}
		line := b[:i]
		if len(w.part) > 0 {
			w.part = append(w.part, line...)
			line = w.part
		}
		if err := w.p.Produce(w.ctx, line); err != nil {
			return 0, err
		}
		w.part = w.part[:0]
		b = b[i+1:]
	}
	return n, nil
}
