package cmd

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

const desiredRolloutFile = "../../examples/rollout-desired.yaml"

// exampleCluster is a fake API server holding every object of a snapshot
// file (the example's live state).
func exampleCluster(t *testing.T, file string) *fake.Clientset {
	t.Helper()
	return fake.NewClientset(fileObjects(t, file, "shop")...)
}

func desiredRolloutArgs(file string, extra ...string) []string {
	return append([]string{"--desired", "-f", file, "-n", "shop", "--kube-version", "1.37", "--now", "2026-01-02T00:00:00Z"}, extra...)
}

// desiredManifest is the example's manifest with its replicas.
func desiredManifest(t *testing.T, replicas string) string {
	t.Helper()
	return writeFile(t, strings.Replace(readString(t, desiredRolloutFile), "replicas: 4", "replicas: "+replicas, 1))
}

// A template change with the same replicas is the rollout that kubectl
// set image starts: the same steps, victims and verdict as `rollout
// deploy/api --image`, in the list's item. The manifest may leave out what
// it does not change (here the containers' requests): kubectl apply keeps
// the live values, and so does the preview.
func TestDesiredRolloutSameAsRollout(t *testing.T) {
	for _, manifest := range []string{"whole", "without requests"} {
		t.Run(manifest, func(t *testing.T) {
			file := desiredManifest(t, "6")
			if manifest == "without requests" {
				file = writeFile(t, strings.Replace(readString(t, file), "        resources:\n          requests:\n            cpu: 500m\n", "", 1))
				if strings.Contains(readString(t, file), "resources") {
					t.Fatal("the requests are still in the manifest")
				}
			}
			desiredSameAsRollout(t, file)
		})
	}
}

func desiredSameAsRollout(t *testing.T, file string) {
	r := cliRun(t, exampleCluster(t, rolloutFile), nil, desiredRolloutArgs(file, "-o", "json")...)
	wantExit(t, r, ExitOK)
	l := decodeList(t, r.stdout)
	direct := cliRun(t, nil, nil, rolloutArgs("--image", "app=registry.example/api:v2", "--kube-version", "1.37", "-o", "json")...)
	wantExit(t, direct, ExitOK)
	want := decode(t, direct.stdout)
	if len(l.Items) != 1 || l.Items[0].Rollout == nil || !l.Workloads[0].TemplateChanged || l.Workloads[0].Change != prediction.ChangeNone {
		t.Fatalf("want one rollout item:\n%s", r.stdout)
	}
	got := l.Items[0]
	if got.Rollout.Change != "desired" || !slices.Equal(got.Victims, want.Victims) || got.Certain != want.Certain || l.Deleted != len(want.Victims) {
		t.Errorf("change %q, victims %v certain %v; want desired, %v %v", got.Rollout.Change, got.Victims, got.Certain, want.Victims, want.Certain)
	}
	got.Rollout.Change = want.Rollout.Change
	a, _ := json.Marshal(got.Rollout)
	b, _ := json.Marshal(want.Rollout)
	if string(a) != string(b) {
		t.Errorf("rollout differs:\n%s\nwant\n%s", a, b)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The example's pull request: 6 -> 4 replicas and a new image. The first
// sync is the scaling event (the one active ReplicaSet to 4: two old pods
// go), then the rollout at surge 1, unavailable 1 (of 4) in the same step:
// a new ReplicaSet of 1, one more old pod down to minAvailable 3, the new
// ReplicaSet to 2. The table at 80 and 120 columns, -o json against the
// list schema, -o name.
func TestDesiredRolloutScaleAndTemplate(t *testing.T) {
	for _, width := range []int{80, 120} {
		defer func(w int) { cliWidth = w }(cliWidth)
		cliWidth = width
		r := cliRun(t, exampleCluster(t, rolloutFile), nil, desiredRolloutArgs(desiredRolloutFile)...)
		wantLayout(t, r, "layout_desired_rollout_"+map[int]string{80: "80", 120: "120"}[width], width)
	}
	r := cliRun(t, exampleCluster(t, rolloutFile), nil, desiredRolloutArgs(desiredRolloutFile, "-o", "json")...)
	wantExit(t, r, ExitOK)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileListSchema(t).Validate(doc); err != nil {
		t.Errorf("the output does not match %s:\n%v", listSchemaPath, err)
	}
	l := decodeList(t, r.stdout)
	ro := l.Items[0].Rollout
	if l.Workloads[0].Change != prediction.ChangeScaleIn || ro.Outcome != prediction.RolloutCompletes || len(l.Items[0].Victims) != 6 {
		t.Fatalf("want a scale-in whose rollout completes with 6 victims:\n%s", r.stdout)
	}
	if st := ro.Steps[0]; len(st.Deleted) != 3 || len(st.Created) != 2 || st.AvailableMin != 3 || !st.Budgets[0].Violated {
		t.Errorf("step 1: %+v", st)
	}
	r = cliRun(t, exampleCluster(t, rolloutFile), nil, desiredRolloutArgs(desiredRolloutFile, "-o", "name")...)
	if r.code != ExitOK || strings.Count(r.stdout, "pod/") != 6 || !strings.HasPrefix(r.stdout, "pod/api-6b8f-c\n") {
		t.Errorf("-o name:\n%s", r)
	}
}

// A StatefulSet's new image with the same replicas is `rollout sts/db
// --image`'s rolling update (reverse ordinal down to the partition).
func TestDesiredRolloutStatefulSet(t *testing.T) {
	manifest := `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 4
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres:17
        resources:
          requests: {cpu: 500m, memory: 1Gi}
`
	r := cliRun(t, exampleCluster(t, rolloutSTSFile), nil, desiredRolloutArgs(writeFile(t, manifest), "-o", "json")...)
	wantExit(t, r, ExitOK)
	l := decodeList(t, r.stdout)
	direct := cliRun(t, nil, nil, "rollout", "sts/db", "-n", "shop", "-f", rolloutSTSFile, "--image", "db=postgres:17",
		"--kube-version", "1.37", "--now", "2026-01-02T00:00:00Z", "-o", "json")
	wantExit(t, direct, ExitOK)
	want := decode(t, direct.stdout)
	if len(l.Items) != 1 || l.Items[0].Rollout == nil {
		t.Fatalf("want one rollout item:\n%s", r.stdout)
	}
	got := l.Items[0]
	got.Rollout.Change = want.Rollout.Change
	a, _ := json.Marshal(got.Rollout)
	b, _ := json.Marshal(want.Rollout)
	if string(a) != string(b) || !slices.Equal(got.Victims, want.Victims) || len(got.Victims) == 0 {
		t.Errorf("rollout differs:\n%s\nwant\n%s", a, b)
	}
}

// Bad input in a template change: a negative maxSurge is the API server's
// refusal, exit 6 with the field named (the fake API server of the
// bad-input matrix serves no cluster-wide lists, so the case is here).
func TestDesiredRolloutBadStrategy(t *testing.T) {
	manifest := strings.Replace(readString(t, desiredRolloutFile), "  selector:", "  strategy: {rollingUpdate: {maxSurge: -1}}\n  selector:", 1)
	r := cliRun(t, exampleCluster(t, rolloutFile), nil, desiredRolloutArgs(writeFile(t, manifest))...)
	wantExit(t, r, ExitBadFile, "maxSurge", `"-1"`)
	if r.stdout != "" {
		t.Errorf("printed:\n%s", r.stdout)
	}
}
