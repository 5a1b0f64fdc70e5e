package cmd

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/client-go/kubernetes/fake"
)

const schemaPath = "../../docs/schema/scale-preview-v1.json"

// Real outputs of every workload kind and layout validate against the
// published schema, which forbids unknown fields: a field added to the
// output without adding it to the schema (and docs/output.md) fails here.
func TestOutputMatchesSchema(t *testing.T) {
	sch := compileSchema(t)
	web := []string{"-f", "../../examples/web.yaml", "-n", "shop", "--now", liveNowFlag}
	cases := []struct {
		name   string
		client bool
		stdin  string
		args   []string
	}{
		{"deployment", false, "", append([]string{"deploy/web", "--replicas=3"}, web...)},
		{"deployment-scale-up", false, "", append([]string{"deploy/web", "--replicas=9"}, web...)},
		{"replicaset", false, "", append([]string{"rs/web-7d9f8c6b5", "--replicas=2"}, web...)},
		{"steering", false, "", append([]string{"deploy/web", "--replicas=3", "--spare", "web-7d9f8c6b5-p6hj"}, web...)},
		{"runbook", false, "", []string{"-f", "../../examples/runbook.yaml", "deploy/web", "--replicas=3", "-n", "shop", "--now", liveNowFlag}},
		{"rollout", false, "", []string{"-f", "../../examples/rollout.json", "deploy/api", "--replicas=2", "-n", "shop", "--now", liveNowFlag}},
		{"tie", false, "", []string{"-f", "testdata/tie.yaml", "rs/pair", "--replicas=1", "--now", liveNowFlag}},
		{"live-rollout", true, "", liveArgs},
		{"autoscaler", false, "", []string{"-f", "../../examples/runbook.yaml", "hpa/web", "-n", "shop", "--now", liveNowFlag}},
		{"autoscaler-replicas", false, "", []string{"-f", "../../examples/runbook.yaml", "hpa/web", "--replicas=3", "-n", "shop", "--now", liveNowFlag}},
		{"statefulset", false, stsFile("OrderedReady", 0, "Delete", "0", "1", "2"), []string{"-f", "-", "sts/web", "--replicas=1", "--now", liveNowFlag}},
		{"node", false, "", []string{"-f", nodeFilePath, "-f", nodeSummaryPath, "-f", nodeConfigzPath, "node/worker-1", "--now", nodeNow}},
		{"node-what-if", false, "", []string{"-f", nodeFilePath, "-f", nodeSummaryPath, "-f", nodeConfigzPath, "node/worker-1", "--now", nodeNow, "--assume", "nodefs.available=5%"}},
		{"drain", false, "", []string{"drain", "node-1", "node-2", "--ignore-daemonsets", "-f", "../../examples/drain.yaml", "--now", liveNowFlag}},
		{"drain-refused", false, "", []string{"drain", "-l", "pool=blue", "-f", "../../examples/drain.yaml", "--now", liveNowFlag}},
		{"drain-race", false, "", []string{"drain", "node-1", "node-2", "-f", "../../examples/disruptions.yaml", "--now", liveNowFlag}},
		{"drain-disable-eviction", false, "", []string{"drain", "node-1", "node-2", "--ignore-daemonsets", "--disable-eviction", "-f", "../../examples/drain.yaml", "--now", liveNowFlag}},
		{"outage", false, "", []string{"outage", "--zone", "zone-a", "-f", "../../examples/outage.yaml", "-n", "shop", "--now", liveNowFlag}},
		{"outage-all-zones", false, "", []string{"outage", "-l", "kubernetes.io/hostname", "-f", "../../examples/outage.yaml", "-n", "shop", "--now", liveNowFlag}},
		{"rollout-deployment", false, "", rolloutArgs()},
		{"rollout-statefulset", false, "", rolloutSTSArgs()},
		{"rollout-daemonset", false, "", rolloutDSArgs()},
		{"statefulset-parallel", false, stsFile("Parallel", 2, "Retain", "2", "3", "4"), []string{"-f", "-", "sts/web", "--replicas=1", "--now", liveNowFlag}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r cliResult
			if tc.client {
				r = cliRun(t, fake.NewClientset(liveObjects()...), nil, append(tc.args, "-o", "json")...)
			} else {
				r = cliRun(t, nil, strings.NewReader(tc.stdin), append(tc.args, "-o", "json")...)
			}
			if r.code != ExitOK {
				t.Fatalf("%s", r)
			}
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(doc); err != nil {
				t.Errorf("the output does not match %s:\n%v", schemaPath, err)
			}
			// Lists are present even when empty.
			if strings.Contains(r.stdout, ": null") && !strings.Contains(r.stdout, `"stableUntil": null`) {
				t.Errorf("a null in the output:\n%s", r.stdout)
			}
		})
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema { return compileSchemaFiles(t, schemaPath) }

// compileSchemaFiles adds each schema under its $id, so that one can refer
// to another, and compiles the last.
func compileSchemaFiles(t *testing.T, paths ...string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	var id string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		id, _ = doc.(map[string]any)["$id"].(string)
		if id == "" {
			t.Fatalf("%s has no $id", path)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// The schema rejects what it must: an unknown field, a time with
// nanoseconds, a null list.
func TestSchemaIsStrict(t *testing.T) {
	sch := compileSchema(t)
	r := cliRun(t, nil, nil, append(offlineArgs, "-o", "json")...)
	for _, bad := range []struct{ from, to string }{
		{`"certain": true,`, `"certain": true, "surprise": 1,`},
		{`"stableUntil": "2025-01-01T13:26:36Z"`, `"stableUntil": "2025-01-01T13:26:36.093Z"`},
		{`"referenceTime": "2025-01-01T12:00:00Z"`, `"referenceTime": "2025-01-01T13:00:00+01:00"`},
		{`"warnings": []`, `"warnings": null`},
	} {
		s := strings.Replace(r.stdout, bad.from, bad.to, 1)
		if s == r.stdout {
			t.Fatalf("%q not in the output", bad.from)
		}
		var doc any
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			t.Fatal(err)
		}
		if sch.Validate(doc) == nil {
			t.Errorf("the schema accepts %s", bad.to)
		}
	}
}

// docs/output.md has a section per schema object (a heading naming it in
// backquotes, e.g. ### `eviction`, or ### The document (`ScalePreview`)
// for a file's top level) whose field table lists exactly the object's
// fields, each marked "Always" exactly when the schema requires it: every
// schema file under docs/schema, every object in it, and no field table
// under a heading that names no object or the wrong one.
func TestOutputDocMatchesSchemaObjects(t *testing.T) {
	doc, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := docSections(t, string(doc))
	objects := schemaObjects(t)
	for name, fields := range objects {
		got, ok := sections[name]
		if !ok {
			t.Errorf("docs/output.md has no section for the schema object %q (a heading with `%s` and its field table)", name, name)
			continue
		}
		for f, required := range fields {
			always, ok := got[f]
			switch {
			case !ok:
				t.Errorf("docs/output.md: the section of %q lacks its field %q", name, f)
			case always != required:
				t.Errorf("docs/output.md: %s.%s: Always says %v, the schema's required says %v", name, f, always, required)
			}
		}
		for f := range got {
			if _, ok := fields[f]; !ok {
				t.Errorf("docs/output.md: the section of %q lists %q, which the schema's %q does not have", name, f, name)
			}
		}
	}
	for name := range sections {
		if _, ok := objects[name]; !ok {
			t.Errorf("docs/output.md has a field table under %q, which no schema object is called", name)
		}
	}
}

// docSections reads the JSON part of docs/output.md: for each heading
// that names an object in backquotes, the fields of its "| Field |" table
// and whether its Always column says yes.
func docSections(t *testing.T, doc string) map[string]map[string]bool {
	t.Helper()
	_, json, ok := strings.Cut(doc, "\n## The JSON document")
	if !ok {
		t.Fatal("docs/output.md has no section \"## The JSON document\"")
	}
	out := map[string]map[string]bool{}
	current, inTable := "", false
	for _, line := range strings.Split(json, "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
			current, inTable = firstCode(line), false
			if _, dup := out[current]; dup && current != "" {
				t.Errorf("docs/output.md: two sections for %q", current)
			}
		case strings.HasPrefix(line, "| Field |"):
			if current == "" {
				t.Errorf("docs/output.md: a field table under a heading that names no object: %q", line)
			}
			inTable = true
			out[current] = map[string]bool{}
		case inTable && strings.HasPrefix(line, "| `"):
			cells := strings.Split(line, " | ")
			out[current][firstCode(line)] = len(cells) > 2 && cells[2] == "yes"
		case !strings.HasPrefix(line, "|"):
			inTable = false
		}
	}
	return out
}

// firstCode is the first `backquoted` text of line, or "".
func firstCode(line string) string {
	_, rest, ok := strings.Cut(line, "`")
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(rest, "`")
	return code
}

// schemaObjects reads every schema file: its top level under the kind it
// describes, and each object of $defs under its name, with their fields
// and whether each is required.
func schemaObjects(t *testing.T) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob("../../docs/schema/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	type object struct {
		Properties map[string]struct {
			Const any `json:"const"`
		} `json:"properties"`
		Required []string          `json:"required"`
		Defs     map[string]object `json:"$defs"`
	}
	out := map[string]map[string]bool{}
	add := func(file, name string, o object) {
		fields := map[string]bool{}
		for f := range o.Properties {
			fields[f] = slices.Contains(o.Required, f)
		}
		if had, ok := out[name]; ok && !maps.Equal(had, fields) {
			t.Errorf("%s: two objects called %q with different fields", file, name)
		}
		out[name] = fields
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var top object
		if err := json.Unmarshal(data, &top); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		kind, _ := top.Properties["kind"].Const.(string)
		if kind == "" {
			t.Fatalf("%s: the top level has no const kind to name its section", f)
		}
		add(f, kind, top)
		for name, d := range top.Defs {
			if len(d.Properties) > 0 {
				add(f, name, d)
			}
		}
	}
	return out
}
