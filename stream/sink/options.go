package sink

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirdata/weir/clock"
)

// OutputFileConfig is Flink's OutputFileConfig: a part file is named
// PartPrefix-<subtask>-<counter>PartSuffix.
type OutputFileConfig struct {
	PartPrefix string // "part" when empty
	PartSuffix string // e.g. ".txt"; none by default
}

// DefaultCheckInterval is how often the runtime calls Tick by default, as
// Flink's bucket check interval.
const DefaultCheckInterval = 60 * time.Second

// Option configures a FileSink.
type Option func(*config)

type config struct {
	names    OutputFileConfig
	policy   RollingPolicy
	clock    clock.Clock
	interval time.Duration
	notice   func(msg string)
}

// WithOutputFileConfig sets the part files' prefix and suffix.
func WithOutputFileConfig(c OutputFileConfig) Option { return func(o *config) { o.names = c } }

// WithRollingPolicy sets when parts roll (DefaultRollingPolicy{} by
// default). Bulk formats accept only OnCheckpointRollingPolicy.
func WithRollingPolicy(p RollingPolicy) Option { return func(o *config) { o.policy = p } }

// WithClock sets the clock of creation and update times (clock.System by
// default).
func WithClock(c clock.Clock) Option { return func(o *config) { o.clock = c } }

// WithCheckInterval sets how often the runtime should call Tick
// (DefaultCheckInterval by default).
func WithCheckInterval(d time.Duration) Option { return func(o *config) { o.interval = d } }

// WithNotices sets where the sink says what it did that a user must know:
// the committed parts it removed on a restore (FileSink.Writer). Without
// one it says nothing.
func WithNotices(f func(msg string)) Option { return func(o *config) { o.notice = f } }

func newConfig(opts []Option) config {
	c := config{policy: DefaultRollingPolicy{}, clock: clock.System{}, interval: DefaultCheckInterval}
	for _, o := range opts {
		o(&c)
	}
	if c.names.PartPrefix == "" {
		c.names.PartPrefix = "part"
	}
	return c
}

// validate rejects names that would leave the directory or be hidden.
func (c *config) validate(dir string) error {
	n := c.names
	if strings.HasPrefix(n.PartPrefix, ".") || strings.ContainsAny(n.PartPrefix+n.PartSuffix, "/\\") {
		return fmt.Errorf("stream/sink: %s: part prefix %q and suffix %q must not hold a path separator, nor the prefix start with a dot", dir, n.PartPrefix, n.PartSuffix)
	}
	if c.policy == nil || c.clock == nil {
		return fmt.Errorf("stream/sink: %s: nil rolling policy or clock", dir)
	}
	return nil
}
