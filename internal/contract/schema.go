package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/render"
)

// File is the document's schema file under docs/schema: "inspect-shard.json".
func (d Document) File() string { return strings.ReplaceAll(d.Command, " ", "-") + ".json" }

// SchemaID is the $id of a schema file (the repository's path: ids only name, they are not fetched).
func SchemaID(file string) string {
	return "https://github.com/outboxctl/outboxctl/docs/schema/" + file
}

// Schema is the document's JSON Schema (draft 2020-12), indented, with a final newline.
func (d Document) Schema() ([]byte, error) {
	s := d.schema()
	s.Version = "https://json-schema.org/draft/2020-12/schema"
	s.ID = jsonschema.ID(SchemaID(d.File()))
	s.Title = "outboxctl " + d.Command + " -o json"
	s.Description = d.About
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", d.Command, err)
	}
	return append(b, '\n'), nil
}

// FanOutFile is the schema file of the document merged over contexts: "doctor.fanout.json".
func (d Document) FanOutFile() string { return strings.TrimSuffix(d.File(), ".json") + ".fanout.json" }

// FanOutSchema is the JSON Schema of the document as a read over several contexts prints
// it (internal/fanout.MergeDocs): each section a table, even a card (a row per context),
// each row led by the context it came from; a row's other keys are those of any context's
// rows, null in a row whose context lacked the column (the control silo's cell column in a
// cell context's rows). Only for a FanOut document.
func (d Document) FanOutSchema() ([]byte, error) {
	s := d.sections(fanOutSection)
	s.Version = "https://json-schema.org/draft/2020-12/schema"
	s.ID = jsonschema.ID(SchemaID(d.FanOutFile()))
	s.Title = "outboxctl --context a,b " + d.Command + " -o json"
	s.Description = d.About + " Over several contexts: every row has the context it came from."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("fan-out schema of %s: %w", d.Command, err)
	}
	return append(b, '\n'), nil
}

// fanOutSection is a section merged over contexts: an array of rows whose first key is
// the context, then every key of the section's row types, each nullable and optional.
func fanOutSection(s Section) *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("context", &jsonschema.Schema{Type: "string", Description: "the context the row came from"})
	for _, t := range s.Rows {
		for p := rowSchema(t).Properties.Oldest(); p != nil; p = p.Next() {
			if p.Key == "context" {
				continue
			}
			if had, ok := props.Get(p.Key); ok {
				props.Set(p.Key, &jsonschema.Schema{AnyOf: append(had.AnyOf[:len(had.AnyOf):len(had.AnyOf)], p.Value)})
				continue
			}
			props.Set(p.Key, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null"}, p.Value}})
		}
	}
	row := &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"context"}, AdditionalProperties: jsonschema.FalseSchema}
	return &jsonschema.Schema{Type: "array", Items: row}
}

// schema is what the printer prints: one section's value alone, several as one object keyed
// by name; with optional sections, whichever the command printed.
func (d Document) schema() *jsonschema.Schema {
	if d.Or != nil {
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{Document{Sections: d.Sections}.schema(), Document{Sections: d.Or}.schema()}}
	}
	return d.sections(sectionSchema)
}

// sections is the document of d's sections, each section's value given by value.
func (d Document) sections(value func(Section) *jsonschema.Schema) *jsonschema.Schema {
	var required, all []Section
	for _, s := range d.Sections {
		all = append(all, s)
		if !s.Optional {
			required = append(required, s)
		}
	}
	if len(all) == 1 {
		return value(all[0])
	}
	obj := &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties(), AdditionalProperties: jsonschema.FalseSchema}
	for _, s := range all {
		obj.Properties.Set(s.Name, value(s))
	}
	for _, s := range required {
		obj.Required = append(obj.Required, s.Name)
	}
	// A section printed without the others prints alone, as its value: the one required
	// section when the others are optional, any of them when all are.
	alone := required
	if len(required) == 0 {
		alone = all
	}
	if len(alone) != 1 && len(required) != 0 {
		return obj
	}
	alt := &jsonschema.Schema{}
	for _, s := range alone {
		alt.AnyOf = append(alt.AnyOf, value(s))
	}
	alt.AnyOf = append(alt.AnyOf, obj)
	return alt
}

func sectionSchema(s Section) *jsonschema.Schema {
	var rows []*jsonschema.Schema
	for _, t := range s.Rows {
		rows = append(rows, rowSchema(t))
	}
	item := rows[0]
	if len(rows) > 1 {
		item = &jsonschema.Schema{AnyOf: rows}
	}
	table := &jsonschema.Schema{Type: "array", Items: item}
	switch s.Shape {
	case Card:
		return item
	case CardOrTable:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{item, table}}
	case Table:
	}
	return table
}

// rowSchema is a row's object: every json-tagged field a property in field order, required
// unless omitempty, no other key.
func rowSchema(t reflect.Type) *jsonschema.Schema {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true, Mapper: mapper}
	s := r.ReflectFromType(nullable(t))
	s.Version = ""
	return s
}

// nullable is t with every pointer, slice, map or interface field marked nullable (JSON null
// is what encoding/json and the printer write for nil), keeping only the fields JSON
// carries, in order.
func nullable(t reflect.Type) reflect.Type {
	var fields []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || name == "-" || f.Tag.Get("render") == "human" {
			continue
		}
		tag := f.Tag
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			if !strings.Contains(tag.Get("jsonschema"), "nullable") {
				tag = reflect.StructTag(strings.TrimSpace(string(tag) + ` jsonschema:"nullable"`))
			}
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: tag})
	}
	return reflect.StructOf(fields)
}

// mapper gives the types the printer writes specially their JSON form (render.jsonValue).
func mapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[render.Due]():
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case reflect.TypeFor[render.Styled]():
		return &jsonschema.Schema{Type: "string"}
	case reflect.TypeFor[render.Ratio]():
		return &jsonschema.Schema{Type: "number"}
	case reflect.TypeFor[drain.Count]():
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "integer"}, {Type: "null"}}, Description: "null while a COMMIT that got no answer is in doubt"}
	case reflect.TypeFor[doctor.Evidence]():
		return &jsonschema.Schema{Type: "object", Description: "the check's numbers, keyed by name"}
	}
	return nil
}
