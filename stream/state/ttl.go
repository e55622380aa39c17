package state

import (
	"math"
	"time"
)

// UpdateType is when a state entry's TTL timestamp is refreshed (Flink's
// StateTtlConfig.UpdateType).
type UpdateType uint8

const (
	// OnCreateAndWrite refreshes it when the entry is created or written.
	OnCreateAndWrite UpdateType = iota
	// OnReadAndWrite refreshes it on reads as well.
	OnReadAndWrite
)

// Visibility is whether an expired entry not yet removed may be returned
// (Flink's StateTtlConfig.StateVisibility).
type Visibility uint8

const (
	// NeverReturnExpired never returns an expired entry.
	NeverReturnExpired Visibility = iota
	// ReturnExpiredIfNotCleanedUp returns an expired entry once, as it is
	// removed by that read.
	ReturnExpiredIfNotCleanedUp
)

// TTLConfig is Flink's StateTtlConfig: state entries expire TTL after their
// last write (or read, with OnReadAndWrite), measured by the backend's Clock.
// TTL applies per value: per element of a ListState and per entry of a
// MapState. Expired entries are removed when read and are left out of
// snapshots (Flink's full-snapshot cleanup). A zero TTL disables it.
type TTLConfig struct {
	TTL        time.Duration
	Update     UpdateType
	Visibility Visibility
}

// ttl is a TTLConfig resolved to milliseconds.
type ttl struct {
	on            bool
	ms            int64
	onRead        bool
	returnExpired bool
}

func newTTL(c TTLConfig) ttl {
	if c.TTL <= 0 {
		return ttl{}
	}
	return ttl{on: true, ms: max(c.TTL.Milliseconds(), 1), onRead: c.Update == OnReadAndWrite, returnExpired: c.Visibility == ReturnExpiredIfNotCleanedUp}
}

// expired is Flink's TtlUtils.expired: ts + ttl <= now, the sum capped at
// MaxInt64.
func (t *ttl) expired(ts, now int64) bool {
	if !t.on {
		return false
	}
	ttl := t.ms
	if ts > 0 {
		ttl = min(math.MaxInt64-ts, ttl)
	}
	return ts+ttl <= now
}

// stamp returns the timestamp a write stores.
func (t *ttl) stamp(now func() int64) int64 {
	if !t.on {
		return 0
	}
	return now()
}
