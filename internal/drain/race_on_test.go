//go:build race

package drain_test

// raceEnabled: the race detector slows the database round trips' Go side several times; the
// differential test then drains fewer random shards (the race run looks for data races, the
// plain run for differences from the model).
const raceEnabled = true
