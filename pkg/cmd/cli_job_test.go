package cmd

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

// examples/job.json: the Indexed job/train (six indexes, index 2 twice)
// and the NonIndexed job/queue (two pods tied), at jobNow.
const (
	jobFile = "../../examples/job.json"
	jobNow  = "2025-06-01T12:00:00Z"
)

func jobArgs(target string, extra ...string) []string {
	return append([]string{"-f", jobFile, "-n", "ml", target, "--now", jobNow}, extra...)
}

func TestJobGoldenLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"job_elastic", jobArgs("job/train", "--parallelism=3", "--completions=3")},
		{"job_indexed", jobArgs("job/train", "--parallelism=4")},
		{"job_uncertain", jobArgs("job/queue", "--parallelism=1")},
	} {
		for _, width := range []int{80, 120} {
			name := tc.name + "_" + map[int]string{80: "80", 120: "120"}[width]
			t.Run(name, func(t *testing.T) {
				defer func(w int) { cliWidth = w }(cliWidth)
				cliWidth = width
				r := cliRun(t, nil, nil, tc.args...)
				wantLayout(t, r, "layout_"+name, width)
			})
		}
	}
}

// Odd but valid: exit 0 and one plain line.
func TestJobNothingToScaleIn(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{jobArgs("job/queue", "--parallelism=4"), "parallelism 4 is not below the current 4"},
		{jobArgs("job/queue", "--parallelism=9"), "not below"},
		{jobArgs("job/paused", "--parallelism=1"), "suspended"},
	} {
		r := cliRun(t, nil, nil, tc.args...)
		wantExit(t, r, ExitOK)
		if lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: stdout %q, want one line with %q", tc.args, r.stdout, tc.want)
		}
	}
}

// -o json adds the job section and completion indexes, and matches the
// published schema.
func TestJobJSON(t *testing.T) {
	sch := compileSchema(t)
	for _, args := range [][]string{
		jobArgs("job/train", "--parallelism=3", "--completions=3", "-o", "json"),
		jobArgs("job/queue", "--parallelism=1", "-o", "json"),
		jobArgs("job/paused", "--parallelism=1", "-o", "json"),
	} {
		r := cliRun(t, nil, nil, args...)
		wantExit(t, r, ExitOK)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%v: the output does not match %s:\n%v", args, schemaPath, err)
		}
	}
	r := cliRun(t, nil, nil, jobArgs("job/train", "--parallelism=3", "--completions=3", "-o", "json")...)
	p := decode(t, r.stdout)
	if p.Job == nil || p.Job.CompletionMode != "Indexed" || p.Job.Completions == nil || p.Job.Completions.To != 3 || p.Job.WantActive != 3 || p.Job.Forced != 4 {
		t.Fatalf("job section %+v", p.Job)
	}
	want := []string{"train-2-q5w1t", "train-3-h6n8v", "train-4-c2j7s", "train-5-f9l4k"}
	if !slices.Equal(p.Victims, want) || !p.Certain {
		t.Errorf("victims %v certain %v, want %v certain", p.Victims, p.Certain, want)
	}
	for _, pod := range p.Pods {
		if pod.CompletionIndex == nil {
			t.Errorf("%s has no completionIndex", pod.Name)
		}
	}
	r = cliRun(t, nil, nil, jobArgs("job/train", "--parallelism=3", "--completions=3", "-o", "name")...)
	if r.stdout != "pod/train-2-q5w1t\npod/train-3-h6n8v\npod/train-4-c2j7s\npod/train-5-f9l4k\n" {
		t.Errorf("-o name: %q", r.stdout)
	}
	// A scale-in document of another kind has no job section.
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/web", "--replicas=3", "-n", "shop", "-o", "json", "--now", liveNowFlag)
	if strings.Contains(r.stdout, `"job"`) || strings.Contains(r.stdout, "completionIndex") {
		t.Error("a Deployment's document mentions the job fields")
	}
}

// Live: the Job and its pods read from the API (get and list only) give
// the same answer as the file.
func TestJobLive(t *testing.T) {
	data, err := os.ReadFile(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, raw := range list.Items {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	for _, extra := range [][]string{{"job/train", "--parallelism=3", "--completions=3"}, {"job/queue", "--parallelism=1"}} {
		args := append([]string{"-n", "ml", "--now", jobNow, "--kube-version", "1.37", "-o", "json"}, extra...)
		c := fake.NewClientset(objs...)
		live := decode(t, cliRun(t, c, nil, args...).stdout)
		onlyReadActions(t, c)
		offline := decode(t, cliRun(t, nil, nil, jobArgs(extra[0], append(extra[1:], "-o", "json")...)...).stdout)
		if !slices.Equal(live.Victims, offline.Victims) || live.Certain != offline.Certain || len(live.Pods) != len(offline.Pods) {
			t.Errorf("%v: live %v (certain %v, %d pods), offline %v (certain %v, %d pods)", extra, live.Victims, live.Certain, len(live.Pods), offline.Victims, offline.Certain, len(offline.Pods))
		}
	}
}
