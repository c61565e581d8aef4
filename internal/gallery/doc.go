// Package gallery holds the incident gallery (gallery_test.go): incident shapes from
// reference §8 and §10.5 played end to end, Sentry's workers (internal/sentrysim) running
// beside outboxctl, an operator following only the commands outboxctl printed. It has no
// code of its own: its tests are a separate test binary, so they run beside cmd's.
package gallery
