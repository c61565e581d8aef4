package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Use makes name the current context: it rewrites current-context through the YAML node
// tree, so the other keys, their order and the comments stay.
//
// The rewrite is a read-modify-write of the file as it is now, not as it was when f was
// loaded: under an exclusive lock on a lock file beside the config (lockPath), it reads the
// file again, edits it and replaces it atomically, so two edits at once (two terminals, a
// script looping over contexts) never lose one another. A symlinked config (a dotfiles
// checkout) stays a link: the link's target is what is replaced, in the target's directory.
func (f *File) Use(name string) error {
	if _, err := f.Context(name); err != nil {
		return err
	}
	target, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return f.writeError(f.Path, err)
	}
	unlock, err := lock(lockPath(target))
	if err != nil {
		return f.writeError(target, err)
	}
	defer unlock()
	data, mode, err := readConfig(target, f.maxBytes)
	if err != nil {
		return err
	}
	cur, err := Parse(f.Path, data, mode)
	if err != nil {
		return err
	}
	if _, err := cur.Context(name); err != nil {
		return err // renamed or removed since f was loaded
	}
	out, err := cur.withCurrent(name)
	if err != nil {
		return err
	}
	if err := writeAtomic(target, out, mode); err != nil {
		return f.writeError(target, err)
	}
	cur.maxBytes = f.maxBytes
	*f = *cur
	f.Current, f.raw = name, out
	return nil
}

// withCurrent is the file's text with current-context set to name.
func (f *File) withCurrent(name string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(f.raw, &doc); err != nil {
		return nil, errorf("", "%s: %s", f.Path, err.Error())
	}
	if len(doc.Content) == 0 { // an empty file: a mapping to put current-context in
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	setCurrent(doc.Content[0], name)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, errorf("", "%s: %s", f.Path, err.Error())
	}
	if err := enc.Close(); err != nil {
		return nil, errorf("", "%s: %s", f.Path, err.Error())
	}
	return buf.Bytes(), nil
}

// writeError is a failure to write the config. It is not the command line's fault (exit 1,
// not 2), and the fix is the directory's: the lock and the new file are created beside the
// config, so the directory must be writable, not only the file.
func (f *File) writeError(path string, err error) error {
	dir := filepath.Dir(path)
	return fmt.Errorf("cannot change current-context in %s: %w: make %s writable by you (the new file and its lock are written there), or set %s to a copy in a writable directory",
		path, err, dir, EnvConfig)
}

// lockPath is the lock file of the config at path: beside it, hidden, never removed (removing
// it would let a second editor lock a new file while the first still holds the old one).
func lockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// setCurrent sets current-context in the root mapping, adding it first when absent.
func setCurrent(root *yaml.Node, name string) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "current-context" {
			v := root.Content[i+1]
			v.Value, v.Tag, v.Style = name, "!!str", 0
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "current-context"}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
	root.Content = append([]*yaml.Node{k, v}, root.Content...)
}

// writeAtomic replaces path with data: a reader never sees half a file, a failed write leaves
// the old one, and once it returns the new file survives a crash (the file and then its
// directory are synced).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".outboxctl-config-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	for _, step := range []func() error{
		func() error { _, err := tmp.Write(data); return err },
		func() error { return tmp.Chmod(mode) },
		tmp.Sync,
	} {
		if err := step(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}
