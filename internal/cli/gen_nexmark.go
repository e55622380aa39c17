package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/nexmark"
)

// newGenNexmarkCommand is `weir gen nexmark`, which writes Nexmark events
// as JSON lines.
func newGenNexmarkCommand() *cobra.Command {
	var (
		o   nexmark.WriteOptions
		out string
	)
	cmd := &cobra.Command{
		Use:   "nexmark --events N [--rate R] [--seed S] [--base MS] [--disorder MS] [--out FILE.jsonl]",
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
temporary name and renamed when complete.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if o.Events < 0 || o.Rate <= 0 || o.Disorder < 0 {
				return &usageError{err: fmt.Errorf("--events and --disorder must not be negative and --rate must be positive, got %d, %d and %d", o.Events, o.Disorder, o.Rate)}
			}
			write := func(w io.Writer) error { return nexmark.WriteJSON(cmd.Context(), w, o) }
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
	_ = cmd.MarkFlagRequired("events")
	return cmd
}
