// Package archtest checks the dependency rules stated in docs/ARCHITECTURE.md. It has
// no code of its own, only a test that parses every package's imports.
package archtest
