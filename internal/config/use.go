package config

import (
	"bytes"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Use makes name the current context: it rewrites current-context through the YAML node
// tree, so the other keys, their order and the comments stay, and replaces the file
// atomically (a temporary file in the same directory, same mode, renamed over it).
func (f *File) Use(name string) error {
	if _, err := f.Context(name); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(f.raw, &doc); err != nil {
		return errorf("", "%s: %s", f.Path, err.Error())
	}
	setCurrent(doc.Content[0], name)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return errorf("", "%s: %s", f.Path, err.Error())
	}
	if err := enc.Close(); err != nil {
		return errorf("", "%s: %s", f.Path, err.Error())
	}
	if err := writeAtomic(f.Path, buf.Bytes(), f.Mode); err != nil {
		return errorf("", "writing %s: %s", f.Path, err.Error())
	}
	f.Current, f.raw = name, buf.Bytes()
	return nil
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

// writeAtomic replaces path with data: a reader never sees half a file, and a failed write
// leaves the old one.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".outboxctl-config-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
