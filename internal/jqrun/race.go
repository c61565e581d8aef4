//go:build race

package jqrun

// raceEnabled: the race detector maps terabytes of shadow memory, which a capped address
// space refuses at start-up; under it only the heap watch bounds the evaluator.
const raceEnabled = true
