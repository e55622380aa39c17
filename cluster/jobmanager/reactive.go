package jobmanager

import (
	"context"
	"fmt"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/cluster/rest"
)

// growth returns the slots an attempt running at cur slots could run at if
// it were deployed again now: the most one TaskManager offers, capped by
// asked (0 asks for no cap). offers are the TaskManagers' free slots, with
// the attempt's own slots counted on its own TaskManager. It returns 0 when
// that is not more than cur.
func growth(asked, cur int, offers []int) int {
	best := 0
	for _, o := range offers {
		best = max(best, o)
	}
	if asked > 0 {
		best = min(best, asked)
	}
	if best <= cur {
		return 0
	}
	return best
}

// growthLocked is growth for attempt a of j on the TaskManagers
// registered, each share's slots counted on its TaskManager. A job that
// spreads and asks for a number of slots may also grow over several
// TaskManagers with a data plane: to the sum of their offers, capped by
// its ask, as waitSlots would deploy it.
func (jm *JobManager) growthLocked(j *job, a *attempt) int {
	if j.slots > 0 && a.slots >= j.slots {
		return 0
	}
	own := map[*taskManager]int{}
	for _, s := range a.shares {
		own[s.tm] += s.slots
	}
	offers := make([]int, 0, len(jm.tms))
	spread := 0
	for _, tm := range jm.tms {
		o := tm.free + own[tm]
		offers = append(offers, o)
		if tm.dataAddr != "" {
			spread += o
		}
	}
	target := growth(j.slots, a.slots, offers)
	if j.spreads && j.slots > 0 {
		if t := growth(j.slots, a.slots, []int{spread}); t > target {
			target = t
		}
	}
	return target
}

// holdLocked returns why attempt a of j must not be rescaled now, "" when
// it may be: it must have recorded a checkpoint of its own (the restore of
// the next attempt, and the progress made since the last rescale), take no
// savepoint and not be stopping, and no other job may wait for slots (it
// goes first).
func (jm *JobManager) holdLocked(j *job, a *attempt) string {
	switch {
	case j.canceled:
		return "it is being canceled"
	case a.checkpoints == 0:
		return "its attempt has recorded no checkpoint to restore"
	case a.stopping:
		return "it is stopping with a savepoint"
	case len(a.savepoints) > 0:
		return "a savepoint is in progress"
	}
	for _, o := range jm.jobs {
		if o != j && o.cur == nil && !rest.Ended(o.state) {
			return fmt.Sprintf("job %s waits for slots", o.id)
		}
	}
	return ""
}

// checkpointWaitLocked is how long a due rescale of a waits for a's next
// checkpoint (Options.RescaleCheckpointWait).
func (jm *JobManager) checkpointWaitLocked(a *attempt) time.Duration {
	switch w := jm.opts.RescaleCheckpointWait; {
	case w < 0:
		return 0
	case w > 0:
		return w
	}
	if a.recordedBefore.IsZero() {
		return 0
	}
	return a.recordedAt.Sub(a.recordedBefore) * 3 / 2
}

// await waits for the outcome of j's attempt a (false: ctx ended). In the
// meantime, with reactive scaling on, it rescales j up: once a could run
// at more slots than it has and that stayed so for
// Options.RescaleStabilization, and holdLocked lets it, a waits for its
// next recorded checkpoint (at most checkpointWaitLocked), then is
// canceled and marked rescaled (runJob then deploys the next attempt at
// once, restoring that checkpoint).
func (jm *JobManager) await(ctx context.Context, j *job, a *attempt) (outcome, bool) {
	stab := jm.opts.RescaleStabilization
	var since time.Time // when a could first grow, zero while it cannot
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var fire <-chan time.Time
		jm.mu.Lock()
		wait := jm.changed
		if stab > 0 && !a.ended && !a.rescaled {
			now := jm.opts.Clock.Now()
			target := jm.growthLocked(j, a)
			switch {
			case target == 0:
				since = time.Time{}
				a.armedAt = time.Time{}
			case since.IsZero():
				since = now
				jm.logf("job %s attempt %s could run at %d slots, not %d: rescaling in %v", j.id, a.id, target, a.slots, stab)
			}
			if timer != nil {
				timer.Stop()
				timer = nil
			}
			due := since.Add(stab)
			switch {
			case target == 0:
			case now.Before(due):
				timer = jm.opts.Clock.Timer(due)
				fire = timer.C()
			default:
				if why := jm.holdLocked(j, a); why != "" {
					if a.held != why {
						a.held = why
						jm.logf("job %s attempt %s is not rescaled: %s", j.id, a.id, why)
					}
					break
				}
				if a.armedAt.IsZero() {
					a.armed, a.armedAt, a.wait = a.checkpoints, now, jm.checkpointWaitLocked(a)
					if a.wait > 0 {
						jm.logf("job %s attempt %s waits for its next checkpoint, at most %v, to rescale from", j.id, a.id, a.wait)
					}
				}
				if end := a.armedAt.Add(a.wait); a.checkpoints == a.armed && now.Before(end) {
					timer = jm.opts.Clock.Timer(end)
					fire = timer.C()
					break
				}
				a.rescaled = true
				j.state = rest.StateRestarting
				fresh := "its latest checkpoint"
				if a.checkpoints > a.armed {
					fresh = "the checkpoint it recorded after the slots came"
				} else if a.wait > 0 {
					fresh = fmt.Sprintf("its latest checkpoint (none came within %v)", a.wait)
				}
				jm.logf("job %s attempt %s rescaled from %d to %d slots: canceling it to restore %s", j.id, a.id, a.slots, target, fresh)
				jm.cancelSharesLocked(j, a)
				jm.notifyLocked()
			}
		}
		jm.mu.Unlock()
		select {
		case o := <-a.outcome:
			return o, true
		case <-ctx.Done():
			return outcome{}, false
		case <-wait:
		case <-fire:
		}
	}
}
