// Package q1to6 holds TPC-H Q1 to Q6 of package tpch, which documents
// and runs them; package query holds what they share. The queries are
// split into packages of a few each so that no compile of them needs more
// than about 1.7 GB.
package q1to6
