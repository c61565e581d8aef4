package report

// Version is `version -o json`'s document: the release and the commit it was built from.
type Version struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}
