package e2e

// The node-pressure eviction preview read live through the real API
// server's node proxy. The API server proxies only to global unicast node
// addresses (isProxyableHostname in pkg/registry/core/node/strategy.go), so
// a kubelet stand-in on 127.0.0.1 is refused. The test therefore creates a
// network namespace with a dummy interface holding 192.0.2.10
// (documentation range: nothing leaves the namespace) and runs, inside it,
// its own etcd and kube-apiserver, a fake kubelet on 192.0.2.10:10250 and
// the plugin. Network namespaces are per thread, so everything inside runs
// in one re-exec of this test binary under `ip netns exec` (see
// evictNetnsHelper), which writes the plugin's answers to a directory that
// the outer test checks.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
)

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

// evictNetnsResult is what the helper hands back to the outer test.
type evictNetnsResult struct {
	Proxy, Denied struct {
		Stdout, Stderr string
		Exit           int
	}
	KubeletHits []string // paths the fake kubelet served
	// Loopback is the API server's answer for a node at 127.0.0.1, the
	// reason for the namespace ("address not allowed").
	Loopback string
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

	// (a) with get on nodes/proxy: the kubelet's figures, read through the
	// proxy, give the same answer as the saved files, and a certain one.
	for _, want := range []string{"/stats/summary", "/configz"} {
		if !strings.Contains(strings.Join(res.KubeletHits, " "), want) {
			t.Errorf("the fake kubelet never served %s (served: %v)", want, res.KubeletHits)
		}
	}
	if res.Proxy.Exit != 0 {
		t.Fatalf("with nodes/proxy: exit %d, stderr %q\n%s", res.Proxy.Exit, res.Proxy.Stderr, res.Proxy.Stdout)
	}
	offline, err := runPlugin(ctx, env.pluginPath, "-f", filepath.Join(dir, "node.yaml"), "-f", filepath.Join(dir, "summary.json"),
		"-f", filepath.Join(dir, "configz.json"), "node/worker-1", "--now", evictNetnsNow, "-o", "json")
	if err != nil || offline.exitCode != 0 {
		t.Fatalf("offline: %v %s", err, offline)
	}
	var live, off map[string]any
	if err := json.Unmarshal([]byte(res.Proxy.Stdout), &live); err != nil {
		t.Fatalf("live JSON: %v\n%s", err, res.Proxy.Stdout)
	}
	if err := json.Unmarshal([]byte(offline.stdout), &off); err != nil {
		t.Fatalf("offline JSON: %v\n%s", err, offline.stdout)
	}
	for _, k := range []string{"eviction", "victims", "certain"} {
		if fmt.Sprint(live[k]) != fmt.Sprint(off[k]) {
			t.Errorf("%s: live through the node proxy\n%v\noffline from the same files\n%v", k, live[k], off[k])
		}
	}
	if live["eviction"] == nil {
		t.Errorf("the live answer has no eviction section: %s", res.Proxy.Stdout)
	}
	if live["certain"] != true {
		t.Errorf("the live answer from the kubelet's own figures is not certain: %v", live["certain"])
	}
	if v := fmt.Sprint(live["victims"]); v == "[]" || v == "<nil>" {
		t.Errorf("no victims from a node under memory pressure: %s", res.Proxy.Stdout)
	}

	// (b) without nodes/proxy: it says so, and --fail-if-uncertain stops.
	t.Logf("without nodes/proxy (exit %d):\n%s", res.Denied.Exit, firstLines(res.Denied.Stdout, 14))
	if res.Denied.Exit != 8 {
		t.Errorf("without nodes/proxy and --fail-if-uncertain: exit %d, want 8; stderr %q\n%s", res.Denied.Exit, res.Denied.Stderr, res.Denied.Stdout)
	}
	if !strings.Contains(res.Denied.Stdout+res.Denied.Stderr, "forbidden (needs get on nodes/proxy)") {
		t.Errorf("the answer without nodes/proxy does not say the proxy is forbidden:\n%s\n%s", res.Denied.Stdout, res.Denied.Stderr)
	}
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
	hits := make(chan string, 100)
	defer func() {
		for {
			select {
			case h := <-hits:
				res.KubeletHits = append(res.KubeletHits, h)
			default:
				return
			}
		}
	}()
	caFile, err := evictNetnsFakeKubelet(dir, hits)
	if err != nil {
		return fmt.Errorf("fake kubelet: %w", err)
	}

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
		evictNetnsProxyToken+",proxier,proxier-uid\n"+evictNetnsDeniedToken+",denied,denied-uid\n"), 0o600); err != nil {
		return err
	}
	certDir := filepath.Join(dir, "certs")
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
		"--kubelet-certificate-authority", caFile,
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

	run := func(user, token string, extra ...string) (*pluginRun, error) {
		kc, err := kubeconfig(user, token)
		if err != nil {
			return nil, err
		}
		args := append([]string{"node/worker-1", "--kubeconfig", kc, "--now", evictNetnsNow}, extra...)
		return runPlugin(ctx, os.Getenv(evictNetnsPluginEnv), args...)
	}
	p, err := run("proxier", evictNetnsProxyToken, "-o", "json")
	if err != nil {
		return err
	}
	res.Proxy.Stdout, res.Proxy.Stderr, res.Proxy.Exit = p.stdout, p.stderr, p.exitCode
	d, err := run("denied", evictNetnsDeniedToken, "--fail-if-uncertain")
	if err != nil {
		return err
	}
	res.Denied.Stdout, res.Denied.Stderr, res.Denied.Exit = d.stdout, d.stderr, d.exitCode
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

	for _, u := range []struct {
		user  string
		proxy bool
	}{{"proxier", true}, {"denied", false}} {
		rules := []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		}
		if u.proxy {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}})
		}
		name := "sp-evict-" + u.user
		if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u.user}},
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
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

// evictNetnsFakeKubelet serves /stats/summary and /configz over HTTPS on
// 192.0.2.10:10250 with a self-signed certificate for that address, whose
// path it returns for --kubelet-certificate-authority. Client certificates
// are not asked for.
func evictNetnsFakeKubelet(dir string, hits chan<- string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sp-evict-kubelet"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP(evictNetnsAddr)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	caFile := filepath.Join(dir, "kubelet-ca.crt")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(caFile, certPEM, 0o644); err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(evictNetnsAddr, strconv.Itoa(evictNetnsKubelet)))
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	for path, file := range map[string]string{"/stats/summary": "summary.json", "/configz": "configz.json"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			select {
			case hits <- r.URL.Path:
			default:
			}
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
	}}
	go func() {
		if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "fake kubelet:", err)
		}
	}()
	return caFile, nil
}
