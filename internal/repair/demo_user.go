package repair

// DemoUser is the database the user set for demo up (DemoClusterUp's user): dsn when one is
// given (given: --dsn, OUTBOXCTL_DSN or the libpq variables), "(the libpq variables)" when
// only those name it (no DSN, and still the user's choice), "" when none is.
func DemoUser(dsn string, given bool) string {
	switch {
	case !given:
		return ""
	case dsn == "":
		return "(the libpq variables)"
	}
	return dsn
}
