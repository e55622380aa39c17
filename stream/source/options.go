package source

import (
	"time"

	"github.com/weirdata/weir/clock"
)

// Assignment is how an enumerator gives splits to readers.
type Assignment int

// The assignment strategies.
const (
	// OnRequest gives the next pending split to whichever reader asks, as
	// Flink's FileSource and NumberSequenceSource do: a reader asks when it
	// has no split left, so faster readers read more splits.
	OnRequest Assignment = iota
	// Static gives split k of the initial listing (and of each discovery)
	// to reader k mod parallelism, as Flink's Kafka source fixes owners.
	Static
)

// Option configures a source.
type Option func(*config)

type config struct {
	batch   int
	assign  Assignment
	clock   clock.Clock
	poll    time.Duration
	read    int
	maxLine int
	// Socket: reconnections (Reconnect)
	retries    int
	retryDelay time.Duration
}

func newConfig(opts []Option) config {
	c := config{batch: 1024, clock: clock.System{}, poll: 100 * time.Millisecond, read: 64 << 10, maxLine: 16 << 20}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// BatchSize sets the most records per batch (1024 by default; n < 1 is 1).
func BatchSize(n int) Option { return func(c *config) { c.batch = max(n, 1) } }

// Assign sets how splits are assigned to readers (OnRequest by default).
func Assign(a Assignment) Option { return func(c *config) { c.assign = a } }

// WithClock sets the clock readers wait and pace by (clock.System by default).
func WithClock(clk clock.Clock) Option { return func(c *config) { c.clock = clk } }

// PollInterval sets how long a reader waits for new data in a tailed file or
// on a socket before it looks at its other splits and at ctx (100 ms by
// default).
func PollInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.poll = d
		}
	}
}

// ReadSize sets the size of each read of a text file, tailed file or socket
// (64 KiB by default; a longer line grows the buffer).
func ReadSize(n int) Option { return func(c *config) { c.read = max(n, 1) } }

// MaxLineSize sets the longest line (its delimiter included) a text file,
// tailed file or socket may send: 16 MiB by default. A longer one is an
// error naming the file (or host:port), the line and the limit, rather than
// a buffer that grows without bound.
func MaxLineSize(n int) Option { return func(c *config) { c.maxLine = max(n, 1) } }
