package report

import "github.com/outboxctl/outboxctl/internal/render"

// NextSteps is the field a card of an inspect command ends with when the command can work
// out what to run next (inspect message: the skip of a head in backoff, then its shard;
// inspect shard: its head message and a reschedule at the cap, the switch when
// kill-switched). Its json tag is the key: the card gets it through WithNext, and the
// output contract declares the card's row as the row followed by this type's fields
// (internal/contract), so the key is written once.
type NextSteps struct {
	Next render.Commands `json:"next,omitempty"`
}

// WithNext is card followed by next (nothing when next is empty).
func WithNext(card []render.Field, next render.Commands) []render.Field {
	return append(card, render.FieldsOf(NextSteps{Next: next})...)
}
