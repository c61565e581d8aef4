package repair

import "github.com/outboxctl/outboxctl/internal/query"

// MaxSkipMessages bounds skip MESSAGE_ID...: a longer list is a bulk repair's (--category
// with the selector flags), not a command line's.
const MaxSkipMessages = 10000

// MessageIDs parses skip's MESSAGE_IDs (id: as the command line's ids are parsed, with its
// hint), refusing a repeat (one group, named twice, would read as two in the plan's count).
func MessageIDs(args []string, id func(s, hint string) (int64, error)) ([]int64, error) {
	if len(args) > MaxSkipMessages {
		return nil, refusedf("outboxctl skip --category C --shards-from FILE", "skip takes at most %d MESSAGE_IDs; for more, select the shards with the bulk form", MaxSkipMessages)
	}
	seen := map[int64]bool{}
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		n, err := id(a, "outboxctl skip 123456 123457")
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, refusedf("outboxctl skip 123456 123457", "message %d is named twice", n)
		}
		seen[n] = true
		ids = append(ids, n)
	}
	return ids, nil
}

// ShardRefs are the shards of SCOPE ID ID... (scope resolved), each once in the order
// given (id: as the command line's ids are parsed, with its hint).
func ShardRefs(scope int, ids []string, hint string, id func(s, hint string) (int64, error)) ([]query.ShardRef, error) {
	seen := map[int64]bool{}
	var refs []query.ShardRef
	for _, arg := range ids {
		n, err := id(arg, hint)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			refs = append(refs, query.ShardRef{Scope: scope, ID: n})
		}
	}
	return refs, nil
}
