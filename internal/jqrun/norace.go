//go:build !race

package jqrun

const raceEnabled = false
