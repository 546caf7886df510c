//go:build !linux

package sandbox

// NonDumpable does nothing where the OS has no such switch.
func NonDumpable() error { return nil }
