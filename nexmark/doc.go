// Package nexmark is the Nexmark benchmark suite on weir's DataStream API:
// the events of an online auction (persons, auctions, bids), their JSON
// form, the suite's generator, and queries q0, q1, q2, q3, q4, q5, q7, q8,
// q9, q11 and q14 as stream programs, each writing the CSV columns of the
// formats note (notes/nexmark-formats.md in the shared notes).
//
// # Events
//
// An Event holds one Person, Auction or Bid as a value (Kind says which);
// its time is the dateTime of what it holds, in epoch milliseconds.
// AppendJSON writes the JSON line of an event, compact, keys in the
// note's order; a Decoder reads one back by hand, without reflection:
// keys in any order, whitespace, escapes and unknown keys; a missing
// field, a fraction where an integer belongs, or an event_type that does
// not match the one non-null object is an error. Decoded strings point
// into the line (or, unescaped, into memory of the decoder's that is
// never written again), so decoding allocates nothing per line.
//
// # The generator
//
// Generator makes event n of a Config from a java.util.Random seeded with
// splitmix64(splitmix64(seed) XOR n), by the suite's rules (Beam's and
// nexmark-flink's GeneratorConfig defaults): n mod 50 = 0 a person, 1 to 3
// an auction, the rest bids; dateTime = base + floor(n*1000/rate); hot
// sellers, bidders and auctions; prices 10^(6u)*100 cents; expiries
// within twice the time of 1,666 events; filler to the suite's average
// sizes, cut from pools of the suite's characters made once, so that
// making an event allocates nothing. So any event can be made alone, and
// the events depend on (seed, N, rate, base) only. WriteJSON writes events as JSON lines, optionally
// delayed out of order by up to a bound (10% of them, uniform in [1, D]
// ms, stably sorted by dateTime + delay). GeneratorSource is the
// in-process source: a split per reader, each making interleaved blocks
// of events in order.
//
// # Queries
//
// Run builds a query on an Env: a source of events (GeneratorSource, a
// file through Decode, or a Source the caller gives, such as a Kafka
// topic's, whose records hold one event's JSON each), timestamps from
// dateTime and a bounded out-of-orderness watermark (4 s by default: a
// watermark of the largest dateTime seen less 4 s less 1 ms, so an input
// whose disorder stays within the bound loses no event), the query, and
// a sink. Windowed queries (q5, q7, q8, q11) report every window that
// holds a relevant event, windows aligned to epoch 0 and half open. q3, q4 and q9 have results that update as
// events come: over a bounded input they write the final table; over an
// unbounded one (Params.Changelog) a changelog whose first column, op, is
// +I, -U, +U or -D. q3's inner join and q9's winning bids (emitted when
// an auction settles, as the watermark passes its expiry) only insert;
// q4's averages change with every auction that settles (-U then +U).
// The results are the same in STREAMING and BATCH mode, at any
// parallelism.
//
// # Outputs
//
// Rows go to Options.Stdout after the header line (written by every
// subtask in whole blocks of lines, at least once), to part files in a
// directory through the FileSink (committed with the checkpoints, exactly
// once; part-0-0 of a run that does not restore starts with the header
// line, so the parts in name order are the CSV), to nothing
// (Params.Discard), or as CSV lines to Params.RowSink. Integers print as
// integers, q1 and q14's euro prices as exact decimals with 3 places and
// q4's averages as the shortest decimal that reads back as the double.
//
// # Errors
//
// Errors start with "nexmark:". A line of an input file that does not
// decode fails the job naming the file and the line, unless
// Params.SkipBad sends it to the dead-letter output, counted in Stats. A
// Params.Source decodes its records itself: the command line's Kafka
// source (internal/cli) fails the job naming a bad record's topic,
// partition and offset, or under SkipBad hands it on as a KindBad event
// whose BadRecord names them, for the same dead-letter output.
package nexmark
