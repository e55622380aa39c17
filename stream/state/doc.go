// Package state is the keyed state of weir's stream operators, on Flink's model.
package state
