package replica

// Select is the pairs named, each by its name or either of its tables' names (Lookup), or
// every pair when none is named.
func Select(names []string) ([]Pair, error) {
	if len(names) == 0 {
		return Pairs(), nil
	}
	var out []Pair
	for _, name := range names {
		p, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
