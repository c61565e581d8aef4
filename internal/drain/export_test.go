package drain

// FileSyncs is the number of fsyncs of the bulk run's archive file so far (0: not open yet).
func (ba *BulkArchive) FileSyncs() int {
	if ba.file == nil {
		return 0
	}
	ba.file.mu.Lock()
	defer ba.file.mu.Unlock()
	return ba.file.syncs
}

// SetChunk makes a's DeleteArchived read and delete n rows at a time.
func (a *ArchivedDelete) SetChunk(n int) { a.chunk = n }
