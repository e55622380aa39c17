package checkpoint

import (
	"fmt"
	"slices"
	"sync"
)

// Storage keeps a job's completed snapshots. The stream runtime stores a
// checkpoint once every task acknowledged it, and restores from Latest.
type Storage interface {
	// Store makes s durable and visible, and returns where it is (a path,
	// for storage in a directory). See the package doc for the contract.
	Store(s *Snapshot) (string, error)
	// Latest returns the newest complete snapshot and where it is, or nil
	// when there is none.
	Latest() (*Snapshot, string, error)
}

// Memory is a Storage in memory, for tests and for jobs that recover from
// task failures only within the process.
type Memory struct {
	mu       sync.Mutex
	retained int
	snaps    []*Snapshot
}

// NewMemory returns an empty Memory that retains the newest retained
// checkpoints (at least 1).
func NewMemory(retained int) *Memory {
	return &Memory{retained: max(retained, 1)}
}

// Store keeps s.
func (m *Memory) Store(s *Snapshot) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.snaps); n > 0 && s.ID <= m.snaps[n-1].ID {
		return "", fmt.Errorf("checkpoint: store %s %d after %d", s.Kind, s.ID, m.snaps[n-1].ID)
	}
	m.snaps = append(m.snaps, s)
	var cps int
	for i := len(m.snaps) - 1; i >= 0; i-- {
		if m.snaps[i].Kind != Checkpoint {
			continue
		}
		if cps++; cps > m.retained {
			m.snaps = slices.Delete(m.snaps, i, i+1)
		}
	}
	return fmt.Sprintf("memory:%s-%d", s.Kind, s.ID), nil
}

// Latest returns the newest snapshot stored.
func (m *Memory) Latest() (*Snapshot, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.snaps) == 0 {
		return nil, "", nil
	}
	s := m.snaps[len(m.snaps)-1]
	return s, fmt.Sprintf("memory:%s-%d", s.Kind, s.ID), nil
}

// Retained returns the snapshots kept, oldest first.
func (m *Memory) Retained() []*Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.snaps)
}
