package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// streamJSON prints exactly what kubectl's JSON printer prints, on real
// predictions (a Deployment mid-rollout, a generated 300-pod snapshot) and
// on one with characters JSON escapes.
func TestStreamJSONMatchesKubectl(t *testing.T) {
	// The printer the command picks for -o json, and kubectl's within it.
	o := NewOptions(genericiooptions.IOStreams{})
	format := "json"
	o.PrintFlags.OutputFormat = &format
	if err := o.completePrinter(); err != nil {
		t.Fatal(err)
	}
	stream, ok := o.printer.(streamJSON)
	if !ok {
		t.Fatalf("-o json prints with %T", o.printer)
	}
	kubectl := stream.kubectl
	gen := filepath.Join(t.TempDir(), "pods.json")
	var js bytes.Buffer
	if err := sourcetest.WriteJSON(&js, 300); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gen, js.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var preds []*prediction.Prediction
	for _, args := range [][]string{
		offlineArgs,
		{"-f", "../../examples/rollout.json", "deploy/api", "--replicas=4", "-n", "shop", "--now", liveNowFlag},
		{"-f", gen, "deploy/web", "--replicas=250", "-n", "bench", "--now", liveNowFlag},
	} {
		r := cliRun(t, nil, nil, append(args, "-o", "json")...)
		wantExit(t, r, ExitOK)
		p := &prediction.Prediction{}
		if err := json.Unmarshal([]byte(r.stdout), p); err != nil {
			t.Fatal(err)
		}
		preds = append(preds, p)
	}
	odd := *preds[0]
	odd.Pods = append([]prediction.Pod(nil), odd.Pods...)
	odd.Pods[0].Reason = `<b>&"quoted"</b> \ é` + "\t\u2028"
	odd.Warnings = append(odd.Warnings, "a <warning> & more")
	preds = append(preds, &odd)
	for i, p := range preds {
		var want, got bytes.Buffer
		if err := kubectl.PrintObj(p, &want); err != nil {
			t.Fatal(err)
		}
		if err := stream.PrintObj(p, &got); err != nil {
			t.Fatal(err)
		}
		if len(p.Pods) == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("prediction %d (%d pods): streamed output differs from kubectl's:\n%s\nwant:\n%s", i, len(p.Pods), got.String(), want.String())
		}
	}
}
