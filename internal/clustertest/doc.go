// Package clustertest tests weir on a cluster as processes on loopback:
// a JobManager and TaskManagers started from the weir binary the tests
// build, jobs submitted with weir run --jobmanager, TaskManagers killed
// with SIGKILL and started again, a TaskManager cut off from its
// JobManager by an in-process toxiproxy, a job rescaled up when a larger
// TaskManager starts. The committed output of each job must equal an
// uninterrupted embedded run's. The tests run without -short
// only.
package clustertest
