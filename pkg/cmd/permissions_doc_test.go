package cmd

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestPermissionsDoc: docs/permissions.md has one ClusterRole per mode,
// each only reads, and none asks for nodes/proxy (whose get reaches the
// kubelet's exec, attach and port-forward). The node role is the one the
// e2e test binds behind the real kubelet authorizer.
func TestPermissionsDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/permissions.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, block := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(block), &role); err != nil {
			t.Fatalf("%v\n%s", err, block)
		}
		if role.Kind != "ClusterRole" || role.APIVersion != "rbac.authorization.k8s.io/v1" {
			t.Errorf("%s: kind %s %s", role.Name, role.APIVersion, role.Kind)
		}
		names = append(names, role.Name)
		for _, r := range role.Rules {
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" {
					t.Errorf("%s: verb %q on %v is not a read", role.Name, v, r.Resources)
				}
			}
			for _, res := range r.Resources {
				if res == "*" || res == "nodes/proxy" || strings.HasSuffix(res, "/exec") || strings.HasSuffix(res, "/attach") || strings.HasSuffix(res, "/portforward") {
					t.Errorf("%s: resource %q is not read-only", role.Name, res)
				}
			}
		}
	}
	for _, mode := range []string{"scale-in", "watch", "hpa", "job", "node", "pod", "desired", "drain", "rollout"} {
		if !slices.Contains(names, "scale-preview-"+mode) {
			t.Errorf("no ClusterRole scale-preview-%s (have %v)", mode, names)
		}
	}
}
