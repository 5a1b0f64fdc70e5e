package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// errSlowPath says the streaming reader met a shape or an error it leaves to
// the general reader (kubectl's resource builder), which then gives the
// exact result or message. Files as kubectl prints them never take it.
var errSlowPath = errors.New("not for the streaming reader")

// streamRead reads r one object at a time: JSON values and the items of a
// List streamed with encoding/json, YAML documents and the items of a YAML
// List cut at their lines and converted one by one. Pods are decoded into
// typed objects and trimmed at once (see trimPod); every other kind goes
// through the same unstructured conversion as the general reader.
func streamRead(r io.Reader, defaultNamespace string) (*snapshot.Snapshot, error) {
	return streamReadPods(r, defaultNamespace, false)
}

// streamReadPods is streamRead keeping pods whole when whole is set (the
// node preview reads their resources, priority, volumes, annotations).
func streamReadPods(r io.Reader, defaultNamespace string, whole bool) (*snapshot.Snapshot, error) {
	st := &streamer{s: &snapshot.Snapshot{ClaimsKnown: true}, ns: defaultNamespace, trim: trimPod}
	if whole {
		st.trim = nil
	}
	return st.read(r)
}

// read streams r into st.s.
func (st *streamer) read(r io.Reader) (*snapshot.Snapshot, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4096)
	var err error
	if utilyaml.IsJSONBuffer(head) {
		err = st.jsonStream(br)
	} else {
		err = st.yamlStream(br)
	}
	if err == nil {
		err = st.flush()
	}
	if err != nil {
		return nil, err
	}
	return st.s, nil
}

type streamer struct {
	s     *snapshot.Snapshot
	ns    string
	batch []pending
	trim  func(*corev1.Pod) // nil: pods are kept whole
	// other, when set, takes every object that is not a pod instead of
	// the snapshot.
	other func(*unstructured.Unstructured) error
}

// jsonStream reads a sequence of top-level JSON objects. Its own scanner
// finds where each value ends (about four times cheaper than
// encoding/json's, which is the one part of reading that runs on a single
// core); it checks the punctuation between values, and every value is
// validated in full when it is decoded, so input that is not JSON still
// ends on the general reader.
func (st *streamer) jsonStream(r io.Reader) error {
	sc := &jsonScanner{r: bufio.NewReaderSize(r, 1<<16)}
	for {
		c, err := sc.next()
		if err == io.EOF {
			return nil
		}
		if err != nil || c != '{' {
			return errSlowPath
		}
		sc.skip()
		if err := st.jsonObject(sc); err != nil {
			return err
		}
	}
}

// jsonObject reads one top-level object whose '{' was consumed: a List's
// items are handled as they arrive, any other object is kept whole.
func (st *streamer) jsonObject(sc *jsonScanner) error {
	var fields bytes.Buffer // the object rebuilt, when it is not a List
	var kind string
	haveItems := false
	if c, err := sc.next(); err != nil {
		return errSlowPath
	} else if c == '}' {
		sc.skip()
		return st.push([]byte("{}"), false)
	}
	for {
		rawKey, err := sc.value()
		if err != nil || rawKey[0] != '"' || sc.expect(':') != nil {
			return errSlowPath
		}
		var k string
		if err := json.Unmarshal(rawKey, &k); err != nil {
			return errSlowPath
		}
		if k == "items" {
			if haveItems {
				return errSlowPath
			}
			haveItems = true
			if err := st.jsonItems(sc); err != nil {
				return err
			}
		} else if err := jsonField(sc, k, &fields, &kind); err != nil {
			return err
		}
		last, err := sc.separator('}')
		if err != nil {
			return err
		}
		if last {
			break
		}
	}
	if haveItems {
		// A List needs a kind of its own; its items were already read.
		if kind == "" {
			return errSlowPath
		}
		return nil
	}
	return st.push(append(append([]byte{'{'}, fields.Bytes()...), '}'), false)
}

// jsonItems hands a List's items on as they arrive.
func (st *streamer) jsonItems(sc *jsonScanner) error {
	if sc.expect('[') != nil {
		return errSlowPath
	}
	if c, err := sc.next(); err != nil || c == ']' {
		return errSlowPath // an empty list
	}
	for {
		raw, err := sc.value()
		if err != nil {
			return errSlowPath
		}
		if err := st.push(raw, false); err != nil {
			return err
		}
		if last, err := sc.separator(']'); err != nil || last {
			return err
		}
	}
}

// jsonField copies one field of an object that is not a List's items
// into fields, noting its kind (a List's own fields are not decoded).
func jsonField(sc *jsonScanner, k string, fields *bytes.Buffer, kind *string) error {
	raw, err := sc.value()
	if err != nil || !json.Valid(raw) {
		return errSlowPath
	}
	if k == "kind" {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, kind); err != nil {
			return errSlowPath
		}
	}
	if fields.Len() > 0 {
		fields.WriteByte(',')
	}
	name, _ := json.Marshal(k)
	fields.Write(name)
	fields.WriteByte(':')
	fields.Write(raw)
	return nil
}

// separator reads the ',' between values or the closing byte: last is
// true at the close; anything else is errSlowPath.
func (sc *jsonScanner) separator(closing byte) (last bool, err error) {
	c, err := sc.next()
	if err != nil {
		return false, errSlowPath
	}
	sc.skip()
	switch c {
	case closing:
		return true, nil
	case ',':
		return false, nil
	}
	return false, errSlowPath
}

// jsonScanner cuts JSON text into values without decoding them.
type jsonScanner struct {
	r *bufio.Reader
}

// next skips white space and peeks at the next byte.
func (sc *jsonScanner) next() (byte, error) {
	for {
		c, err := sc.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		_ = sc.r.UnreadByte() // the byte just read: cannot fail
		return c, nil
	}
}

// skip consumes the byte next peeked at (buffered: cannot fail).
func (sc *jsonScanner) skip() { _, _ = sc.r.Discard(1) }

// expect consumes white space and the byte c.
func (sc *jsonScanner) expect(c byte) error {
	if got, err := sc.next(); err != nil || got != c {
		return errSlowPath
	}
	sc.skip()
	return nil
}

// value returns a copy of the next value's text: a string, an object or
// an array up to its matching bracket (any kind: a mismatch fails
// validation later), or a literal up to the next delimiter.
func (sc *jsonScanner) value() ([]byte, error) {
	first, err := sc.next()
	if err != nil {
		return nil, err
	}
	var out []byte
	depth, inString, escaped := 0, false, false
	literal := first != '"' && first != '{' && first != '['
	for {
		buf, _ := sc.r.Peek(sc.r.Buffered())
		if len(buf) == 0 {
			if _, err := sc.r.Peek(1); err != nil {
				if literal && err == io.EOF && len(out) > 0 {
					return out, nil
				}
				return nil, errSlowPath
			}
			continue
		}
		for i, c := range buf {
			switch {
			case literal:
				switch c {
				case ',', '}', ']', ' ', '\t', '\n', '\r', '"', '{', '[', ':':
					if i == 0 && len(out) == 0 {
						return nil, errSlowPath
					}
					out = append(out, buf[:i]...)
					_, _ = sc.r.Discard(i) // buffered: cannot fail
					return out, nil
				}
				continue
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
				if inString || depth > 0 {
					continue
				}
			case c == '"':
				inString = true
				continue
			case c == '{' || c == '[':
				depth++
				continue
			case c == '}' || c == ']':
				depth--
				if depth > 0 {
					continue
				}
				if depth < 0 {
					return nil, errSlowPath
				}
			default:
				continue
			}
			// The value ends at i.
			out = append(out, buf[:i+1]...)
			_, _ = sc.r.Discard(i + 1)
			return out, nil
		}
		out = append(out, buf...)
		_, _ = sc.r.Discard(len(buf))
	}
}

// envelope is what is read of every object first, in the same pass as a
// pod's fields.
type envelope struct {
	APIVersion *string          `json:"apiVersion"`
	Kind       *string          `json:"kind"`
	Items      presence         `json:"items"`
	Metadata   podMeta          `json:"metadata"`
	Spec       corev1.PodSpec   `json:"spec"`
	Status     corev1.PodStatus `json:"status"`
}

// podMeta is ObjectMeta with only the managedFields entries that own the
// deletion-cost annotation: the rest is often the largest part of a pod and
// nothing reads it.
type podMeta struct {
	metav1.ObjectMeta `json:",inline"`
	ManagedFields     costEntries `json:"managedFields"`
}

// costEntries decodes managedFields only when they mention the
// deletion-cost annotation, and keeps just the entries that own it.
type costEntries []metav1.ManagedFieldsEntry

func (c *costEntries) UnmarshalJSON(raw []byte) error {
	if !bytes.Contains(raw, []byte(costField)) {
		return nil
	}
	var all []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(raw, &all); err != nil {
		return err
	}
	*c = costManagers(all)
	return nil
}

// presence records that a field exists.
type presence bool

func (p *presence) UnmarshalJSON([]byte) error { *p = true; return nil }

// batchSize objects are decoded at a time, in parallel: decoding, and for
// YAML the conversion to JSON, are most of the reader's work.
const batchSize = 256

// push queues one object, JSON or (fromYAML) one YAML item.
func (st *streamer) push(raw []byte, fromYAML bool) error {
	st.batch = append(st.batch, pending{raw: raw, yaml: fromYAML, trim: st.trim})
	if len(st.batch) == batchSize {
		return st.flush()
	}
	return nil
}

type pending struct {
	raw  []byte
	yaml bool
	trim func(*corev1.Pod)
}

// decoded is one object: a trimmed pod, or any other kind unstructured.
type decoded struct {
	pod *corev1.Pod
	u   *unstructured.Unstructured
	err error
}

// flush decodes the queued objects on every CPU and adds them in order.
func (st *streamer) flush() error {
	out := make([]decoded, len(st.batch))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(st.batch)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(out); i = int(next.Add(1) - 1) {
				out[i] = decodeObject(st.batch[i], st.ns)
			}
		})
	}
	wg.Wait()
	st.batch = st.batch[:0]
	for _, o := range out {
		if o.err != nil {
			return o.err
		}
		switch {
		case o.pod != nil:
			st.s.Pods = append(st.s.Pods, o.pod)
		case st.other != nil:
			if err := st.other(o.u); err != nil {
				return err
			}
		default:
			if err := add(st.s, o.u); err != nil {
				return errSlowPath
			}
		}
	}
	return nil
}

// decodeObject decodes one object; it reads nothing shared.
func decodeObject(in pending, ns string) decoded {
	raw := in.raw
	if in.yaml {
		sc := yamlScratchPool.Get().(*yamlScratch)
		defer yamlScratchPool.Put(sc) // decoding copies what it keeps
		if j, ok := yamlItemToJSONIn(raw, sc); ok {
			raw = j
		} else if j, err := yaml.YAMLToJSON(raw); err == nil {
			raw = j
		} else {
			return decoded{err: errSlowPath}
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return decoded{err: errSlowPath}
	}
	var env envelope
	podErr := kjson.UnmarshalCaseSensitivePreserveInts(raw, &env)
	if env.Kind == nil || *env.Kind == "" || env.APIVersion == nil || *env.APIVersion == "" || env.Items {
		// Kinds inferred from a List, nested Lists, missing kinds: the
		// general reader knows these rules.
		return decoded{err: errSlowPath}
	}
	gv, err := schema.ParseGroupVersion(*env.APIVersion)
	if err == nil && gv.Group == "" && *env.Kind == "Pod" {
		if podErr != nil {
			return decoded{err: errSlowPath} // the general reader words the error
		}
		p := &corev1.Pod{Spec: env.Spec, Status: env.Status}
		p.ObjectMeta = env.Metadata.ObjectMeta
		p.ManagedFields = env.Metadata.ManagedFields
		p.APIVersion, p.Kind = *env.APIVersion, *env.Kind
		if p.Namespace == "" {
			p.Namespace = ns
		}
		if in.trim != nil {
			in.trim(p)
		}
		return decoded{pod: p}
	}
	// Few objects: the general reader's own conversion, for identical results.
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
	if err != nil {
		return decoded{err: errSlowPath}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return decoded{err: errSlowPath}
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(ns)
	}
	return decoded{u: u}
}

// yamlStream reads YAML documents. A document that is a block mapping with
// an `items:` block sequence (a List as kubectl prints it) is cut into its
// items at their lines, and each item converted on its own; any other
// document is converted whole.
func (st *streamer) yamlStream(br *bufio.Reader) error {
	var doc yamlDoc
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return errSlowPath
		}
		if bytes.HasPrefix(line, []byte("---")) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) > 0 && rest[0] != '#' {
				return errSlowPath
			}
			if e := st.endDoc(&doc); e != nil {
				return e
			}
			doc = yamlDoc{}
		} else if e := st.yamlLine(&doc, line); e != nil {
			return e
		}
		if err == io.EOF {
			return st.endDoc(&doc)
		}
	}
}

// yamlDoc is the state of the document being read.
type yamlDoc struct {
	head       []byte // every line outside the items
	item       []byte // the item being read
	inItems    bool   // inside the `items:` block sequence
	hadItems   bool
	items      int
	dashIndent int // the items' dash column, -1 until the first item
	itemCol    int // where the item's content starts after its dash, -1 if on the next line
	content    bool
	lastItem   int // the length of the item before
}

func (st *streamer) yamlLine(d *yamlDoc, line []byte) error {
	body := bytes.TrimRight(line, "\r\n")
	trimmed := bytes.TrimLeft(body, " ")
	indent := len(body) - len(trimmed)
	if len(trimmed) == 0 || trimmed[0] == '#' {
		// Blank lines and comments stay with what they follow (a blank
		// line can belong to a block scalar).
		if d.inItems && d.item != nil {
			d.item = append(d.item, line...)
		} else {
			d.head = append(d.head, line...)
		}
		return nil
	}
	if trimmed[0] == '\t' {
		return errSlowPath
	}
	d.content = true
	if d.inItems {
		if d.dashIndent < 0 && isDash(trimmed) {
			d.dashIndent = indent
		}
		switch {
		case d.dashIndent >= 0 && indent == d.dashIndent && isDash(trimmed):
			if err := st.endItem(d); err != nil {
				return err
			}
			// "- key: v" becomes "  key: v": the item's mapping, indented.
			// Sized like the item before, so that it seldom grows.
			d.item = append(make([]byte, 0, max(512, d.lastItem+d.lastItem/8)), line...)
			d.item[indent] = ' '
			d.itemCol = -1
			if rest := bytes.TrimLeft(trimmed[1:], " "); len(rest) > 0 {
				d.itemCol = len(body) - len(rest)
			}
			return nil
		case d.dashIndent >= 0 && indent > d.dashIndent && d.item != nil:
			if indent < d.itemCol {
				// Left of the item's content: not valid YAML, though the
				// item alone might read; the general reader words the error.
				return errSlowPath
			}
			d.item = append(d.item, line...)
			return nil
		case indent > 0:
			return errSlowPath
		}
		if err := st.endItem(d); err != nil {
			return err
		}
		d.inItems = false
	}
	if indent > 0 || isDash(trimmed) {
		// Inside a top-level key's value.
		if len(d.head) == 0 {
			return errSlowPath // not a block mapping
		}
		d.head = append(d.head, line...)
		return nil
	}
	key, ok := topKey(body)
	if !ok {
		return errSlowPath
	}
	if key == "items" {
		rest := bytes.TrimSpace(body[len("items:"):])
		if d.hadItems || (len(rest) > 0 && rest[0] != '#') {
			return errSlowPath
		}
		d.inItems, d.hadItems, d.dashIndent = true, true, -1
		return nil
	}
	d.head = append(d.head, line...)
	return nil
}

func isDash(t []byte) bool {
	return len(t) == 1 && t[0] == '-' || len(t) > 1 && t[0] == '-' && t[1] == ' '
}

// topKey accepts a plain top-level key: letters, digits, '_', '-', '.'
// followed by ':' and a space or the end of the line.
func topKey(line []byte) (string, bool) {
	for i, c := range line {
		switch {
		case c == ':' && i > 0:
			if i+1 == len(line) || line[i+1] == ' ' {
				return string(line[:i]), true
			}
			return "", false
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-' && i > 0:
		default:
			return "", false
		}
	}
	return "", false
}

func (st *streamer) endItem(d *yamlDoc) error {
	if d.item == nil {
		return nil
	}
	item := d.item
	d.item = nil
	d.lastItem = len(item)
	d.items++
	return st.push(item, true)
}

func (st *streamer) endDoc(d *yamlDoc) error {
	if err := st.endItem(d); err != nil {
		return err
	}
	if !d.content {
		return nil
	}
	j, err := yaml.YAMLToJSON(d.head)
	if err != nil {
		return errSlowPath
	}
	j = bytes.TrimSpace(j)
	if !d.hadItems {
		if len(j) == 0 || bytes.Equal(j, []byte("null")) {
			return nil
		}
		return st.jsonStream(bytes.NewReader(j))
	}
	if d.items == 0 {
		return errSlowPath // `items:` without a block sequence
	}
	// A List: its own kind must be set; the items are already read.
	var env struct {
		Kind string `json:"kind"`
	}
	if kjson.UnmarshalCaseSensitivePreserveInts(j, &env) != nil || env.Kind == "" {
		return errSlowPath
	}
	return nil
}
