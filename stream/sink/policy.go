package sink

import "time"

// PartInfo describes the in-progress part file to a RollingPolicy.
type PartInfo struct {
	// Size is the part's size in bytes so far, buffered bytes included
	// (-1 for bulk formats, whose encoders do not say).
	Size int64
	// Created is when the part was opened; LastUpdate when a record was
	// last written to it (both by the sink's clock).
	Created, LastUpdate time.Time
}

// RollingPolicy decides when the in-progress part file is closed and a new
// one opened, as Flink's RollingPolicy. Every checkpoint closes the
// in-progress part as well (PrepareCommit), whatever the policy.
type RollingPolicy interface {
	// ShouldRollOnEvent is asked before each record is written to the
	// in-progress part.
	ShouldRollOnEvent(part PartInfo) bool
	// ShouldRollOnProcessingTime is asked by Tick.
	ShouldRollOnProcessingTime(part PartInfo, now time.Time) bool
}

// The defaults of Flink's DefaultRollingPolicy.
const (
	DefaultPartSize           = 128 << 20
	DefaultRolloverInterval   = 60 * time.Second
	DefaultInactivityInterval = 60 * time.Second
)

// DefaultRollingPolicy is Flink's DefaultRollingPolicy: a part rolls before a
// record when it holds more than PartSize bytes, and at a Tick when it has
// been open for RolloverInterval or has had no record for
// InactivityInterval. Zero fields take the defaults above.
type DefaultRollingPolicy struct {
	PartSize           int64
	RolloverInterval   time.Duration
	InactivityInterval time.Duration
}

func (p DefaultRollingPolicy) withDefaults() DefaultRollingPolicy {
	if p.PartSize <= 0 {
		p.PartSize = DefaultPartSize
	}
	if p.RolloverInterval <= 0 {
		p.RolloverInterval = DefaultRolloverInterval
	}
	if p.InactivityInterval <= 0 {
		p.InactivityInterval = DefaultInactivityInterval
	}
	return p
}

// ShouldRollOnEvent reports whether the part holds more than PartSize bytes.
func (p DefaultRollingPolicy) ShouldRollOnEvent(part PartInfo) bool {
	return part.Size > p.withDefaults().PartSize
}

// ShouldRollOnProcessingTime reports whether the part has been open for
// RolloverInterval or idle for InactivityInterval.
func (p DefaultRollingPolicy) ShouldRollOnProcessingTime(part PartInfo, now time.Time) bool {
	q := p.withDefaults()
	return now.Sub(part.Created) >= q.RolloverInterval || now.Sub(part.LastUpdate) >= q.InactivityInterval
}

// OnCheckpointRollingPolicy is Flink's OnCheckpointRollingPolicy: parts roll
// on checkpoints only (and at the end of a bounded input). Bulk formats
// always use it.
type OnCheckpointRollingPolicy struct{}

// ShouldRollOnEvent is false.
func (OnCheckpointRollingPolicy) ShouldRollOnEvent(PartInfo) bool { return false }

// ShouldRollOnProcessingTime is false.
func (OnCheckpointRollingPolicy) ShouldRollOnProcessingTime(PartInfo, time.Time) bool { return false }
