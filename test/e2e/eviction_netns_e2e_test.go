package e2e

// The node-pressure eviction preview read live through the real API
// server's node proxy. The API server proxies only to global unicast node
// addresses (isProxyableHostname in pkg/registry/core/node/strategy.go), so
// a kubelet stand-in on 127.0.0.1 is refused. The test therefore creates a
// network namespace with a dummy interface holding 192.0.2.10
// (documentation range: nothing leaves the namespace) and runs, inside it,
// its own etcd and kube-apiserver, the real kubelet server with its real
// authorizer on 192.0.2.10:10250 (kubelet_authz_e2e_test.go) and the plugin. Network namespaces are per thread, so everything inside runs
// in one re-exec of this test binary under `ip netns exec` (see
// evictNetnsHelper), which writes the plugin's answers to a directory that
// the outer test checks.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

const (
	evictNetnsHelperEnv = "SP_EVICT_NETNS_HELPER" // the helper's output dir
	evictNetnsBinEnv    = "SP_EVICT_NETNS_BIN"    // etcd and kube-apiserver
	evictNetnsPluginEnv = "SP_EVICT_NETNS_PLUGIN"

	evictNetnsAddr    = "192.0.2.10"
	evictNetnsKubelet = 10250
	evictNetnsDev     = "sp-evict0"
	evictNetnsNow     = "2026-01-01T00:00:30Z"

	evictNetnsProxyToken  = "sp-evict-proxy-token"
	evictNetnsDeniedToken = "sp-evict-denied-token"
	evictNetnsAdminToken  = "sp-evict-admin-token"
	evictNetnsReaderToken = "sp-evict-reader-token"

	// evictNetnsReader is bound to exactly the node/NAME ClusterRole of
	// docs/permissions.md.
	evictNetnsReader = "node-reader"
)

// evictNetnsPermissions holds the documented ClusterRoles.
var evictNetnsPermissions = filepath.Join("..", "..", "docs", "permissions.md")

// The recorded node of the plugin's own CLI tests (a Node and its pods as
// a List, the kubelet's summary as `kubectl get --raw` prints it); here
// they are served by a real API server and a fake kubelet.
var evictNetnsTestdata = filepath.Join("..", "..", "examples", "node")

// evictNetnsConfigz is the recorded configz without its soft memory
// threshold: with hard and soft both met the recorded answer is uncertain
// (map order picks the grace period), and this test wants a certain one.
const evictNetnsConfigz = `{"kubeletconfig": {"evictionHard": {"memory.available": "100Mi", "nodefs.available": "10%", ` +
	`"nodefs.inodesFree": "5%", "imagefs.available": "15%", "imagefs.inodesFree": "5%"}, ` +
	`"evictionMinimumReclaim": {"memory.available": "500Mi"}, "evictionMaxPodGracePeriod": 30, ` +
	`"enforceNodeAllocatable": ["pods"], "evictionPressureTransitionPeriod": "5m0s"}}`

// evictNetnsRun is one plugin run inside the namespace.
type evictNetnsRunResult struct {
	Args           []string
	Stdout, Stderr string
	Exit           int
}

// evictNetnsResult is what the helper hands back to the outer test.
type evictNetnsResult struct {
	// Runs by name: reader (the documented role, the kubelet's CA by
	// flag), unverified (the same without the flag: the kubeconfig's CA
	// does not sign the kubelet's certificate), insecure (the same with
	// --kubelet-insecure-tls), proxy (nodes/proxy only), denied (nothing).
	Runs        map[string]evictNetnsRunResult
	KubeletHits []kubeletHit // what the real kubelet received, by run
	// Loopback is the API server's answer for a node at 127.0.0.1, the
	// reason for the namespace ("address not allowed").
	Loopback string
	AuditLog string // its path
	Error    string
}

func init() {
	if dir := os.Getenv(evictNetnsHelperEnv); dir != "" {
		os.Exit(evictNetnsHelper(dir))
	}
}

func TestEvictNetnsLiveProxy(t *testing.T) {
	needPlugin(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace (ip netns add)")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("needs the ip command (iproute2) to create a network namespace: not in PATH")
	}
	ns := fmt.Sprintf("sp-evict-%d", os.Getpid())
	ip := func(args ...string) error {
		out, err := exec.Command(ipPath, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := ip("netns", "add", ns); err != nil {
		// CI runs as root on this kind of machine, where this works.
		if requirePlugin() {
			t.Fatalf("cannot create a network namespace: %v", err)
		}
		t.Skipf("cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() {
		if err := ip("netns", "delete", ns); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	inNS := func(args ...string) error { return ip(append([]string{"netns", "exec", ns, ipPath}, args...)...) }
	if err := inNS("link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	// A dummy interface holds the address; kernels without the dummy
	// driver (this VM's: "Unknown device type") get it on the namespace's
	// own lo, which stays inside the namespace just as well.
	dev := evictNetnsDev
	if err := inNS("link", "add", dev, "type", "dummy"); err != nil {
		t.Logf("no dummy interface (%v): the address goes on the namespace's lo", err)
		dev = "lo"
	} else if err := inNS("link", "set", dev, "up"); err != nil {
		t.Fatal(err)
	}
	if err := inNS("addr", "add", evictNetnsAddr+"/24", "dev", dev); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs(evictNetnsTestdata)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, ipPath, "netns", "exec", ns, self)
	cmd.Dir = testdata
	cmd.Env = append(os.Environ(), evictNetnsHelperEnv+"="+dir, evictNetnsBinEnv+"="+env.build.binDir, evictNetnsPluginEnv+"="+env.pluginPath)
	cmd.SysProcAttr = childSysProcAttr()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("helper in netns %s took %s", ns, time.Since(start).Round(time.Millisecond))
	var res evictNetnsResult
	b, rerr := os.ReadFile(filepath.Join(dir, "result.json"))
	if rerr == nil {
		rerr = json.Unmarshal(b, &res)
	}
	if err != nil || rerr != nil || res.Error != "" {
		t.Fatalf("helper: %v; result: %v %s\n%s", err, rerr, res.Error, tailLines(string(out), 60))
	}

	if !strings.Contains(res.Loopback, "address not allowed") {
		t.Errorf("the API server's proxy to a node at 127.0.0.1 answered %q, not \"address not allowed\": is the network namespace still needed?", res.Loopback)
	}

	evictNetnsCheck(ctx, t, dir, &res)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// evictNetnsHelper runs inside the namespace (cwd: the testdata dir) and
// returns the process exit code; its findings go to dir/result.json.
func evictNetnsHelper(dir string) int {
	var res evictNetnsResult
	err := evictNetnsRun(dir, &res)
	if err != nil {
		res.Error = err.Error()
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if werr := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); werr != nil || err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err, werr)
		return 1
	}
	return 0
}

func evictNetnsRun(dir string, res *evictNetnsResult) (err error) {
	// The fake kubelet serves dir/summary.json and dir/configz.json, read
	// at each request: the summary gets the pods' real UIDs once they exist.
	summary, err := os.ReadFile("summary.json")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), summary, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "configz.json"), []byte(evictNetnsConfigz), 0o644); err != nil {
		return err
	}
	certs, err := newKubeletCerts(dir, evictNetnsAddr)
	if err != nil {
		return fmt.Errorf("kubelet certificates: %w", err)
	}
	rec := &kubeletRecorder{}
	defer func() { res.KubeletHits = rec.hits }()

	cp := &controlPlane{dir: dir, binDir: os.Getenv(evictNetnsBinEnv)}
	defer func() {
		cp.stop()
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, cp.logTails(30))
		}
	}()
	// A fresh namespace: fixed ports are free.
	cp.etcdURL, cp.apiURL = "http://127.0.0.1:2379", "https://127.0.0.1:6443"
	etcd, err := cp.startProcess("etcd", "--name", "sp-evict", "--data-dir", filepath.Join(dir, "etcd-data"),
		"--listen-client-urls", cp.etcdURL, "--advertise-client-urls", cp.etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
		"--initial-cluster", "sp-evict=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level", "warn")
	if err != nil {
		return err
	}
	httpc := &http.Client{Timeout: 2 * time.Second}
	if err := waitFor(etcd, 60*time.Second, "etcd /health", func() bool {
		resp, err := httpc.Get(cp.etcdURL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return err
	}
	saKey := filepath.Join(dir, "sa.key")
	if err := writeServiceAccountKey(saKey); err != nil {
		return err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(evictNetnsAdminToken+",admin,admin-uid,system:masters\n"+
		evictNetnsProxyToken+",proxier,proxier-uid\n"+evictNetnsDeniedToken+",denied,denied-uid\n"+
		evictNetnsReaderToken+","+evictNetnsReader+",reader-uid\n"), 0o600); err != nil {
		return err
	}
	certDir := filepath.Join(dir, "certs")
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	res.AuditLog = filepath.Join(dir, "audit.log")
	api, err := cp.startProcess("kube-apiserver",
		"--etcd-servers", cp.etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--endpoint-reconciler-type", "none",
		"--secure-port", "6443", "--cert-dir", certDir,
		"--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saKey, "--service-account-signing-key-file", saKey,
		// Priority: the recorded pods carry their priority values directly.
		"--disable-admission-plugins", "ServiceAccount,Priority",
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--kubelet-preferred-address-types", "InternalIP",
		"--kubelet-certificate-authority", certs.servingCA,
		"--kubelet-client-certificate", certs.apiClientCert, "--kubelet-client-key", certs.apiClientKey,
		"--audit-log-path", res.AuditLog, "--audit-policy-file", policy, "--audit-log-format", "json", "--audit-log-mode", "blocking",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	if err := waitAPIReady(api, cp.apiURL, evictNetnsAdminToken); err != nil {
		return err
	}
	if cp.caData, err = os.ReadFile(filepath.Join(certDir, "apiserver.crt")); err != nil {
		return err
	}
	kubeconfig := func(user, token string) (string, error) {
		p := filepath.Join(dir, user+".kubeconfig")
		return p, writeKubeconfig(p, cp.apiURL, cp.caData, user, token)
	}
	adminKC, err := kubeconfig("admin", evictNetnsAdminToken)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", adminKC)
	if err != nil {
		return err
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := evictNetnsObjects(ctx, admin, dir); err != nil {
		return err
	}

	lo := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sp-evict-loopback"}}
	if lo, err = admin.CoreV1().Nodes().Create(ctx, lo, metav1.CreateOptions{}); err != nil {
		return err
	}
	lo.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	lo.Status.DaemonEndpoints.KubeletEndpoint.Port = evictNetnsKubelet
	if _, err := admin.CoreV1().Nodes().UpdateStatus(ctx, lo, metav1.UpdateOptions{}); err != nil {
		return err
	}
	// The body carries the reason; the client's error does not.
	loBody, loErr := admin.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", lo.Name, "proxy", "configz").DoRaw(ctx)
	res.Loopback = fmt.Sprintf("%v: %s", loErr, loBody)

	configz, err := os.ReadFile(filepath.Join(dir, "configz.json"))
	if err != nil {
		return err
	}
	var doc struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(configz, &doc); err != nil {
		return err
	}
	inner := doc.KubeletConfig
	if err := startRealKubelet(ctx, admin, "worker-1", evictNetnsKubelet, certs, dir, inner, rec); err != nil {
		return fmt.Errorf("kubelet: %w", err)
	}
	res.Runs = map[string]evictNetnsRunResult{}
	for _, r := range []struct {
		name, user, token string
		extra             []string
	}{
		{"reader", evictNetnsReader, evictNetnsReaderToken, []string{"--kubelet-certificate-authority", certs.servingCA, "-o", "json"}},
		{"unverified", evictNetnsReader, evictNetnsReaderToken, []string{"-o", "json"}},
		{"insecure", evictNetnsReader, evictNetnsReaderToken, []string{"--kubelet-insecure-tls", "-o", "json"}},
		{"proxy", "proxier", evictNetnsProxyToken, []string{"--kubelet-certificate-authority", certs.servingCA, "-o", "json"}},
		{"denied", "denied", evictNetnsDeniedToken, []string{"--kubelet-certificate-authority", certs.servingCA, "--fail-if-uncertain"}},
		{"reader-table", evictNetnsReader, evictNetnsReaderToken, []string{"--kubelet-certificate-authority", certs.servingCA}},
	} {
		kc, err := kubeconfig(r.user, r.token)
		if err != nil {
			return err
		}
		rec.setRun(r.name)
		args := append([]string{"node/worker-1", "--kubeconfig", kc, "--now", evictNetnsNow}, r.extra...)
		p, err := runPlugin(ctx, os.Getenv(evictNetnsPluginEnv), args...)
		if err != nil {
			return err
		}
		res.Runs[r.name] = evictNetnsRunResult{Args: args, Stdout: p.stdout, Stderr: p.stderr, Exit: p.exitCode}
	}
	rec.setRun("")
	return nil
}

// evictNetnsObjects registers worker-1 at 192.0.2.10 with its pods, as in
// the recorded node.yaml (real UIDs, rewritten into the summary the fake
// kubelet serves), the RBAC roles, and writes the Node and pods as read
// back from the API server to dir/node.yaml for the offline comparison.
func evictNetnsObjects(ctx context.Context, admin kubernetes.Interface, dir string) error {
	raw, err := os.ReadFile("node.yaml")
	if err != nil {
		return err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(raw, &list); err != nil {
		return err
	}
	var node corev1.Node
	if err := json.Unmarshal(list.Items[0], &node); err != nil {
		return err
	}
	status := node.Status
	status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: evictNetnsAddr}}
	status.DaemonEndpoints.KubeletEndpoint.Port = evictNetnsKubelet
	node.Status = corev1.NodeStatus{}
	created, err := admin.CoreV1().Nodes().Create(ctx, &node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create node: %w", err)
	}
	created.Status = status
	if _, err := admin.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("node status: %w", err)
	}

	uids := map[string]string{} // recorded UID -> real one
	for _, item := range list.Items[1:] {
		var pod corev1.Pod
		if err := json.Unmarshal(item, &pod); err != nil {
			return err
		}
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		recorded, phase := pod.UID, pod.Status.Phase
		pod.UID, pod.Status = "", corev1.PodStatus{}
		c, err := admin.CoreV1().Pods(pod.Namespace).Create(ctx, &pod, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		c.Status.Phase = phase
		if _, err := admin.CoreV1().Pods(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("pod status %s/%s: %w", c.Namespace, c.Name, err)
		}
		uids[string(recorded)] = string(c.UID)
	}
	if err := evictNetnsSetUIDs(dir, uids); err != nil {
		return err
	}

	if err := evictNetnsRBAC(ctx, admin); err != nil {
		return err
	}

	// The offline input: the Node and pods exactly as the API server holds them.
	n, err := admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	if err != nil {
		return err
	}
	pods, err := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=worker-1"})
	if err != nil {
		return err
	}
	n.APIVersion, n.Kind = "v1", "Node"
	items := []any{n}
	for i := range pods.Items {
		pods.Items[i].APIVersion, pods.Items[i].Kind = "v1", "Pod"
		items = append(items, &pods.Items[i])
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "node.yaml"), out, 0o644)
}

// evictNetnsSetUIDs rewrites the recorded pod UIDs in dir/summary.json.
func evictNetnsSetUIDs(dir string, uids map[string]string) error {
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	for old, uid := range uids {
		s = strings.ReplaceAll(s, strconv.Quote(old), strconv.Quote(uid))
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// evictNetnsRBAC binds the users: node-reader to the documented node/NAME
// ClusterRole, proxier to nodes/proxy (with what every node preview
// reads), denied to the reads without any kubelet permission, and the API
// server's kubelet client to system:kubelet-api-admin, as kubeadm does.
func evictNetnsRBAC(ctx context.Context, admin kubernetes.Interface) error {
	documented, err := documentedRole("scale-preview-node")
	if err != nil {
		return err
	}
	base := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
	}
	proxy := append(slices.Clone(base), rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}})
	for _, b := range []struct {
		subject, role string
		rules         []rbacv1.PolicyRule // nil: the role exists
	}{
		{evictNetnsReader, documented.Name, documented.Rules},
		{"proxier", "sp-evict-proxier", proxy},
		{"denied", "sp-evict-denied", base},
		{"kube-apiserver-kubelet-client", "system:kubelet-api-admin", nil},
	} {
		if b.rules != nil {
			if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: b.role}, Rules: b.rules}, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "sp-evict-" + b.subject},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: b.subject}},
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// documentedRole is the ClusterRole named name in docs/permissions.md
// (one per fenced yaml block).
func documentedRole(name string) (*rbacv1.ClusterRole, error) {
	doc, err := os.ReadFile(evictNetnsPermissions)
	if err != nil {
		return nil, err
	}
	for _, block := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(block), &role); err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", evictNetnsPermissions, err, block)
		}
		if role.Kind == "ClusterRole" && role.Name == name {
			return &role, nil
		}
	}
	return nil, fmt.Errorf("%s has no ClusterRole %s", evictNetnsPermissions, name)
}

// evictNetnsCheck checks the helper's runs against the offline answer
// from the same files, and what the real kubelet received.
func evictNetnsCheck(ctx context.Context, t *testing.T, dir string, res *evictNetnsResult) {
	t.Helper()
	offline, err := runPlugin(ctx, env.pluginPath, "-f", filepath.Join(dir, "node.yaml"), "-f", filepath.Join(dir, "summary.json"),
		"-f", filepath.Join(dir, "configz.json"), "node/worker-1", "--now", evictNetnsNow, "-o", "json")
	if err != nil || offline.exitCode != 0 {
		t.Fatalf("offline: %v %s", err, offline)
	}
	off := evictNetnsJSON(t, "offline", offline.stdout)
	hits := func(run string) (n, creds int, codes []string) {
		for _, h := range res.KubeletHits {
			if h.Run == run {
				n++
				if h.Credential {
					creds++
				}
				codes = append(codes, fmt.Sprintf("%s=%d", h.Path, h.Code))
			}
		}
		return n, creds, codes
	}
	for name, r := range res.Runs {
		n, creds, codes := hits(name)
		t.Logf("%s: exit %d; the kubelet got %d requests (%d with credentials): %v", name, r.Exit, n, creds, codes)
	}
	const direct = "[map[document:stats/summary endpoint:192.0.2.10:10250 path:kubelet] map[document:configz endpoint:192.0.2.10:10250 path:kubelet]]"

	// The documented role, the kubelet's CA by flag: read directly, and
	// the same certain answer as the saved files.
	reader := evictNetnsSame(t, res, "reader", off, direct)
	if reader != nil && reader["certain"] != true {
		t.Errorf("reader: the live answer from the kubelet's own figures is not certain: %v", reader["incomplete"])
	}
	if _, creds, codes := hits("reader"); creds == 0 || strings.Contains(fmt.Sprint(codes), "=40") {
		t.Errorf("reader: the kubelet's answers %v (credentials %d), want 200s to an authenticated user", codes, creds)
	}
	// The table wraps long lines: compare with the spacing collapsed.
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if tbl := res.Runs["reader-table"].Stdout; !strings.Contains(flat(tbl), "Kubelet: stats/summary and configz: directly from the kubelet at 192.0.2.10:10250") {
		t.Errorf("the table does not say the kubelet was read directly:\n%s", firstLines(tbl, 8))
	}

	// The kubeconfig's CA does not sign the kubelet's certificate: no
	// request (so no credential) reaches it; the answer is assumed.
	unv := res.Runs["unverified"]
	if n, _, _ := hits("unverified"); n != 0 {
		t.Errorf("unverified: %d requests reached a kubelet whose certificate does not verify", n)
	}
	if u := evictNetnsJSON(t, "unverified", unv.Stdout); u != nil {
		inc := fmt.Sprint(u["incomplete"])
		if u["certain"] != false || !strings.Contains(inc, "does not verify") || !strings.Contains(inc, "no credentials were sent") {
			t.Errorf("unverified: certain %v; incomplete %s", u["certain"], inc)
		}
	}

	// --kubelet-insecure-tls: the credentials are sent, with a warning.
	ins := res.Runs["insecure"]
	insecure := strings.ReplaceAll(direct, "path:kubelet]", "insecureTLS:true path:kubelet]")
	if got := evictNetnsSame(t, res, "insecure", off, insecure); got != nil && !strings.Contains(fmt.Sprint(got["warnings"]), "--kubelet-insecure-tls") {
		t.Errorf("insecure: no warning in the output: %v", got["warnings"])
	}
	if !strings.Contains(ins.Stderr, "Warning: --kubelet-insecure-tls") {
		t.Errorf("insecure: no warning on stderr: %q", ins.Stderr)
	}
	if _, creds, _ := hits("insecure"); creds == 0 {
		t.Error("insecure: no credentials reached the kubelet")
	}

	// nodes/proxy only: the kubelet refuses /stats directly (nodes/stats),
	// the node proxy serves it; /configz is allowed as nodes/proxy too.
	evictNetnsSame(t, res, "proxy", off, "[map[document:stats/summary path:node-proxy] map[document:configz endpoint:192.0.2.10:10250 path:kubelet]]")
	if _, _, codes := hits("proxy"); !slices.Contains(codes, "/stats/summary=403") || !slices.Contains(codes, "/stats/summary=200") {
		t.Errorf("proxy: the kubelet's answers %v, want a 403 (direct) and a 200 (through the API server)", codes)
	}

	// Nothing: the kubelet refuses, the plugin says so, the answer is assumed.
	d := res.Runs["denied"]
	t.Logf("denied (exit %d):\n%s", d.Exit, firstLines(d.Stdout, 14))
	if d.Exit != 8 {
		t.Errorf("denied with --fail-if-uncertain: exit %d, want 8; stderr %q", d.Exit, d.Stderr)
	}
	for _, want := range []string{"refused by the kubelet (needs get on nodes/stats)", "through the node proxy: forbidden", "not read (assumed)"} {
		if !strings.Contains(flat(d.Stdout), want) {
			t.Errorf("denied: the answer does not say %q:\n%s", want, d.Stdout)
		}
	}
	if _, _, codes := hits("denied"); !slices.Contains(codes, "/stats/summary=403") {
		t.Errorf("denied: the kubelet's answers %v, want its 403 on /stats/summary", codes)
	}

	// Only reads, by every user of the plugin.
	for _, user := range []string{evictNetnsReader, "proxier", "denied"} {
		bad, used, err := auditViolations(res.AuditLog, user)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("audit %s: %v", user, used)
		if len(used) == 0 || len(bad) > 0 {
			t.Errorf("audit %s: write requests %v (requests seen: %d)", user, bad, len(used))
		}
	}
}

func evictNetnsJSON(t *testing.T, name, stdout string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Errorf("%s: not JSON: %v\n%s", name, err, firstLines(stdout, 20))
		return nil
	}
	return m
}

// evictNetnsSame checks a live run's answer against the offline one (but
// for how the kubelet was read, which must be wantReads).
func evictNetnsSame(t *testing.T, res *evictNetnsResult, run string, off map[string]any, wantReads string) map[string]any {
	t.Helper()
	r := res.Runs[run]
	if r.Exit != 0 {
		t.Errorf("%s: exit %d, stderr %q\n%s", run, r.Exit, r.Stderr, firstLines(r.Stdout, 20))
		return nil
	}
	live := evictNetnsJSON(t, run, r.Stdout)
	if live == nil {
		return nil
	}
	ev, _ := live["eviction"].(map[string]any)
	if got := fmt.Sprint(ev["kubeletReads"]); got != wantReads {
		t.Errorf("%s: kubeletReads %s, want %s", run, got, wantReads)
	}
	liveEv, offEv := maps.Clone(ev), maps.Clone(off["eviction"].(map[string]any))
	delete(liveEv, "kubeletReads")
	delete(offEv, "kubeletReads")
	if fmt.Sprint(liveEv) != fmt.Sprint(offEv) {
		t.Errorf("%s: eviction live\n%v\noffline from the same files\n%v", run, liveEv, offEv)
	}
	for _, k := range []string{"victims", "certain"} {
		if fmt.Sprint(live[k]) != fmt.Sprint(off[k]) {
			t.Errorf("%s: %s live %v, offline %v", run, k, live[k], off[k])
		}
	}
	if v := fmt.Sprint(live["victims"]); v == "[]" || v == "<nil>" {
		t.Errorf("%s: no victims from a node under memory pressure", run)
	}
	return live
}
