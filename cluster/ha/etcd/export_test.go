package etcd

import "strconv"

// pauseKeepAlive stops s's lease keep-alive without revoking the lease, as
// a process stopped by SIGSTOP stops renewing it: the lease then expires
// after its TTL.
func pauseKeepAlive(s *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session.Orphan()
}

func itoa(n int) string { return strconv.Itoa(n) }
