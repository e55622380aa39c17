// Package q12to17 holds TPC-H Q12 to Q17 of package tpch, which documents
// and runs them; package query holds what they share. The queries are
// split into packages of a few each so that no compile of them needs more
// than about 1.7 GB.
package q12to17
