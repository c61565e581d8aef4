//go:build !unix

package jqrun

// limitAddressSpace: without setrlimit only the heap watch bounds the evaluator.
func limitAddressSpace(int64) {}
