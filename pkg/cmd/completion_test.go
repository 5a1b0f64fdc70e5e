package cmd

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	metadatafake "k8s.io/client-go/metadata/fake"
)

// Live completion lists names through the metadata client: types first,
// then TYPE NAME and TYPE/NAME in the command's namespace, and
// --namespace from the cluster.
func TestLiveCompletion(t *testing.T) {
	meta := func(apiVersion, kind, ns, name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	scheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	client := metadatafake.NewSimpleMetadataClient(scheme,
		meta("apps/v1", "Deployment", "prod", "web"), meta("apps/v1", "Deployment", "prod", "worker"),
		meta("apps/v1", "Deployment", "other", "wrong-namespace"),
		meta("v1", "Namespace", "", "prod"), meta("v1", "Namespace", "", "other"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"depl"}, "deployment\n:4\n"},
		{[]string{"deploy", "w"}, "web\nworker\n:4\n"},
		{[]string{"deployments/wo"}, "deployments/worker\n:4\n"},
		{[]string{"deploy/web", ""}, ":4\n"},
		{[]string{"--namespace", "p"}, "prod\n:4\n"},
	} {
		var out bytes.Buffer
		o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}})
		o.metadata = client
		t.Setenv("KUBECONFIG", t.TempDir()+"/none")
		args := append([]string{"__complete", "-n", "prod"}, c.args...)
		if c.args[0] == "--namespace" {
			args = append([]string{"__complete"}, c.args...)
		}
		if code := run(o, args); code != 0 || !strings.HasPrefix(out.String(), c.want) {
			t.Errorf("__complete %q: exit %d\n%s\nwant it to start\n%s", c.args, code, out.String(), c.want)
		}
	}
}
