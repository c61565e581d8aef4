package cmd

import "github.com/outboxctl/outboxctl/internal/ledger"

// ledgerPath is the ledger doctor reads ("" when there is no state directory: no evidence).
// The repairs write it through internal/repair (Env.Ledger); cmd only hands doctor its path.
func ledgerPath() string {
	p, err := ledger.Path("")
	if err != nil {
		return ""
	}
	return p
}
