package render

// Lines writes each of lines on stdout as Linef("%s", l) does: a line each, its control
// characters escaped (a frame of top --once, enums resolve's and lint's lines).
func (p *Printer) Lines(lines []string) error {
	for _, l := range lines {
		if err := p.Linef("%s", l); err != nil {
			return err
		}
	}
	return nil
}
