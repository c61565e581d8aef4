package cmd

// maxSkipMessages bounds skip MESSAGE_ID...: a longer list is a bulk repair's (--category
// with the selector flags), not a command line's.
const maxSkipMessages = 10000

// messageIDs parses skip's MESSAGE_IDs, refusing a repeat (one group, named twice, would
// read as two in the plan's count).
func messageIDs(args []string) ([]int64, error) {
	if len(args) > maxSkipMessages {
		return nil, usageErrorf("outboxctl skip --category C --shards-from FILE", "skip takes at most %d MESSAGE_IDs; for more, select the shards with the bulk form", maxSkipMessages)
	}
	seen := map[int64]bool{}
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		id, err := nonNegativeID("message id", a, "outboxctl skip 123456 123457")
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, usageErrorf("outboxctl skip 123456 123457", "message %d is named twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}
