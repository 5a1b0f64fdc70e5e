package cmd

import (
	"bytes"
	"encoding/json"
	"os"
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
		{"drain-disable-eviction", false, "", []string{"drain", "node-1", "node-2", "--ignore-daemonsets", "--disable-eviction", "-f", "../../examples/drain.yaml", "--now", liveNowFlag}},
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

// Every field of the schema is documented in docs/output.md.
func TestOutputDocCoversSchema(t *testing.T) {
	doc, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	fields := s.Properties
	for _, d := range s.Defs {
		for k, v := range d.Properties {
			fields[k] = v
		}
	}
	for k := range fields {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			t.Errorf("docs/output.md does not document the field %q", k)
		}
	}
}
